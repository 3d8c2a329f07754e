"""Outcome events: one per fact about a post, a delivery, a series or an upload
(``docs/events.md``).

Every event has a stable ``event_id`` (derived from the post, the transition and the post's
version, the lease that finished it, or the delivery's attempt: a replay of the same change
gives the same id), a ``type``, ``occurred_at`` (UTC, millisecond precision) and the data a
consumer needs without another call. One pydantic model per type, so each type has its own JSON
Schema (``event_schemas()``); :data:`OutcomeEvent` is their union, discriminated by ``type``.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_serializer

from scheduled_posts import keys
from scheduled_posts.clock import format_instant
from scheduled_posts.models.receipt import Receipt
from scheduled_posts.models.thread import CommentOutcome, PublishedPart


class EventType(StrEnum):
    """Every event type (the EventBridge ``detail-type``)."""

    POST_SCHEDULED = "post.scheduled"
    POST_UPDATED = "post.updated"
    POST_CANCELLED = "post.cancelled"
    POST_CLAIMED = "post.claimed"
    POST_PUBLISHED = "post.published"
    POST_PARTIALLY_PUBLISHED = "post.partially_published"
    POST_FAILED = "post.failed"
    POST_MISSED = "post.missed"
    DELIVERY_PUBLISHED = "delivery.published"
    DELIVERY_FAILED = "delivery.failed"
    DELIVERY_RETRYING = "delivery.retrying"
    DELIVERY_VERIFICATION_FAILED = "delivery.verification_failed"
    SERIES_STOPPED = "series.stopped"
    MEDIA_REJECTED = "media.rejected"
    IMPORT_COMPLETED = "import.completed"
    IMPORT_FAILED = "import.failed"


class ChannelOutcome(BaseModel):
    """One channel's delivery as the event reports it (``remote_id``/``remote_url`` when the
    platform gave them; ``lag_seconds`` = published_at - publish_at, seconds)."""

    model_config = ConfigDict(extra="forbid")

    channel_id: str
    status: str
    attempts: int = Field(ge=0)
    remote_id: str | None = None
    remote_url: str | None = None
    published_at: datetime | None = None
    lag_seconds: float | None = None
    last_error: str | None = None
    next_attempt_at: datetime | None = None
    #: What the network returned when it published (``models/receipt.py``).
    receipt: Receipt | None = None
    #: A thread's published parts (index 0 is part 1), each with the network's id and page;
    #: for a failed thread, those published before the refused part.
    parts: list[PublishedPart] | None = None
    #: ``"k/n"``: parts published of the thread's parts (absent for a single post).
    parts_published: str | None = None
    #: The first comment's own outcome (``status``, ``remote_id``, ``remote_url``, ``error``).
    first_comment: CommentOutcome | None = None

    @field_serializer("published_at", "next_attempt_at")
    def _instant(self, value: datetime | None) -> str | None:
        return format_instant(value) if value is not None else None


class BaseEvent(BaseModel):
    """Fields every event has."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    event_id: str = Field(description="Stable id: a replay of the same change gives the same id.")
    occurred_at: datetime = Field(description="When the change was committed (UTC, ms).")
    owner: str
    schedule_id: str | None = None
    series_id: str | None = None

    @field_serializer("occurred_at")
    def _occurred(self, value: datetime) -> str:
        return format_instant(value)

    def trail_pk(self) -> str:
        """The partition of the event's trail item (``data/event_feed.py``): its post's
        (``POST#<schedule_id>``), else its series' (``SERIES#<series_id>``)."""
        if self.schedule_id is not None:
            return keys.post_pk(self.schedule_id)
        return keys.series_pk(str(self.series_id))


class PostEvent(BaseEvent):
    """A change of a post's status (or content, for ``post.updated``)."""

    schedule_id: str
    version: int = Field(ge=1)
    status: str
    publish_at: datetime
    status_reason: str | None = None
    channels: list[ChannelOutcome]

    @field_serializer("publish_at")
    def _publish_at(self, value: datetime) -> str:
        return format_instant(value)


