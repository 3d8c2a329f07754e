"""A recurring schedule (a *series*) as the domain sees it (``docs/recurring.md``).

The item lives in ``PostsTable`` (``docs/data-model.md``, "Series"):
``pk = SERIES#<series_id>``, ``sk = SERIES``; listed through GSI ``by_owner`` under
``gsi1pk = OWNER#<sub>#SERIES``. Instants are aware UTC datetimes in the model and
``YYYY-MM-DDTHH:MM:SS.mmmZ`` strings in the item.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from scheduled_posts import keys
from scheduled_posts.clock import format_instant, instant_from_storage
from scheduled_posts.lifecycle.reasons import OccurrenceCancelReason
from scheduled_posts.models.thread import FirstComment, Part
from scheduled_posts.models.variants import Variant
from scheduled_posts.recurrence import Bounds, Rule, WeeklySlot


class SeriesStatus(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"
    ENDED = "ended"
    CANCELLED = "cancelled"


#: Statuses that count against ``MAX_SERIES_PER_USER`` and may be edited.
OPEN_SERIES_STATUSES = frozenset({SeriesStatus.ACTIVE, SeriesStatus.PAUSED})


class StopReason(StrEnum):
    """Why an active series is not materializing (shown as ``stopped_reason``)."""

    PENDING_LIMIT = "pending_limit"


def _opt(value: datetime | None) -> str | None:
    return format_instant(value) if value is not None else None


def _opt_instant(value: Any) -> datetime | None:
    return instant_from_storage(value) if value else None


class Series(BaseModel):
    """A template that expands into ordinary posts ahead of time.

    ``version`` is the client's (ETag): +1 on every PATCH, pause, resume and delete; the
    materializer never changes it, and every occurrence it writes is conditioned on it.
    ``materialized_through``: every occurrence at or before it exists as a post (or was
    deliberately skipped: past, or cancelled). ``extend_at``: when the series next needs the
    materializer (``None`` when it needs none: paused, ended, cancelled).
    ``occurrence_count``: occurrence posts written so far (for ``max_occurrences``).
    """

    model_config = ConfigDict(extra="ignore")

    series_id: str
    owner: str
    status: SeriesStatus
    content: str
    media_ids: list[str] = Field(default_factory=list)
    channel_ids: list[str]
    #: A text per channel for every occurrence (``models/variants.py``), as a post's.
    variants: dict[str, Variant] = Field(default_factory=dict)
    #: A thread's replies and a first comment for every occurrence (``models/thread.py``).
    parts: list[Part] = Field(default_factory=list)
    first_comment: FirstComment | None = None
    timezone: str
    cron: str | None = None
    slots: list[dict[str, list[str]]] | None = None
    starts_at: datetime
    ends_at: datetime | None = None
    max_occurrences: int | None = None
    version: int = 1
    created_at: datetime
    updated_at: datetime
    materialized_through: datetime
    extend_at: datetime | None = None
    occurrence_count: int = 0
    stopped_reason: StopReason | None = None
    shard: int = 0
    #: A change whose effect on the occurrences is not finished yet: the series as it was
    #: (its item) and why. Cleared by whoever finishes it (the request, or the materializer).
    superseded: dict[str, Any] | None = None
    superseded_reason: OccurrenceCancelReason | None = None

    def superseded_series(self) -> Series | None:
        """The series as it was before the unfinished change, if any."""
        return Series.from_item(self.superseded) if self.superseded is not None else None

    def snapshot(self) -> dict[str, Any]:
        """This series' item without its own ``superseded`` (for the next change's record)."""
        item = self.to_item()
        item.pop("superseded", None)
        item.pop("superseded_reason", None)
        return item

    def post_fields(self) -> dict[str, Any]:
        """The template every occurrence post is given (fresh copies, by ``Post`` field name):
        ``content``, ``media_ids``, ``channel_ids``, ``variants``, ``parts``,
        ``first_comment``."""
        return {
            "content": self.content,
            "media_ids": list(self.media_ids),
            "channel_ids": list(self.channel_ids),
            "variants": dict(self.variants),
            "parts": list(self.parts),
            "first_comment": self.first_comment,
        }

    @property
    def rule(self) -> Rule:
        slots = None
        if self.slots is not None:
            slots = tuple(
                WeeklySlot(days=tuple(s["days"]), times=tuple(s["times"])) for s in self.slots
            )
        return Rule(timezone=self.timezone, cron=self.cron, slots=slots)

    @property
    def bounds(self) -> Bounds:
        return Bounds(
            starts_at=self.starts_at, ends_at=self.ends_at, max_occurrences=self.max_occurrences
        )

    def index_keys(self) -> tuple[str, str] | None:
        """``(bucket, due)`` of the series' entry in the materialization index, if any."""
        if self.extend_at is None:
            return None
        return (
            keys.series_bucket(self.extend_at, self.shard),
            keys.series_order_key(self.extend_at, self.series_id),
        )

    def to_item(self) -> dict[str, Any]:
        """The full DynamoDB item (boto3 resource types)."""
        return {
            "pk": keys.series_pk(self.series_id),
            "sk": keys.SERIES_SK,
            "series_id": self.series_id,
            "owner": self.owner,
            "status": self.status.value,
            "content": self.content,
            "media_ids": list(self.media_ids),
            "channel_ids": list(self.channel_ids),
            "variants": {cid: v.to_item() for cid, v in self.variants.items()},
            "parts": [p.to_item() for p in self.parts],
            "first_comment": self.first_comment.to_item() if self.first_comment else None,
            "timezone": self.timezone,
            "cron": self.cron,
            "slots": self.slots,
            "starts_at": format_instant(self.starts_at),
            "ends_at": _opt(self.ends_at),
            "max_occurrences": self.max_occurrences,
            "version": self.version,
            "created_at": format_instant(self.created_at),
            "updated_at": format_instant(self.updated_at),
            "materialized_through": format_instant(self.materialized_through),
            "extend_at": _opt(self.extend_at),
            "occurrence_count": self.occurrence_count,
            "stopped_reason": self.stopped_reason.value if self.stopped_reason else None,
            "shard": self.shard,
            "superseded": self.superseded,
            "superseded_reason": self.superseded_reason.value if self.superseded_reason else None,
            "gsi1pk": keys.owner_series_gsi_pk(self.owner),
            "gsi1sk": keys.series_order_key(self.created_at, self.series_id),
        }

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> Series:
        slots = item.get("slots")
        reason = item.get("stopped_reason")
        max_occurrences = item.get("max_occurrences")
        return cls(
            series_id=item["series_id"],
            owner=item["owner"],
            status=SeriesStatus(item["status"]),
            content=item["content"],
            media_ids=list(item.get("media_ids") or []),
            channel_ids=list(item.get("channel_ids") or []),
            variants={cid: Variant.from_item(v) for cid, v in (item.get("variants") or {}).items()},
            parts=[Part.from_item(p) for p in item.get("parts") or []],
            first_comment=FirstComment.from_item(item["first_comment"])
            if item.get("first_comment")
            else None,
            timezone=item["timezone"],
            cron=item.get("cron"),
            slots=[{"days": list(s["days"]), "times": list(s["times"])} for s in slots]
            if slots is not None
            else None,
            starts_at=instant_from_storage(item["starts_at"]),
            ends_at=_opt_instant(item.get("ends_at")),
            max_occurrences=int(max_occurrences) if max_occurrences is not None else None,
            version=int(item["version"]),
            created_at=instant_from_storage(item["created_at"]),
            updated_at=instant_from_storage(item["updated_at"]),
            materialized_through=instant_from_storage(item["materialized_through"]),
            extend_at=_opt_instant(item.get("extend_at")),
            occurrence_count=int(item.get("occurrence_count", 0)),
            stopped_reason=StopReason(reason) if reason else None,
            shard=int(item.get("shard", 0)),
            superseded=item.get("superseded"),
            superseded_reason=OccurrenceCancelReason(item["superseded_reason"])
            if item.get("superseded_reason")
            else None,
        )
