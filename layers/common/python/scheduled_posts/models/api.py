"""Request and response shapes of the scheduling API (``docs/api.md``), as pydantic v2 models.

Requests are validated field by field (``StrictStr``/``StrictInt``: no silent coercion of
``"5"`` into ``5``); a failure is a 422 problem with per-field ``errors``. Rules that need the
clock, the settings or the database (``publish_at`` not in the past, channels of the caller)
are checked by the logic, which raises :class:`scheduled_posts.errors.ValidationFailedError`
with the same ``errors`` shape.

Response models mirror the JSON shapes of ``docs/api.md`` exactly; instants are
``YYYY-MM-DDTHH:MM:SS.mmmZ`` strings (UTC, milliseconds).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)

from scheduled_posts.clock import format_instant
from scheduled_posts.models.link_card import LinkCardIn, LinkCardOut
from scheduled_posts.models.post import Attempt, Delivery, Post, PostStatus
from scheduled_posts.models.post_fields import (  # noqa: F401  (re-exported: their first home)
    ID_PATTERN,
    MAX_CHANNELS_PER_POST,
    MAX_CONTENT_CODE_POINTS,
    MAX_MEDIA_IDS,
    PUBLISH_AT_WORDS,
    ChannelIds,
    Content,
    CreatePublishAt,
    Id,
    Language,
    MediaId,
    MediaIds,
    PublishAt,
    _clean_text,
    _distinct,
    _not_blank,
    _not_null,
    is_blank,
    parse_rfc3339,
)
from scheduled_posts.models.receipt import Receipt
from scheduled_posts.models.thread import (
    CommentOutcome,
    FirstComment,
    Part,
    Parts,
    PatchParts,
    PublishedPart,
)
from scheduled_posts.models.variants import (
    Effective,
    NetworkOptions,
    Variant,
    Variants,
    effective_for,
)

_LINK_CARD = (
    "The Bluesky link card: absent, fetched from the first URL of a Bluesky channel's text"
    " without media (kept on an edit while that URL stays); given, this card; null, no card"
)


class PostCreate(BaseModel):
    """``POST /v1/scheduled-posts`` body."""

    model_config = ConfigDict(extra="forbid")

    content: Content
    media_ids: MediaIds = Field(default_factory=list)
    #: Absent: the post is a draft (decision "Drafts"); an explicit null is refused.
    publish_at: Annotated[
        CreatePublishAt | None,
        BeforeValidator(_not_null),
        Field(description="Left out: the post is a draft (never sent until given a publish_at)"),
    ] = None
    channel_ids: ChannelIds
    language: Language | None = None
    variants: Variants = Field(default_factory=dict)
    link_card: Annotated[LinkCardIn | None, Field(description=_LINK_CARD)] = None
    parts: Parts | None = None
    first_comment: FirstComment | None = Field(
        None, description="A reply by the same account to part 1, delay_seconds after the post"
    )


NotNull = BeforeValidator(_not_null)


class PostPatch(BaseModel):
    """``PATCH /v1/scheduled-posts/{schedule_id}`` body: at least one field, none ``null`` (a
    ``null`` is a per-field error at ``["body", <field>]``)."""

    model_config = ConfigDict(extra="forbid")

    content: Annotated[Content | None, NotNull] = None
    media_ids: Annotated[MediaIds | None, NotNull] = None
    publish_at: Annotated[PublishAt | None, NotNull] = None
    channel_ids: Annotated[ChannelIds | None, NotNull] = None
    language: Annotated[Language | None, NotNull] = None
    variants: Annotated[
        Variants | None,
        NotNull,
        Field(description="Replaces every variant ({} removes them all)"),
    ] = None
    link_card: Annotated[LinkCardIn | None, Field(description=_LINK_CARD)] = None
    parts: Annotated[
        PatchParts | None,
        NotNull,
        Field(description="Replaces the thread's replies ([] makes it a single post)"),
    ] = None
    first_comment: Annotated[
        FirstComment | None, Field(description="Replaces the first comment (null removes it)")
    ] = None

    @model_validator(mode="after")
    def _at_least_one(self) -> PostPatch:
        if not self.model_fields_set:
            raise ValueError(
                "give at least one of content, media_ids, publish_at, channel_ids, language,"
                " variants, link_card, parts, first_comment"
            )
        return self


class DeliveryOut(BaseModel):
    """One channel's delivery state; ``attempts`` is a count. ``next_attempt_at`` is when a
    waiting delivery (a retry backoff, a destination's ``Retry-After``, a rate-limit slot) is
    sent next; ``null`` when it is not waiting."""

    channel_id: str
    status: str
    attempts: int
    remote_id: str | None
    remote_url: str | None = None
    published_at: str | None
    last_error: str | None
    next_attempt_at: str | None = None
    receipt: Receipt | None = Field(
        None, description="What the network returned when it published (docs/api.md, Receipts)"
    )
    verified_at: str | None = Field(
        None, description="When the network last showed the published post (docs/api.md)"
    )
    verification: Literal["missing", "changed"] | None = Field(
        None, description="The open finding of the last read-back on the network"
    )
    planned_remote_url: str | None = Field(
        None,
        description="The public page this delivery will have, known before publishing "
        "(Bluesky; docs/api.md, Permalinks); null once final or where the network chooses it",
    )
    content: str | None = Field(None, description="What this channel publishes (its variant's)")
    media_ids: list[str] = Field(default_factory=list, description="This channel's media")
    language: str | None = None
    options: NetworkOptions = Field(
        default_factory=NetworkOptions, description="This channel's network options"
    )
    #: This channel's thread replies after ``content``; a thread's ``"k/n"`` parts published
    #: and each published part (index 0 is part 1); the first comment's own state.
    parts: list[Part] = Field(default_factory=list, description="This channel's replies")
    parts_published: str | None = Field(None, description='A thread: "k/n" parts published')
    published_parts: list[PublishedPart] = Field(default_factory=list)
    first_comment: CommentOutcome | None = None

    @classmethod
    def of(
        cls, delivery: Delivery, effective: Effective | None = None, planned: str | None = None
    ) -> DeliveryOut:
        shown: dict[str, Any] = {}
        if effective is not None:
            shown = {
                "content": effective.content,
                "media_ids": list(effective.media_ids),
                "language": effective.language,
                "options": effective.options,
                "parts": list(effective.parts),
            }
        return cls(
            **shown,
            channel_id=delivery.channel_id,
            status=delivery.status.value,
            attempts=delivery.attempts,
            remote_id=delivery.remote_id,
            remote_url=delivery.remote_url,
            receipt=delivery.receipt,
            parts_published=delivery.parts_published,
            published_parts=list(delivery.parts),
            first_comment=delivery.comment,
            planned_remote_url=planned,
            verified_at=_opt(delivery.verified_at),
            verification=delivery.verification,
            published_at=_opt(delivery.published_at),
            last_error=delivery.last_error,
            next_attempt_at=_opt(delivery.next_attempt_at)
            if delivery.status.value in ("pending", "retry_scheduled")
            else None,
        )


def _opt(value: datetime | None) -> str | None:
    return format_instant(value) if value is not None else None


class PostOut(BaseModel):
    """A post as every post endpoint returns it."""

    schedule_id: str
    status: str
    content: str
    media_ids: list[str]
    publish_at: str | None = Field(description="null for a draft")
    channel_ids: list[str]
    deliveries: list[DeliveryOut] = Field(
        description="One per channel, with what it publishes (its effective content)"
    )
    language: str | None = None
    variants: dict[str, Variant] = Field(default_factory=dict)
    link_card: LinkCardOut | None = Field(
        default=None, description="The Bluesky link card, frozen (app.bsky.embed.external)"
    )
    parts: list[Part] = Field(default_factory=list, description="A thread's replies")
    first_comment: FirstComment | None = None
    warnings: list[dict[str, str]] = Field(
        default_factory=list,
        description='What this create or edit could not do: {"type", "url", "detail"}',
    )
    version: int
    created_at: str
    updated_at: str
    published_at: str | None
    publish_lag_seconds: float | None
    series_id: str | None = Field(description="The recurring schedule of an occurrence")
    occurrence_at: str | None = Field(description="The occurrence's instant in its series")
    detached: bool = Field(description="An occurrence edited or cancelled by hand")
    queue_slot: str | None = Field(
        default=None,
        description='The posting-queue slot the post holds ("publish_at": "next_free_slot")',
    )

    @classmethod
    def of(cls, post: Post, planned: Mapping[str, str] | None = None) -> PostOut:
        """``post`` as the API shows it; ``planned``: ``{channel_id: planned_remote_url}``
        (``logic/permalinks.py``; none given: no planned URLs)."""
        deliveries = [
            DeliveryOut.of(
                post.deliveries.get(cid) or Delivery(channel_id=cid),
                effective_for(post, cid),
                (planned or {}).get(cid),
            )
            for cid in post.channel_ids
        ]
        return cls(
            schedule_id=post.schedule_id,
            status=post.status.value,
            content=post.content,
            media_ids=list(post.media_ids),
            publish_at=None if post.status == PostStatus.DRAFT else format_instant(post.publish_at),
            channel_ids=list(post.channel_ids),
            deliveries=deliveries,
            language=post.language,
            variants=dict(post.variants),
            link_card=LinkCardOut.of(post.link_card),
            parts=list(post.parts),
            first_comment=post.first_comment,
            warnings=list(post.warnings),
            version=post.version,
            created_at=format_instant(post.created_at),
            updated_at=format_instant(post.updated_at),
            published_at=_opt(post.published_at),
            publish_lag_seconds=post.publish_lag_seconds,
            series_id=post.series_id,
            occurrence_at=_opt(post.occurrence_at),
            detached=post.detached,
            queue_slot=_opt(post.queue_slot),
        )


def etag_of(representation: dict[str, Any]) -> str:
    """The ``ETag`` of a post's JSON representation (``PostOut`` as JSON), quoted (RFC 9110
    section 8.8.3): ``"<version>"`` while the post is ``scheduled`` or a ``draft`` (every change
    of either is an edit, which raises ``version``), else ``"<version>-<16 hex>"`` with a
    SHA-256 of the representation, so it changes whenever the answer does (decision "ETag")."""
    version = representation["version"]
    if representation.get("status") in ("scheduled", "draft"):
        return f'"{version}"'
    canonical = json.dumps(representation, sort_keys=True, ensure_ascii=False, default=str)
    digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]
    return f'"{version}-{digest}"'


def etag_for(post: Post) -> str:
    """:func:`etag_of` the post's representation."""
    return etag_of(PostOut.of(post).model_dump(mode="json"))


