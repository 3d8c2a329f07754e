"""The sweeper: find due entries within the lookahead and send them to the dispatch queue.

Per write shard ``0 .. WRITE_SHARD_COUNT-1``:

1. drain the ``LATE#<shard>`` markers (entries written behind a watermark) that are due within
   the lookahead;
2. query each hour bucket from the watermark's hour to ``now + LOOKAHEAD_SECONDS`` with
   ``due BETWEEN <watermark + 1 ms> AND <bucket end or horizon>#~`` (paginated);
3. skip entries the API's promotion already enqueued for their version, send the rest in
   batches of 10 with ``DelaySeconds = ceil(publish_at - now)`` clamped to ``[0, 900]``
   (overdue: 0). The sweeper does not mark what it sends in watermark order (decision "The
   sweeper marks only what it sends out of watermark order"):
   the watermark is what stops the next sweep from reading an entry again, and the rare re-send
   after a crash or an overlap is a duplicate message the worker's claim drops. An entry sent
   from a late marker (out of order, the promotion's fallback) is marked as the promotion would
   have marked it (a failed mark is a counted duplicate);
4. advance the watermark monotonically after every completed page that has a next page, after
   every bucket that sent something, and after the last bucket (an empty bucket followed by
   another needs no write of its own).

Never a Scan: reads grow with the entries in ``(watermark, horizon]`` plus the late markers.
Misfire is decided by the worker (``docs/decisions.md`` item 2).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from scheduled_posts import keys
from scheduled_posts.clock import Clock, SystemClock, format_instant
from scheduled_posts.data.aws import dynamodb_resource, sqs_client
from scheduled_posts.data.due_index import DueIndex
from scheduled_posts.data.queue import DispatchQueue, Outgoing, delay_until
from scheduled_posts.errors import QueueSendError
from scheduled_posts.lifecycle.metric_names import Metric
from scheduled_posts.models.messages import DispatchMessage, DispatchReason, DueEntry
from scheduled_posts.observability import logger, metrics
from scheduled_posts.settings import Settings

_MS = timedelta(milliseconds=1)
_HOUR = timedelta(hours=1)


@dataclass
class SweepResult:
    """What one sweep did.

    ``scanned_count`` is the sum of DynamoDB ``ScannedCount`` over every due-index Query of the
    sweep (buckets and late markers), the measure of its read cost.
    """

    enqueued: int = 0
    #: Late-marker sends whose mark failed: another sender (the API's promotion) also sent it.
    duplicates: int = 0
    already_enqueued: int = 0
    late_drained: int = 0
    scanned_count: int = 0
    queries: int = 0
    failed_shards: list[int] = field(default_factory=list)
    #: Shards left before their end because the run's time budget ran out (decision "The sweeper
    #: stops before its timeout, and the million's sweep is priced in CPU"): their watermarks stand
    #: after the last completed page, and the next run goes on from there.
    stopped_shards: list[int] = field(default_factory=list)

    @classmethod
    def merged(cls, parts: list[SweepResult]) -> SweepResult:
        """One result for a sweep whose shards were swept apart (counts summed)."""
        total = cls()
        for part in parts:
            for name in ("enqueued", "duplicates", "already_enqueued", "late_drained",
                         "scanned_count", "queries"):  # fmt: skip
                setattr(total, name, getattr(total, name) + getattr(part, name))
            total.failed_shards += part.failed_shards
            total.stopped_shards += part.stopped_shards
        return total


class _ShardIncomplete(Exception):
    """Some messages of a page were not accepted: stop this shard without advancing further."""


class _OutOfTime(Exception):
    """The run's time budget is spent: stop this shard before its next page."""


#: Seconds a sweep keeps in hand before its Lambda's timeout: it starts no page later than this,
#: so a run that cannot finish (a burst of due posts, a long catch-up) ends cleanly, not killed
#: mid-send, and the next run goes on from the watermarks.
SWEEP_TIME_MARGIN_SECONDS = 5.0


def _floor_hour(instant: datetime) -> datetime:
    return instant.replace(minute=0, second=0, microsecond=0)