class PostScheduled(PostEvent):
    type: Literal[EventType.POST_SCHEDULED] = EventType.POST_SCHEDULED


class PostUpdated(PostEvent):
    type: Literal[EventType.POST_UPDATED] = EventType.POST_UPDATED


class PostCancelled(PostEvent):
    type: Literal[EventType.POST_CANCELLED] = EventType.POST_CANCELLED


class PostClaimed(PostEvent):
    """A worker took the post (``scheduled -> publishing``) or it was reopened for a retry."""

    type: Literal[EventType.POST_CLAIMED] = EventType.POST_CLAIMED


class PostMissed(PostEvent):
    type: Literal[EventType.POST_MISSED] = EventType.POST_MISSED


class PostFinished(PostEvent):
    published_at: datetime | None = None
    publish_lag_seconds: float | None = None

    @field_serializer("published_at")
    def _published_at(self, value: datetime | None) -> str | None:
        return format_instant(value) if value is not None else None


class PostPublished(PostFinished):
    type: Literal[EventType.POST_PUBLISHED] = EventType.POST_PUBLISHED


class PostPartiallyPublished(PostFinished):
    type: Literal[EventType.POST_PARTIALLY_PUBLISHED] = EventType.POST_PARTIALLY_PUBLISHED


class PostFailed(PostFinished):
    type: Literal[EventType.POST_FAILED] = EventType.POST_FAILED


class DeliveryEvent(BaseEvent):
    schedule_id: str
    channel: ChannelOutcome


class DeliveryPublished(DeliveryEvent):
    type: Literal[EventType.DELIVERY_PUBLISHED] = EventType.DELIVERY_PUBLISHED


class DeliveryFailed(DeliveryEvent):
    """A channel failed for good (``status`` ``failed``, or ``skipped`` when it was deleted)."""

    type: Literal[EventType.DELIVERY_FAILED] = EventType.DELIVERY_FAILED


class DeliveryVerificationFailed(DeliveryEvent):
    """A read-back found a published delivery ``missing`` or ``changed`` on its network
    (``logic/verify.py``); once per finding (decision "Verification on the network")."""

    type: Literal[EventType.DELIVERY_VERIFICATION_FAILED] = EventType.DELIVERY_VERIFICATION_FAILED
    finding: Literal["missing", "changed"]


class DeliveryRetrying(DeliveryEvent):
    """A channel will be tried again at ``next_attempt_at``."""

    type: Literal[EventType.DELIVERY_RETRYING] = EventType.DELIVERY_RETRYING
    next_attempt_at: datetime

    @field_serializer("next_attempt_at")
    def _next(self, value: datetime) -> str:
        return format_instant(value)


class SeriesStopped(BaseEvent):
    """A recurring series stopped creating posts (``reason`` says why)."""

    type: Literal[EventType.SERIES_STOPPED] = EventType.SERIES_STOPPED
    series_id: str
    reason: str | None = None


class MediaRejected(BaseEvent):
    """The probe refused an upload (``POST /v1/media/{media_id}/complete``): what the creator
    declared (``content_type``, ``size`` in bytes), what the bytes are (``detected_content_type``,
    ``detected_size``, absent when the probe could not tell), and why (``reason``, a
    ``RejectionReason`` code, and ``reason_detail``, its sentence). No bytes and no link: the
    rejected object is deleted when it is refused. ``occurred_at`` is when the refusal was
    recorded."""

    type: Literal[EventType.MEDIA_REJECTED] = EventType.MEDIA_REJECTED
    media_id: str
    content_type: str = Field(description="The content type declared at POST /v1/media.")
    size: int = Field(ge=0, description="The size declared at POST /v1/media, bytes.")
    detected_content_type: str | None = None
    detected_size: int | None = Field(default=None, ge=0)
    reason: str
    reason_detail: str

    def trail_pk(self) -> str:
        """The owner's partition (``OWNER#<sub>``): an upload has no post or series, and the
        owner's erasure deletes that partition whole."""
        return keys.owner_pk(self.owner)


