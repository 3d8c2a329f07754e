"""Per-channel rate limit: at most ``rate_limit_per_minute`` delivery starts per UTC minute.

Counted across every worker by a conditional counter item per (channel, minute)
(:class:`scheduled_posts.data.rate_limit.RateLimitStore`). A delivery that finds the current
minute full reserves a slot in the first later minute with room and waits until that minute
begins (the publisher re-sends its message with a delay, keeps the post ``publishing`` and
extends the lease). A wait never uses an attempt and never fails a delivery; the wait shows in
the delivery's ``lag_seconds`` and in the ``RateLimitWaitSeconds`` metric.

Reservations are made in the order workers ask, and the sweeper sends due posts in
``publish_at`` order, so a burst is delivered in ``publish_at`` order at minute granularity.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from scheduled_posts import keys
from scheduled_posts.clock import epoch_seconds
from scheduled_posts.data.rate_limit import RateLimitStore

#: How many minutes ahead one call looks for a free slot (bounds its writes). When all are
#: full the delivery waits until the minute after them and asks again then, without a slot.
MAX_RESERVE_MINUTES = 15
#: Counter items live this long after their minute (DynamoDB TTL; they are useless after it).
COUNTER_TTL_SECONDS = 3600


@dataclass(frozen=True)
class SlotDecision:
    """What the limiter decided for one delivery start.

    ``start_at`` is when the delivery may start (``<= now``: start now). ``slot`` is the minute
    (``YYYY-MM-DDTHH:MM``) whose slot was taken, or None when no slot was taken (every minute
    searched was full: ask again at ``start_at``).
    """

    start_at: datetime
    slot: str | None

    def may_start(self, now: datetime) -> bool:
        """True when the delivery holds a slot for the current minute and may start now."""
        return self.slot is not None and self.start_at <= now


def minute_start(instant: datetime) -> datetime:
    """The first instant of ``instant``'s UTC minute."""
    return instant.replace(second=0, microsecond=0)


class RateLimiter:
    """Grants per-channel delivery-start slots.

    Parameters
    ----------
    store:
        The counter items (:class:`RateLimitStore`).
    max_reserve_minutes:
        Minutes searched per call, including the current one (default
        :data:`MAX_RESERVE_MINUTES`).
    """

    def __init__(
        self, store: RateLimitStore, *, max_reserve_minutes: int = MAX_RESERVE_MINUTES
    ) -> None:
        self.store = store
        self.max_reserve_minutes = max_reserve_minutes

    def acquire(
        self, channel_id: str, *, limit: int, now: datetime, held: str | None = None
    ) -> SlotDecision:
        """Take (or confirm) a delivery-start slot for ``channel_id`` at ``now``.

        ``held`` is the minute of a slot this delivery reserved earlier: when it is the current
        minute the delivery starts on it without taking another one; an older one is lost
        (the minute passed) and a new slot is taken.

        Returns
        -------
        SlotDecision
            ``start_at <= now`` with ``slot`` = the current minute: start now. ``start_at``
            later: wait until then (``slot`` set: reserved; None: ask again then).

        Raises
        ------
        ValueError
            When ``limit`` < 1.
        botocore.exceptions.ClientError
            From DynamoDB.
        """
        if limit < 1:
            raise ValueError("rate_limit_per_minute must be >= 1")
        current = minute_start(now)
        if held is not None and held == keys.rate_minute(current):
            return SlotDecision(start_at=now, slot=held)
        for offset in range(self.max_reserve_minutes):
            minute = current + timedelta(minutes=offset)
            label = keys.rate_minute(minute)
            expires_at = epoch_seconds(minute) + 60 + COUNTER_TTL_SECONDS
            if self.store.take_slot(channel_id, label, limit=limit, expires_at=expires_at):
                return SlotDecision(start_at=now if offset == 0 else minute, slot=label)
        return SlotDecision(
            start_at=current + timedelta(minutes=self.max_reserve_minutes), slot=None
        )