class PostPage(BaseModel):
    """``GET /v1/scheduled-posts`` body. Only ``next_cursor: null`` ends the list."""

    items: list[PostOut]
    next_cursor: str | None


class AttemptOut(BaseModel):
    """One delivery try: channel, attempt number, started/finished, outcome, HTTP status, error."""

    channel_id: str
    attempt: int
    started_at: str
    finished_at: str | None
    outcome: str
    http_status: int | None
    error: str | None
    remote_id: str | None = None
    remote_url: str | None = None

    @classmethod
    def of(cls, attempt: Attempt) -> AttemptOut:
        return cls(
            channel_id=attempt.channel_id,
            attempt=attempt.attempt,
            started_at=format_instant(attempt.started_at),
            finished_at=_opt(attempt.finished_at),
            outcome=attempt.outcome,
            http_status=attempt.http_status,
            error=attempt.error,
            remote_id=attempt.remote_id,
            remote_url=attempt.remote_url,
        )


class AttemptList(BaseModel):
    """``GET /v1/scheduled-posts/{schedule_id}/attempts`` body, in start order."""

    items: list[AttemptOut]


class ExportPost(PostOut):
    """A post in the account export, with its delivery attempts."""

    attempts: list[AttemptOut]


class ErasureStatus(BaseModel):
    """``DELETE /v1/me`` (202) and ``GET /v1/me/erasure`` body."""

    status: Literal["pending", "done"]


class GatewayMessage(BaseModel):
    """What API Gateway itself answers before the Lambda runs (its JWT authorizer's 401, its
    throttling 429): ``{"message": "Unauthorized"}``. Not problem+json."""

    message: str


class EventEntry(BaseModel):
    """One outcome event (``docs/events.md``: its schema by ``event["type"]``) and the id of
    the committed change it came from (``trace_id``: the posts table's stream record id, also
    in the relay's logs)."""

    event: dict[str, Any]
    trace_id: str


class EventPage(BaseModel):
    """``GET /v1/events`` body: the caller's events, oldest first. ``next_cursor`` resumes after
    the last item (poll with it for newer events); it is the given cursor when there are none."""

    items: list[EventEntry]
    next_cursor: str | None


class EventTrail(BaseModel):
    """``GET /v1/scheduled-posts/{schedule_id}/events`` body: the post's events in commit order
    (scheduled -> claimed -> delivered -> published, ...)."""

    items: list[EventEntry]


class Problem(BaseModel):
    """An RFC 9457 problem details body (``application/problem+json``)."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    errors: list[dict[str, Any]] | None = None
