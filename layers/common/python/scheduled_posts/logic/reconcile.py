"""The reconciler: the safety net every other mechanism is judged by.

A scheduled Lambda (every ``RECONCILE_INTERVAL_SECONDS``), independent of the sweeper and the
workers. Each run:

1. Reads the due-index entries with ``publish_at`` in ``[now - RECONCILE_WINDOW_SECONDS,
   now - slack]`` (every hour bucket x every write shard ``0 .. WRITE_SHARD_COUNT-1``, one
   Query each, never a Scan), ``slack = 2 x SWEEP_INTERVAL_SECONDS``.
2. BatchGets those posts and compares each with its state:

   * ``scheduled`` (same version as the entry) overdue by more than the slack: its message was
     lost or never sent. A fresh dispatch message is sent (reason ``reconcile``); the worker
     claims it, or marks it ``missed`` past ``MISFIRE_GRACE_SECONDS``.
   * ``publishing`` whose lease expired more than the slack ago (the watchdog should have
     taken it within ``LEASE_SECONDS + WATCHDOG_INTERVAL_SECONDS``): the lease is taken over
     like the watchdog does (``status = publishing AND lease_token = :old``) and a message with
     the new token is sent.

3. Repairs the pending counter of every owner seen: ``pending - released`` is compared with
   the count of the owner's ``scheduled`` posts; a drift is only repaired when the previous run
   saw the same drift (stored on the ``PENDING`` item), so in-flight creates and claims (whose
   GSI entries lag) are never "repaired" away.
4. Emits ``ReconciliationMisses`` = posts rescued (0 when healthy) and ``PendingRepaired``.

One post's or owner's failure (a write DynamoDB refuses, a throttled call) never stops the
run: it is logged, counted (``failures``, the ``RescueFailures`` metric) and the run goes on to
every other post and owner; the handler fails the invocation afterwards for the Errors alarm,
and the next run retries what failed.

A rescue message duplicates nothing harmful: claims and lease take-overs are conditional, so at
most one message acts on a post (``docs/dispatch.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from scheduled_posts import keys
from scheduled_posts.clock import Clock, SystemClock, format_instant
from scheduled_posts.data.due_index import DueIndex
from scheduled_posts.data.post_store import PostStore
from scheduled_posts.data.queue import DispatchQueue
from scheduled_posts.data.reconcile import ReconcileStore
from scheduled_posts.errors import QueueSendError
from scheduled_posts.keys import new_lease_token
from scheduled_posts.lifecycle.metric_names import Metric
from scheduled_posts.models.messages import DispatchMessage, DispatchReason, DueEntry
from scheduled_posts.models.post import Post, PostStatus
from scheduled_posts.observability import logger, metrics
from scheduled_posts.settings import Settings


@dataclass
class ReconcileResult:
    """One run: entries read, posts rescued (``rescued``: ``schedule_id -> why``), owners whose
    pending counter was repaired (``owner -> drift removed``), and sends that failed."""

    entries_read: int = 0
    rescued: dict[str, str] = field(default_factory=dict)
    drift_seen: dict[str, int] = field(default_factory=dict)
    pending_repaired: dict[str, int] = field(default_factory=dict)
    send_failures: int = 0
    #: Posts or owners this run could not handle (an AWS error), retried by the next run.
    failures: int = 0

    @property
    def misses(self) -> int:
        """``ReconciliationMisses``: posts the other mechanisms had left behind."""
        return len(self.rescued)


def emit_rescue_failures(count: int) -> None:
    """``RescueFailures``: posts (or shards, owners) a watchdog or reconciler run could not
    handle, emitted when there were any."""
    if count:
        metrics.add_metric(
            name=Metric.RESCUE_FAILURES, unit=Metric.RESCUE_FAILURES.unit, value=count
        )


def slack_seconds(settings: Settings) -> int:
    """How overdue a post may be before it counts as a miss: 2 x ``SWEEP_INTERVAL_SECONDS``."""
    return 2 * settings.SWEEP_INTERVAL_SECONDS


def _hours(start: datetime, end: datetime) -> list[datetime]:
    hour = start.replace(minute=0, second=0, microsecond=0)
    hours = []
    while hour <= end:
        hours.append(hour)
        hour += timedelta(hours=1)
    return hours


class Reconciler:
    """See the module docstring. Every collaborator has a production default.

    Parameters
    ----------
    settings:
        Window, intervals, lease and resource names.
    due_index, store, dispatch, queue:
        :class:`DueIndex`, :class:`ReconcileStore`, :class:`PostStore` (lease take-over)
        and :class:`DispatchQueue`.
    clock:
        Default :class:`SystemClock`.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        due_index: DueIndex | None = None,
        store: ReconcileStore | None = None,
        dispatch: PostStore | None = None,
        queue: DispatchQueue | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.settings = settings
        self.due_index = due_index or DueIndex(settings.DUE_INDEX_TABLE_NAME)
        self.store = store or ReconcileStore(
            settings.POSTS_TABLE_NAME, settings.IDEMPOTENCY_TABLE_NAME
        )
        self.dispatch = dispatch or PostStore(settings.POSTS_TABLE_NAME)
        self.queue = queue or DispatchQueue.from_settings(settings)
        self.clock: Clock = clock or SystemClock()

    def run(self) -> ReconcileResult:
        """One reconciliation run (steps 1-4). Emits ``ReconciliationMisses`` every run.

        Raises
        ------
        botocore.exceptions.ClientError
            From reading the window (the scheduler retries the run; a half run is harmless).
            A failure of one post or owner is counted in ``failures`` instead.
        """
        result = ReconcileResult()
        now = self.clock.now()
        slack = timedelta(seconds=slack_seconds(self.settings))
        entries = self._window_entries(now, slack)
        result.entries_read = len(entries)
        posts = self.store.batch_get_posts([e.schedule_id for e in entries])
        owners: set[str] = set()
        for entry in entries:
            post = posts.get(entry.schedule_id)
            if post is None or post.is_expired(now):
                continue
            owners.add(post.owner)
            if post.version != entry.version:
                continue  # edited since: its current entry is elsewhere in the index
            try:
                why = self._rescue(post, now, slack, result)
            except Exception:  # one post never stops the run (module docstring)
                result.failures += 1
                logger.exception("reconcile rescue failed", extra={"schedule_id": post.schedule_id})
                continue
            if why is not None:
                result.rescued[post.schedule_id] = why
        if result.misses:
            logger.warning("reconciliation misses", extra={"rescued": result.rescued})
        for owner in sorted(owners):
            try:
                self._check_pending(owner, result)
            except Exception:
                result.failures += 1
                logger.exception("pending check failed", extra={"owner": owner})
        emit_rescue_failures(result.failures)
        metrics.add_metric(
            name=Metric.RECONCILIATION_MISSES,
            unit=Metric.RECONCILIATION_MISSES.unit,
            value=result.misses,
        )
        metrics.add_metric(
            name=Metric.PENDING_REPAIRED,
            unit=Metric.PENDING_REPAIRED.unit,
            value=len(result.pending_repaired),
        )
        return result

    # -- steps ---------------------------------------------------------------------------------

    def _window_entries(self, now: datetime, slack: timedelta) -> list[DueEntry]:
        start = now - timedelta(seconds=self.settings.RECONCILE_WINDOW_SECONDS)
        end = now - slack
        if end < start:
            return []
        low, high = format_instant(start), f"{format_instant(end)}#{keys.SK_HIGH}"
        entries: list[DueEntry] = []
        for hour in _hours(start, end):
            for shard in range(self.settings.WRITE_SHARD_COUNT):
                bucket = keys.due_bucket(hour, shard)
                for page in self.due_index.query_bucket(bucket, low, high):
                    entries.extend(page.entries)
        return entries

    def _rescue(
        self, post: Post, now: datetime, slack: timedelta, result: ReconcileResult
    ) -> str | None:
        """Send a rescue message when ``post`` was left behind; returns why, or None."""
        if post.status == PostStatus.SCHEDULED and post.publish_at + slack < now:
            message = DispatchMessage(
                schedule_id=post.schedule_id,
                version=post.version,
                publish_at=post.publish_at,
                reason=DispatchReason.RECONCILE,
            )
            why = "scheduled and overdue: its dispatch message was lost"
            return why if self._send(message, result) else None
        if (
            post.status == PostStatus.PUBLISHING
            and post.lease_token is not None
            and post.lease_expires_at is not None
            and post.lease_expires_at + slack < now
        ):
            taken = self.dispatch.renew_lease(
                post,
                new_token=new_lease_token(),
                lease_expires_at=now + timedelta(seconds=self.settings.LEASE_SECONDS),
                now=now,
                take_over=True,
            )
            if taken is None:
                return None  # the holder or the watchdog moved it meanwhile
            attempt = max((d.attempts for d in taken.deliveries.values()), default=0) + 1
            message = DispatchMessage(
                schedule_id=taken.schedule_id,
                version=taken.version,
                publish_at=taken.publish_at,
                attempt=attempt,
                lease_token=taken.lease_token,
                reason=DispatchReason.RECONCILE,
            )
            why = "publishing with a lease that expired long ago: lease taken over"
            return why if self._send(message, result) else None
        return None

    def _send(self, message: DispatchMessage, result: ReconcileResult) -> bool:
        try:
            self.queue.send(message, 0)
        except QueueSendError:
            result.send_failures += 1
            logger.exception("reconcile send failed", extra={"schedule_id": message.schedule_id})
            return False
        return True

    def _check_pending(self, owner: str, result: ReconcileResult) -> None:
        state = self.store.pending_state(owner)
        drift = state.counted - self.store.count_scheduled(owner)
        if drift == 0:
            if state.drift_seen is not None:
                self.store.record_drift(owner, drift=None, pending=state.pending)
            return
        result.drift_seen[owner] = drift
        if state.drift_seen == drift:
            if self.store.repair_pending(owner, drift=drift, pending=state.pending):
                result.pending_repaired[owner] = drift
                logger.warning("pending counter repaired", extra={"owner": owner, "drift": drift})
            return
        self.store.record_drift(owner, drift=drift, pending=state.pending)


def reconcile(settings: Settings, *, clock: Clock | None = None) -> ReconcileResult:
    """One run with the production collaborators (the Lambda's entry point)."""
    return Reconciler(settings, clock=clock).run()
