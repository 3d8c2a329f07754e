"""What travels on the dispatch queue and what the due index holds."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, field_serializer

from scheduled_posts.clock import format_instant


class DispatchReason(StrEnum):
    """Why a dispatch message was sent (for logs, metrics and the redrive report)."""

    SWEEP = "sweep"
    PROMOTE = "promote"
    EARLY = "early"
    RETRY = "retry"
    RATE_LIMIT = "rate_limit"
    WATCHDOG = "watchdog"
    RECONCILE = "reconcile"
    REDRIVE = "redrive"
    RECOVERY = "recovery"


class DispatchMessage(BaseModel):
    """The body of a dispatch-queue message (JSON, well under the SQS size limit).

    ``version`` is the post version the message was sent for: a message whose version is not the
    post's current one is stale and dropped. ``lease_token`` is set on messages sent by the holder
    of a lease (retries, rate-limit waits) or by whoever took the lease over (watchdog,
    reconciler, retry endpoint); only a message carrying the current token may continue a
    ``publishing`` post. ``not_before`` is when the message may act (chained waits over the SQS
    900 s delay limit re-send until it passes).
    """

    model_config = ConfigDict(extra="ignore")

    schedule_id: str
    version: int
    publish_at: datetime
    attempt: int = 1
    lease_token: str | None = None
    not_before: datetime | None = None
    reason: DispatchReason = DispatchReason.SWEEP

    @field_serializer("publish_at", "not_before")
    def _ser_instant(self, value: datetime | None) -> str | None:
        return format_instant(value) if value is not None else None


class DueEntry(BaseModel):
    """A due-index entry: only what dispatch needs, never content."""

    model_config = ConfigDict(extra="ignore")

    bucket: str
    due: str
    schedule_id: str
    publish_at: datetime
    version: int
    shard: int
    enqueued_version: int | None = None
