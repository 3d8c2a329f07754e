"""Request and response shapes of the scheduling API (issue 2), as pydantic v2 models.

Requests are validated field by field (``StrictStr``/``StrictInt``: no silent coercion of
``"5"`` into ``5``); a failure is a 422 problem with per-field ``errors``. Rules that need the
clock, the settings or the database (``publish_at`` not in the past, channels of the caller)
are checked by the logic, which raises :class:`scheduled_posts.errors.ValidationFailedError`
with the same ``errors`` shape.

Response models mirror the JSON shapes of issue 2 exactly; instants are
``YYYY-MM-DDTHH:MM:SS.mmmZ`` strings (UTC, milliseconds).
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    StrictBool,
    StrictInt,
    StrictStr,
    StringConstraints,
    model_validator,
)

from scheduled_posts.clock import format_instant, parse_instant
from scheduled_posts.models.channel_fields import OriginUrl, PlatformName
from scheduled_posts.models.network import ChannelLimits
from scheduled_posts.models.post import Attempt, Channel, Delivery, Post
from scheduled_posts.platforms.registry import channel_limits, spec_of

#: Longest ``content``, in Unicode code points (issue 2).
MAX_CONTENT_CODE_POINTS = 5000
#: Most ``media_ids`` per post (issue 2).
MAX_MEDIA_IDS = 10
#: Most ``channel_ids`` per post (issue 2).
MAX_CHANNELS_PER_POST = 10
#: Ids the service generates are UUIDs; clients may only send ids of this shape.
ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"


#: C0 and C1 control characters and DEL, except tab, line feed and carriage return (issue 17).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
#: Characters that render as nothing although Unicode does not call them white space: Hangul
#: fillers and the braille blank, abused to post "empty" text, and U+FFFC OBJECT REPLACEMENT
#: CHARACTER (a placeholder for an embedded object the text does not carry).
_INVISIBLE_EXTRA = frozenset("\u115f\u1160\u2800\u3164\uffa0\ufffc")
#: General categories that show nothing on their own (Unicode 15, section 4.5): format
#: characters (Cf: zero-width spaces and joiners, BOM, soft hyphen, bidi marks, tags) and marks
#: (Mn, Mc, Me: combining accents, variation selectors U+FE00-FE0F and U+E0100-E01EF, the
#: combining grapheme joiner), which only modify a base character; with no visible base
#: character they draw nothing but perhaps a dotted circle.
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Mn", "Mc", "Me"})


def _clean_text(value: str) -> str:
    """Refuse strings DynamoDB or a receiver could choke on: control characters (C0 and C1,
    DEL; tab, LF and CR are allowed) and lone surrogates."""
    match = _CONTROL.search(value)
    if match is not None:
        code = ord(match.group())
        name = "NUL" if code == 0 else f"U+{code:04X}"
        raise ValueError(
            f"must not contain control characters ({name}); only tab, line feed and carriage "
            "return are allowed"
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("must be valid Unicode (no lone surrogates)") from exc
    return value


def is_blank(value: str) -> bool:
    """Whether ``value`` shows nothing: only white space, format characters (Cf), marks with no
    base character to modify (Mn, Mc, Me, variation selectors among them), Hangul/braille
    fillers or U+FFFC. ``"e\u0301"`` (e with a combining accent) is not blank."""
    return all(
        ch.isspace() or ch in _INVISIBLE_EXTRA or unicodedata.category(ch) in _INVISIBLE_CATEGORIES
        for ch in value
    )


def _content_rule(value: str) -> str:
    _clean_text(value)
    value = value.replace("\r\n", "\n")
    if is_blank(value):
        raise ValueError("must not be blank")
    if len(value) > MAX_CONTENT_CODE_POINTS:
        raise ValueError(f"must be at most {MAX_CONTENT_CODE_POINTS} characters (code points)")
    return value


def _not_blank(value: str) -> str:
    _clean_text(value)
    if is_blank(value):
        raise ValueError("must not be blank")
    return value


def _not_null(value: Any) -> Any:
    """A field that may be left out but not sent as ``null`` (issue 17: the error names it)."""
    if value is None:
        raise ValueError("must not be null; leave the field out to keep its value")
    return value


def parse_rfc3339(value: str) -> datetime:
    """The exact RFC 3339 text (ASCII, nothing around it) -> aware UTC; see :func:`parse_instant`.

    Raises
    ------
    ValueError
        Like :func:`parse_instant`.
    """
    return parse_instant(value)


def _parse_publish_at(value: Any) -> datetime:
    """RFC 3339 with an explicit offset -> aware UTC, rounded up to the millisecond."""
    if not isinstance(value, str):
        raise ValueError("must be an RFC 3339 date-time string with an offset")
    if len(value) > 64:
        raise ValueError("is too long for an RFC 3339 date-time")
    try:
        return parse_rfc3339(value)
    except OverflowError as exc:  # an offset that moves the instant out of range
        raise ValueError("is out of range") from exc


def _distinct(values: list[str]) -> list[str]:
    if len(set(values)) != len(values):
        raise ValueError("must not contain duplicates")
    return values


Id = Annotated[StrictStr, StringConstraints(pattern=ID_PATTERN)]
Content = Annotated[
    StrictStr,
    Field(
        min_length=1,
        description="1 to 5,000 Unicode code points, not blank (invisible characters alone are "
        "blank); no control characters but tab, LF and CR; CRLF is stored as LF",
    ),
    AfterValidator(_content_rule),
]
MediaId = Annotated[StrictStr, Field(min_length=1, max_length=256), AfterValidator(_clean_text)]
MediaIds = Annotated[list[MediaId], Field(max_length=MAX_MEDIA_IDS)]
ChannelIds = Annotated[
    list[Id],
    Field(min_length=1, max_length=MAX_CHANNELS_PER_POST),
    AfterValidator(_distinct),
]
Language = Annotated[
    StrictStr,
    StringConstraints(pattern=r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,4}$", max_length=35),
    Field(description="BCP 47 language tag of the content (e.g. en, pt-BR): Bluesky langs"),
]
PublishAt = Annotated[
    datetime,
    BeforeValidator(_parse_publish_at),
    Field(
        description="RFC 3339 date-time with an explicit offset (Z or +hh:mm); stored in UTC, "
        "rounded up to the millisecond"
    ),
]
#: The words a create's ``publish_at`` takes besides an instant: the current instant, or the
#: earliest free slot of the post's channels' posting schedules (``logic/posting_queue.py``).
PUBLISH_AT_WORDS = ("now", "next_free_slot")


def _publish_at_or_word(value: Any) -> Any:
    return value if value in PUBLISH_AT_WORDS else _parse_publish_at(value)


CreatePublishAt = Annotated[
    datetime | Literal["now", "next_free_slot"],
    BeforeValidator(_publish_at_or_word),
    Field(
        description="RFC 3339 date-time with an explicit offset (Z or +hh:mm), stored in UTC "
        'and rounded up to the millisecond; or "now" (this instant, through the same path), or '
        '"next_free_slot" (the earliest slot free in every channel\'s posting schedule)'
    ),
]


ChannelName = Annotated[StrictStr, Field(min_length=1, max_length=100), AfterValidator(_not_blank)]
HttpUrl = Annotated[StrictStr, Field(min_length=1, max_length=2048)]
#: A credential: a :class:`SecretStr`, so it never shows in a repr, a log or an error.
Credential = Annotated[
    SecretStr,
    Field(min_length=1, max_length=4096, description="Write-only: never shown again"),
]
Handle = Annotated[
    StrictStr,
    Field(min_length=3, max_length=253, description="A Bluesky handle, e.g. alice.bsky.social"),
    StringConstraints(pattern=r"^@?[A-Za-z0-9.-]+$"),
]


def _check_platform_fields(
    platform: str, given: set[str], *, require: bool
) -> list[tuple[str, str]]:
    spec = spec_of(platform)
    takes = spec.required_fields + spec.optional_fields
    problems = [(f, f"is not a field of a {platform} channel") for f in sorted(given - set(takes))]
    if require:
        problems += [(f, "Field required") for f in spec.required_fields if f not in given]
    return problems


class ChannelCreate(BaseModel):
    """``POST /v1/channels`` body. ``webhook``: ``url``. ``mastodon``: ``instance_url`` and
    ``access_token`` (``write:statuses``). ``bluesky``: ``handle``, ``app_password`` and
    ``service_url`` (default ``https://bsky.social``). Credentials are write-only."""

    model_config = ConfigDict(extra="forbid")

    platform: PlatformName
    name: ChannelName
    url: HttpUrl | None = None
    rate_limit_per_minute: Annotated[StrictInt, Field(ge=1, le=100_000)] | None = None
    instance_url: OriginUrl | None = None
    access_token: Credential | None = None
    service_url: OriginUrl | None = None
    handle: Handle | None = None
    app_password: Credential | None = None

    @model_validator(mode="after")
    def _fields_of_the_platform(self) -> ChannelCreate:
        broken = _check_platform_fields(self.platform, set(self.credential_values()), require=True)
        if broken:
            raise ValueError("; ".join(f"{field} {msg.lower()}" for field, msg in broken))
        return self

    def credential_values(self) -> dict[str, Any]:
        """The platform fields this body sets (``url`` and the credentials, as ``SecretStr``)."""
        return {f: getattr(self, f) for f in CREDENTIAL_FIELDS if getattr(self, f) is not None}


class ChannelPatch(BaseModel):
    """``PATCH /v1/channels/{id}`` body: a new ``name`` and/or new credentials (checked with
    the network again; a webhook's ``url`` too). Credentials are replaced as a whole: a
    Mastodon channel takes ``access_token`` (with ``instance_url`` optional), a Bluesky channel
    ``app_password`` (with ``handle`` and ``service_url`` optional); credentials of another
    account need ``switch_account: true``."""

    model_config = ConfigDict(extra="forbid")

    name: ChannelName | None = None
    url: HttpUrl | None = None
    rate_limit_per_minute: Annotated[StrictInt, Field(ge=1, le=100_000)] | None = None
    instance_url: OriginUrl | None = None
    access_token: Credential | None = None
    service_url: OriginUrl | None = None
    handle: Handle | None = None
    app_password: Credential | None = None
    switch_account: StrictBool = Field(
        False,
        description="New credentials of another network account than the channel's (another "
        "Mastodon account id or instance, another Bluesky DID) are a 422 unless this is true: "
        "then the channel, and its pending posts, move to that account",
    )

    @model_validator(mode="after")
    def _something(self) -> ChannelPatch:
        if not self.model_fields_set:
            raise ValueError("give at least one field to change")
        return self

    def credential_values(self) -> dict[str, Any]:
        """The platform fields this patch sets (``url`` and the credentials, as ``SecretStr``)."""
        return {f: getattr(self, f) for f in CREDENTIAL_FIELDS if getattr(self, f) is not None}


#: The fields of a channel body that belong to a platform (``url`` and the credentials): every
#: field but ``platform``, ``name`` and ``rate_limit_per_minute``. A platform's spec names which
#: of them it takes.
CREDENTIAL_FIELDS: tuple[str, ...] = tuple(
    f for f in ChannelCreate.model_fields if f not in ("platform", "name", "rate_limit_per_minute")
)


class ChannelAccountOut(BaseModel):
    """The network account: Mastodon ``id`` and ``acct``; Bluesky ``did`` and ``handle``."""

    id: str | None = None
    acct: str | None = None
    did: str | None = None
    handle: str | None = None


class ChannelLimitsOut(ChannelLimits):
    """Limits to count and upload with (``docs/networks.md``): Mastodon ``max_characters`` and
    ``characters_reserved_per_url``; Bluesky ``max_graphemes`` and ``max_bytes`` (UTF-8);
    every platform's media limits (``max_media_attachments``, ``image_size_limit`` and
    ``video_size_limit`` in bytes, ``description_limit`` in characters of alt text,
    ``supported_mime_types``)."""


class ChannelOut(BaseModel):
    """A channel as ``GET`` shows it: never a signing secret or a credential. ``url`` is the
    webhook URL, the Mastodon instance or the Bluesky service (PDS). ``status`` is
    ``needs_reauthorization`` after the network refused the credentials, until a ``PATCH``
    replaces them."""

    channel_id: str
    platform: str
    name: str
    url: str
    rate_limit_per_minute: int | None
    created_at: str
    status: str = "active"
    status_reason: str | None = None
    account: ChannelAccountOut | None = None
    limits: ChannelLimitsOut | None = None

    @classmethod
    def of(cls, channel: Channel) -> ChannelOut:
        return cls(
            channel_id=channel.channel_id,
            platform=channel.platform,
            name=channel.name,
            url=channel.url,
            rate_limit_per_minute=channel.rate_limit_per_minute,
            created_at=format_instant(channel.created_at),
            status=channel.status.value,
            status_reason=channel.status_reason,
            account=(
                ChannelAccountOut(**channel.account.model_dump()) if channel.account else None
            ),
            limits=_limits_out(channel),
        )


def _limits_out(channel: Channel) -> ChannelLimitsOut | None:
    limits = channel_limits(channel.platform, channel.limits)
    return ChannelLimitsOut(**limits.model_dump()) if limits else None


class ChannelCreated(ChannelOut):
    """``POST /v1/channels`` 201 body: the only response that carries a webhook's
    ``signing_secret`` (``null`` for network channels, which sign nothing)."""

    signing_secret: str | None

    @classmethod
    def of_new(cls, channel: Channel) -> ChannelCreated:
        secret = channel.signing_secret if spec_of(channel.platform).signed else None
        return cls(**ChannelOut.of(channel).model_dump(), signing_secret=secret)


class ChannelList(BaseModel):
    """``GET /v1/channels`` body: a page of the caller's channels, by ``channel_id``; only
    ``next_cursor: null`` ends the list."""

    items: list[ChannelOut]
    next_cursor: str | None = None


class PostCreate(BaseModel):
    """``POST /v1/scheduled-posts`` body."""

    model_config = ConfigDict(extra="forbid")

    content: Content
    media_ids: MediaIds = Field(default_factory=list)
    publish_at: CreatePublishAt
    channel_ids: ChannelIds
    language: Language | None = None


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

    @model_validator(mode="after")
    def _at_least_one(self) -> PostPatch:
        if not self.model_fields_set:
            raise ValueError(
                "give at least one of content, media_ids, publish_at, channel_ids, language"
            )
        return self


class SecretRotation(BaseModel):
    """``POST /v1/channels/{channel_id}/rotate-secret`` body (optional)."""

    model_config = ConfigDict(extra="forbid")

    revoke_previous: StrictBool = Field(
        False,
        description="End the overlap of every earlier secret now (a leaked secret): only the "
        "new secret is valid afterwards",
    )


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

    @classmethod
    def of(cls, delivery: Delivery) -> DeliveryOut:
        return cls(
            channel_id=delivery.channel_id,
            status=delivery.status.value,
            attempts=delivery.attempts,
            remote_id=delivery.remote_id,
            remote_url=delivery.remote_url,
            published_at=_opt(delivery.published_at),
            last_error=delivery.last_error,
            next_attempt_at=_opt(delivery.next_attempt_at)
            if delivery.status.value in ("pending", "retry_scheduled")
            else None,
        )


def _opt(value: datetime | None) -> str | None:
    return format_instant(value) if value is not None else None


class PostOut(BaseModel):
    """A post as every post endpoint returns it (issue 2's shape)."""

    schedule_id: str
    status: str
    content: str
    media_ids: list[str]
    publish_at: str
    channel_ids: list[str]
    deliveries: list[DeliveryOut]
    language: str | None = None
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
    def of(cls, post: Post) -> PostOut:
        deliveries = [
            DeliveryOut.of(post.deliveries.get(cid) or Delivery(channel_id=cid))
            for cid in post.channel_ids
        ]
        return cls(
            schedule_id=post.schedule_id,
            status=post.status.value,
            content=post.content,
            media_ids=list(post.media_ids),
            publish_at=format_instant(post.publish_at),
            channel_ids=list(post.channel_ids),
            deliveries=deliveries,
            language=post.language,
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
    section 8.8.3): ``"<version>"`` while the post is ``scheduled`` (every change of a scheduled
    post is an edit, which raises ``version``), else ``"<version>-<16 hex>"`` with a SHA-256 of
    the representation, so it changes whenever the answer does (issue 17)."""
    version = representation["version"]
    if representation.get("status") == "scheduled":
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
