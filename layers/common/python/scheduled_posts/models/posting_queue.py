"""API shapes of posting schedules and the posting queue (``logic/posting_queue.py``).

A posting schedule is a channel's weekly slots in an IANA zone, in the recurring schedules'
grammar (``slots: [{days, times}]``, ``docs/recurring.md``) and with its DST rule: a slot in a
spring-forward gap is at the first valid instant after the gap, a slot in a fall-back repeat at
the first (earlier) of its two instants.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_serializer

from scheduled_posts.clock import format_instant
from scheduled_posts.models.recurring import MAX_SLOTS, Slot, Timezone
from scheduled_posts.recurrence import Rule, WeeklySlot

#: Most slots ``GET /v1/channels/{id}/queue`` lists at once.
MAX_QUEUE_COUNT = 50
#: Slots the posting schedule's answer previews.
PREVIEW_SLOTS = 5


class PostingScheduleIn(BaseModel):
    """``PUT /v1/channels/{channel_id}/posting-schedule`` body."""

    model_config = ConfigDict(extra="forbid")

    timezone: Timezone
    slots: Annotated[list[Slot], Field(min_length=1, max_length=MAX_SLOTS)]

    def stored_slots(self) -> list[dict[str, Any]]:
        """The slots as stored (``[{"days": [...], "times": [...]}]``)."""
        return [{"days": [d.value for d in s.days], "times": list(s.times)} for s in self.slots]


def rule_of(timezone: str, slots: list[dict[str, Any]]) -> Rule:
    """The recurrence rule of a stored posting schedule."""
    weekly = tuple(
        WeeklySlot(days=tuple(str(d) for d in s["days"]), times=tuple(str(t) for t in s["times"]))
        for s in slots
    )
    return Rule(timezone=timezone, cron=None, slots=weekly)


class PostingScheduleOut(BaseModel):
    """A channel's posting schedule and its next slots (UTC instants)."""

    channel_id: str
    timezone: str
    slots: list[dict[str, list[str]]]
    updated_at: datetime
    next_slots: list[datetime]

    @field_serializer("updated_at")
    def _at(self, value: datetime) -> str:
        return format_instant(value)

    @field_serializer("next_slots")
    def _slots(self, value: list[datetime]) -> list[str]:
        return [format_instant(v) for v in value]


class QueueSlotOut(BaseModel):
    """One slot of the queue: ``at`` (UTC), the wall time with its offset, and the post that
    holds it (``schedule_id``; ``None`` when the slot is free)."""

    at: datetime
    local_time: str
    schedule_id: str | None

    @field_serializer("at")
    def _at(self, value: datetime) -> str:
        return format_instant(value)


class QueueOut(BaseModel):
    """``GET /v1/channels/{channel_id}/queue``: the next ``count`` slots after now, in order,
    within ``MAX_SCHEDULE_AHEAD_DAYS`` (fewer when that horizon comes first)."""

    channel_id: str
    timezone: str
    slots: list[QueueSlotOut]


QueueCount = Annotated[StrictInt, Field(ge=1, le=MAX_QUEUE_COUNT)]