class Sweeper:
    """One sweep over every shard. Collaborators are injectable (the fault suite wraps them).

    Parameters
    ----------
    settings:
        ``LOOKAHEAD_SECONDS``, ``MISFIRE_GRACE_SECONDS``, ``WRITE_SHARD_COUNT``,
        ``SWEEP_PARALLELISM`` and resource names.
    due_index, queue, clock:
        Default to the production ``DueIndex``, ``DispatchQueue`` and ``SystemClock``.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        due_index: DueIndex | None = None,
        queue: DispatchQueue | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.settings = settings
        self.due_index = due_index or DueIndex(settings.DUE_INDEX_TABLE_NAME)
        self.queue = queue or DispatchQueue.from_settings(settings)
        self.clock: Clock = clock or SystemClock()
        self._remaining: Callable[[], float] | None = None

    def sweep(self, remaining_seconds: Callable[[], float] | None = None) -> SweepResult:
        """Sweep every shard once; a shard that fails is listed in ``failed_shards`` and retried
        from its watermark by the next sweep (the others are unaffected).

        ``remaining_seconds`` (the Lambda context's remaining time, in seconds): when given, no
        page is started with less than :data:`SWEEP_TIME_MARGIN_SECONDS` left; the shards left
        unfinished are listed in ``stopped_shards`` and continued by the next run.

        With ``SWEEP_PARALLELISM`` above 1, that many threads sweep shards at once, each shard
        by one thread (its watermark has one writer); every shard is swept before an
        unexpected error (not a refused send) is raised, the first in shard order.
        """
        now = self.clock.now()
        horizon = now + timedelta(seconds=self.settings.LOOKAHEAD_SECONDS)
        shards = range(self.settings.WRITE_SHARD_COUNT)
        threads = min(self.settings.SWEEP_PARALLELISM, len(shards))
        self._remaining = remaining_seconds
        if threads <= 1:
            result = SweepResult()
            for shard in shards:
                self._sweep_one(shard, now, horizon, result)
        else:
            dynamodb_resource(), sqs_client()  # built before the threads (data/aws.py)
            with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="sweep") as pool:
                futures = [pool.submit(self._sweep_alone, shard, now, horizon) for shard in shards]
            parts, errors = [], []
            for shard, future in zip(shards, futures, strict=True):
                error = future.exception()
                if error is None:
                    parts.append(future.result())
                else:
                    errors.append(error)
                    logger.error("shard sweep failed", extra={"shard": shard, "error": repr(error)})
            result = SweepResult.merged(parts)
            if errors:
                self._emit(result)
                raise errors[0]
        self._emit(result)
        return result

    def _emit(self, result: SweepResult) -> None:
        if result.enqueued:
            metrics.add_metric(
                name=Metric.ENQUEUED, unit=Metric.ENQUEUED.unit, value=result.enqueued
            )
        if result.duplicates:
            metrics.add_metric(
                name=Metric.DUPLICATE_ENQUEUED,
                unit=Metric.DUPLICATE_ENQUEUED.unit,
                value=result.duplicates,
            )

    # -- one shard ------------------------------------------------------------------------------

    def _sweep_one(self, shard: int, now: datetime, horizon: datetime, result: SweepResult) -> None:
        try:
            self._sweep_shard(shard, now, horizon, result)
        except (_ShardIncomplete, QueueSendError) as exc:
            result.failed_shards.append(shard)
            logger.warning("shard sweep incomplete", extra={"shard": shard, "error": str(exc)})
        except _OutOfTime:
            result.stopped_shards.append(shard)
            logger.warning("shard sweep stopped: out of time", extra={"shard": shard})

    def _check_time(self) -> None:
        if self._remaining is not None and self._remaining() < SWEEP_TIME_MARGIN_SECONDS:
            raise _OutOfTime

    def _sweep_alone(self, shard: int, now: datetime, horizon: datetime) -> SweepResult:
        result = SweepResult()
        self._sweep_one(shard, now, horizon, result)
        return result

    def _sweep_shard(
        self, shard: int, now: datetime, horizon: datetime, result: SweepResult
    ) -> None:
        self._check_time()
        self._drain_late_markers(shard, now, horizon, result)
        watermark = self.due_index.read_watermark(shard)
        if watermark is None:
            watermark = now - timedelta(seconds=self.settings.MISFIRE_GRACE_SECONDS)
        if watermark >= horizon:
            return
        low = watermark + _MS
        hour = _floor_hour(low)
        while hour <= horizon:
            high = min(hour + _HOUR - _MS, horizon)
            sent_any = False
            bucket = keys.due_bucket(hour, shard)
            for page in self.due_index.query_bucket(
                bucket, format_instant(max(low, hour)), format_instant(high) + "#" + keys.SK_HIGH
            ):
                self._check_time()  # before sending what this page read
                result.queries += 1
                result.scanned_count += page.scanned_count
                self._send(page.entries, now, result, DispatchReason.SWEEP)
                sent_any = sent_any or bool(page.entries)
                if not page.last and page.entries:
                    self.due_index.advance_watermark(shard, page.entries[-1].publish_at - _MS)
            hour += _HOUR
            # A bucket that sent nothing needs no write of its own when another bucket follows
            # in this sweep: the last one's write covers it (a crash between them costs the
            # next sweep one re-read of an empty range, no re-send). Saves a write per shard at
            # each hour's turn.
            if sent_any or hour > horizon:
                self.due_index.advance_watermark(shard, high)

    def _drain_late_markers(
        self, shard: int, now: datetime, horizon: datetime, result: SweepResult
    ) -> None:
        markers, scanned = self.due_index.query_late_markers(shard)
        result.queries += 1
        result.scanned_count += scanned
        for marker in markers:
            if marker.publish_at > horizon:
                continue  # not due yet; a later sweep drains it
            entry = self.due_index.get_entry(marker.entry_bucket, marker.due)
            if entry is not None and entry.version == marker.version:
                if entry.enqueued_version == entry.version:
                    result.already_enqueued += 1
                else:
                    self._send([entry], now, result, DispatchReason.SWEEP)
                    # Sent out of watermark order, like a promotion, so marked like one: the
                    # entry may still lie ahead of this shard's watermark, and the bucket
                    # Query must skip it (only the in-order sends go unmarked: decision "The sweeper
                    # marks only what it sends out of watermark order").
                    if not self.due_index.mark_enqueued(entry, now):
                        result.duplicates += 1
            self.due_index.delete_late_marker(shard, marker.due)
            result.late_drained += 1

    def _send(
        self, entries: list[DueEntry], now: datetime, result: SweepResult, reason: DispatchReason
    ) -> None:
        todo = []
        for entry in entries:
            if entry.enqueued_version is not None and entry.enqueued_version >= entry.version:
                result.already_enqueued += 1
            else:
                todo.append(entry)
        if not todo:
            return
        outgoing = [
            Outgoing(
                DispatchMessage(
                    schedule_id=e.schedule_id,
                    version=e.version,
                    publish_at=e.publish_at,
                    attempt=1,
                    reason=reason,
                ),
                delay_until(e.publish_at, now),
            )
            for e in todo
        ]
        accepted = self.queue.send_batch(outgoing)
        result.enqueued += sum(accepted)
        if not all(accepted):
            raise _ShardIncomplete(f"{accepted.count(False)} message(s) not accepted by SQS")
