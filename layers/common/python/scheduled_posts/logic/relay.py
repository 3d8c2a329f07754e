"""The outbox relay: one committed change of ``PostsTable`` (a stream record) -> its outcome
events in the event feed, on the EventBridge bus and to the notification fan-out
(``docs/events.md``).

At least once: a record whose events could not all be stored and sent raises, and the stream
hands the record (and everything after it in the shard) to the relay again; events keep their
ids, so a consumer deduplicates by ``event_id``, and a repeated record finds its trail items and
stores nothing twice. Order: the handler stops a batch at its first failed record
(``functions/relay/handler.py``), so a post's later events never overtake earlier ones; the
caller's feed is ordered by positions the relay takes from the owner's counter
(``feed_order.py``: decisions, "Feed positions").

Erasure (decisions, "Erasure erases the feed"): the feed comes first, and the counter refuses
positions while the owner is being erased and, afterwards, for what was created before the
erasure; a refused record is neither stored nor sent to the bus or the notifications. After
storing, the relay reads the counter again and takes back what it stored if an erasure started
meanwhile (its sweep of the feed may have run before these puts).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from scheduled_posts.clock import Clock, SystemClock
from scheduled_posts.data.event_bus import EventBus
from scheduled_posts.data.event_feed import EventFeed
from scheduled_posts.data.feed_sequence import FeedSequence
from scheduled_posts.feed_order import FRESH_SECONDS
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

    @property
    def origin(self) -> str:
        """When the changed post or series was created (ms ISO instant; ``""`` if unknown)."""
        image = self.new or self.old or {}
        return str(image.get("created_at", ""))


class Relay:
    """Stores and sends the events of stream records.

    Parameters
    ----------
    settings:
        ``RETENTION_DAYS`` (how long the feed keeps an event), ``POSTS_TABLE_NAME``,
        ``BUS_EVENT_TYPES`` (which events go on the bus; all go to the feed and notify).
    feed, bus:
        Where events go (``data/event_feed.py``, ``data/event_bus.py``).
    notify:
        Called with the events of a record after they are in the feed and on the bus (the
        notification fan-out); None: no fan-out.
    sequence:
        The owners' feed counters and erasure marks (``data/feed_sequence.py``).
    clock:
        For the feed's TTL, the positions' stamps and the lag metric.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        feed: EventFeed,
        bus: EventBus,
        notify: Callable[[list[BaseEvent]], None] | None = None,
        sequence: FeedSequence | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.settings = settings
        self.feed = feed
        self.bus = bus
        self.notify = notify
        self.sequence = sequence or FeedSequence(settings.POSTS_TABLE_NAME)
        self.clock = clock or SystemClock()

    @tracer.capture_method
    def relay(self, change: StreamChange) -> list[BaseEvent]:
        """Derive the events of ``change``, store them in the feed, put those of
        ``BUS_EVENT_TYPES`` on the bus, hand them all to the fan-out; return them ([] when the
        owner is or was erased). Raises whatever a destination raised (the record is then
        retried whole)."""
        events = derive_events(change.old, change.new)
        if not events:
            return []
        if not self._store(change, events):
            logger.info(
                "events withheld: owner erased",
                schedule_id=events[-1].schedule_id,
                trace_id=change.trace_id,
            )
            return []
        wanted = self.settings.bus_event_types
        on_bus = [e for e in events if wanted is None or str(getattr(e, "type", "")) in wanted]
        if on_bus:
            self.bus.put(on_bus)
        if self.notify is not None:
            self.notify(events)
        lag = max(0.0, (self.clock.now() - events[-1].occurred_at).total_seconds())
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

    def _store(self, change: StreamChange, events: list[BaseEvent]) -> bool:
        """Put every event of ``change`` in the feed once; False (nothing left stored) when
        the owner's counter refuses them."""
        owner, seq = events[0].owner, change.sequence_number
        stored = True
        if self.feed.trail_entry(events[0], seq, 0) is None:
            taken_at = self.clock.now().timestamp()  # before the counter: feed_order.py
            taken = self.sequence.take(owner, len(events), origin=change.origin, now_epoch=taken_at)
            if taken is None:
                return False
            start, first = taken
            for index, event in enumerate(events):
                placed = (start + index, taken_at, first and index == 0)
                stored = stored and self._put(change, event, index, placed)
        else:  # a repeated record: complete what an earlier try left undone
            for index, event in enumerate(events):
                stored = stored and self._complete(change, event, index)
        if stored and self.sequence.admits(owner, change.origin):
            return True
        for index, event in enumerate(events):
            self.feed.remove(event, sequence_number=seq, index=index)
        return False

    def _complete(self, change: StreamChange, event: BaseEvent, index: int) -> bool:
        entry = self.feed.trail_entry(event, change.sequence_number, index)
        if entry is not None and self.feed.in_feed(event.owner, entry.position):
            return True
        if entry is not None:
            return self._put(change, event, index, (entry.position, entry.taken_at, False))
        return self._put(change, event, index, (0, float("-inf"), False))

    def _put(
        self, change: StreamChange, event: BaseEvent, index: int, placed: tuple[int, float, bool]
    ) -> bool:
        """Store one event at ``placed`` (position, taken_at, first) while that position is
        fresh, else at a new one (False: the counter refused it)."""
        position, taken_at, first = placed
        now = self.clock.now().timestamp()
        if now - taken_at >= FRESH_SECONDS:
            taken = self.sequence.take(event.owner, 1, origin=change.origin, now_epoch=now)
            if taken is None:
                return False
            (position, first), taken_at = taken, now
        self.feed.put(
            event,
            sequence_number=change.sequence_number,
            index=index,
            position=position,
            taken_at=taken_at,
            first=first,
            trace_id=change.trace_id,
            expires_at=int(now) + self.settings.RETENTION_DAYS * SECONDS_PER_DAY,
        )
        return True
