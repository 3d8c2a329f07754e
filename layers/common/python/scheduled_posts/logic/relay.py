"""The outbox relay: one committed change of ``PostsTable`` (a stream record) -> its outcome
events on the EventBridge bus and in the event feed (``docs/events.md``).

At least once: a record whose events could not all be sent raises, and the stream hands the
record (and everything after it in the shard) to the relay again; events keep their ids, so a
consumer deduplicates by ``event_id``. Order: the handler stops a batch at its first failed
record (``functions/relay/handler.py``), so a post's later events never overtake earlier ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from scheduled_posts.clock import Clock, SystemClock
from scheduled_posts.data.event_bus import EventBus
from scheduled_posts.data.event_feed import EventFeed
from scheduled_posts.lifecycle.events import derive_events
from scheduled_posts.lifecycle.metric_names import Metric
from scheduled_posts.models.events import BaseEvent
from scheduled_posts.observability import logger, metrics, tracer
from scheduled_posts.settings import Settings

SECONDS_PER_DAY = 86_400


@dataclass(frozen=True)
class StreamChange:
    """One stream record: ``sequence_number`` (decimal digits), ``trace_id`` (its
    ``eventID``), the item ``old`` and ``new`` (plain values; None for insert/remove)."""

    sequence_number: str
    trace_id: str
    old: Mapping[str, Any] | None
    new: Mapping[str, Any] | None


class Relay:
    """Sends the events of stream records.

    Parameters
    ----------
    settings:
        ``RETENTION_DAYS`` (how long the feed keeps an event).
    feed, bus:
        Where events go (``data/event_feed.py``, ``data/event_bus.py``).
    notify:
        Called with the events of a record after they are on the bus and in the feed (the
        notification fan-out); None: no fan-out.
    clock:
        For the feed's TTL and the lag metric.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        feed: EventFeed,
        bus: EventBus,
        notify: Callable[[list[BaseEvent]], None] | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.settings = settings
        self.feed = feed
        self.bus = bus
        self.notify = notify
        self.clock = clock or SystemClock()

    @tracer.capture_method
    def relay(self, change: StreamChange) -> list[BaseEvent]:
        """Derive the events of ``change``, put them on the bus, store them in the feed, hand
        them to the fan-out; return them. Raises whatever a destination raised (the record is
        then retried whole)."""
        events = derive_events(change.old, change.new)
        if not events:
            return []
        self.bus.put(events)
        now = self.clock.now()
        expires_at = int(now.timestamp()) + self.settings.RETENTION_DAYS * SECONDS_PER_DAY
        for position, event in enumerate(events):
            self.feed.put(
                event,
                sequence_number=change.sequence_number,
                position=position,
                trace_id=change.trace_id,
                expires_at=expires_at,
            )
        if self.notify is not None:
            self.notify(events)
        lag = max(0.0, (now - events[-1].occurred_at).total_seconds())
        metrics.add_metric(
            name=Metric.EVENTS_RELAYED, unit=Metric.EVENTS_RELAYED.unit, value=len(events)
        )
        metrics.add_metric(
            name=Metric.EVENT_RELAY_LAG_SECONDS, unit=Metric.EVENT_RELAY_LAG_SECONDS.unit, value=lag
        )
        logger.info(
            "events relayed",
            schedule_id=events[-1].schedule_id,
            event_ids=[e.event_id for e in events],
            trace_id=change.trace_id,
        )
        return events