class ImportEvent(BaseEvent):
    """A bulk import finished (``POST /v1/imports``; decision "Bulk import"): its ``import_id``
    and row counts (``rows_done`` created, ``rows_failed`` with problems, of ``rows_total``);
    the per-row results are at ``GET /v1/imports/{import_id}``. ``occurred_at`` is when the
    import finished."""

    import_id: str
    rows_total: int = Field(ge=0)
    rows_done: int = Field(ge=0)
    rows_failed: int = Field(ge=0)

    def trail_pk(self) -> str:
        """The owner's partition (``OWNER#<sub>``), where the import itself lives."""
        return keys.owner_pk(self.owner)


class ImportCompleted(ImportEvent):
    """Every row of the import has its result (some rows may have failed)."""

    type: Literal[EventType.IMPORT_COMPLETED] = EventType.IMPORT_COMPLETED


class ImportFailed(ImportEvent):
    """The import stopped before every row had a result; ``error`` says why."""

    type: Literal[EventType.IMPORT_FAILED] = EventType.IMPORT_FAILED
    error: str


EVENT_MODELS: dict[EventType, type[BaseEvent]] = {
    EventType.POST_SCHEDULED: PostScheduled,
    EventType.POST_UPDATED: PostUpdated,
    EventType.POST_CANCELLED: PostCancelled,
    EventType.POST_CLAIMED: PostClaimed,
    EventType.POST_PUBLISHED: PostPublished,
    EventType.POST_PARTIALLY_PUBLISHED: PostPartiallyPublished,
    EventType.POST_FAILED: PostFailed,
    EventType.POST_MISSED: PostMissed,
    EventType.DELIVERY_PUBLISHED: DeliveryPublished,
    EventType.DELIVERY_FAILED: DeliveryFailed,
    EventType.DELIVERY_RETRYING: DeliveryRetrying,
    EventType.DELIVERY_VERIFICATION_FAILED: DeliveryVerificationFailed,
    EventType.SERIES_STOPPED: SeriesStopped,
    EventType.MEDIA_REJECTED: MediaRejected,
    EventType.IMPORT_COMPLETED: ImportCompleted,
    EventType.IMPORT_FAILED: ImportFailed,
}

OutcomeEvent = Annotated[
    PostScheduled
    | PostUpdated
    | PostCancelled
    | PostClaimed
    | PostPublished
    | PostPartiallyPublished
    | PostFailed
    | PostMissed
    | DeliveryPublished
    | DeliveryFailed
    | DeliveryRetrying
    | DeliveryVerificationFailed
    | SeriesStopped
    | MediaRejected
    | ImportCompleted
    | ImportFailed,
    Field(discriminator="type"),
]
"""Any event (parse one with :data:`EVENT_ADAPTER`)."""

EVENT_ADAPTER: TypeAdapter[OutcomeEvent] = TypeAdapter(OutcomeEvent)


def event_body(event: BaseEvent) -> dict[str, Any]:
    """The JSON body of ``event`` (instants as ISO 8601 UTC strings with ``Z``; ``None`` fields
    left out)."""
    return event.model_dump(mode="json", exclude_none=True)


def event_schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schema (draft 2020-12, as pydantic writes it for serialisation) of each type, by
    type. ``docs/events.md`` shows these; a test keeps the two equal."""
    schemas: dict[str, dict[str, Any]] = {}
    for kind, model in EVENT_MODELS.items():
        schema = model.model_json_schema(mode="serialization")
        # ``type`` has a default (so it need not be passed) but is always in the body.
        schema["required"] = sorted({*schema.get("required", []), "type"})
        schemas[str(kind)] = schema
    return schemas
