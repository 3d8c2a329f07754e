"""The watchdog: returns posts whose lease expired (a crashed or timed-out worker) to dispatch.

Per lease shard ``0 .. WRITE_SHARD_COUNT-1``: one Query of the sparse GSI ``by_lease`` for
``lease_expires_at < now`` (never a Scan; reads grow with expired leases only), a consistent
re-read of each post, then a take-over under ``status = publishing AND lease_token = :old``
with a new token and expiry, and one message carrying the new token (reason ``watchdog``).
A failed take-over means the holder renewed or finished meanwhile: nothing to do. Worst-case
lag it adds: ``LEASE_SECONDS + WATCHDOG_INTERVAL_SECONDS`` (see ``docs/dispatch.md``).

One post's failure (a throttled read or take-over, a refused send) or one shard's failed
Query never stops the run: the others are still rescued, and the failures are counted
(``failures``, the ``RescueFailures`` metric) so the handler can fail the invocation for the
Errors alarm afterwards. A failed post keeps its expired lease, so the next run takes it over.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from scheduled_posts.clock import Clock, SystemClock
from scheduled_posts.data.post_store import PostStore
from scheduled_posts.data.queue import DispatchQueue
from scheduled_posts.errors import QueueSendError
from scheduled_posts.keys import new_lease_token
from scheduled_posts.lifecycle.metric_names import Metric
from scheduled_posts.models.messages import DispatchMessage, DispatchReason
from scheduled_posts.models.post import PostStatus
from scheduled_posts.observability import logger, metrics
from scheduled_posts.settings import Settings


@dataclass
class WatchdogResult:
    """What one watchdog run did: ids taken over and re-sent, and how many expired leases it saw."""

    expired_seen: int = 0
    taken_over: list[str] = field(default_factory=list)
    send_failures: int = 0
    #: Posts or shards this run could not handle (an AWS error), retried by the next run.
    failures: int = 0


def rescue_expired_leases(
    settings: Settings,
    *,
    store: PostStore | None = None,
    queue: DispatchQueue | None = None,
    clock: Clock | None = None,
) -> WatchdogResult:
    """Take over every expired lease and re-dispatch its post (see the module docstring).

    A send that fails after the take-over hands the new lease back (it expires ``now``), so the
    next run takes the post over again: a refused send costs one ``WATCHDOG_INTERVAL_SECONDS``.
    """
    store = store or PostStore(settings.POSTS_TABLE_NAME)
    queue = queue or DispatchQueue.from_settings(settings)
    clock = clock or SystemClock()
    result = WatchdogResult()
    now = clock.now()
    for shard in range(settings.WRITE_SHARD_COUNT):
        try:
            for schedule_id in store.expired_leases(shard, now):
                result.expired_seen += 1
                try:
                    _rescue(schedule_id, settings, store=store, queue=queue, now=now, result=result)
                except Exception:
                    result.failures += 1
                    logger.exception("lease rescue failed", extra={"schedule_id": schedule_id})
        except Exception:
            result.failures += 1
            logger.exception("expired lease query failed", extra={"shard": shard})
    if result.failures:
        metrics.add_metric(
            name=Metric.RESCUE_FAILURES, unit=Metric.RESCUE_FAILURES.unit, value=result.failures
        )
    if result.taken_over:
        metrics.add_metric(
            name=Metric.LEASES_TAKEN_OVER,
            unit=Metric.LEASES_TAKEN_OVER.unit,
            value=len(result.taken_over),
        )
    return result


def _rescue(
    schedule_id: str,
    settings: Settings,
    *,
    store: PostStore,
    queue: DispatchQueue,
    now: datetime,
    result: WatchdogResult,
) -> None:
    """Take over one expired lease and re-dispatch the post (nothing when it moved on)."""
    post = store.get_post(schedule_id)
    if (
        post is None
        or post.status != PostStatus.PUBLISHING
        or post.lease_token is None
        or (post.lease_expires_at is not None and post.lease_expires_at > now)
    ):
        return
    taken = store.renew_lease(
        post,
        new_token=new_lease_token(),
        lease_expires_at=now + timedelta(seconds=settings.LEASE_SECONDS),
        now=now,
        take_over=True,
    )
    if taken is None:
        return
    attempt = max((d.attempts for d in taken.deliveries.values()), default=0) + 1
    message = DispatchMessage(
        schedule_id=schedule_id,
        version=taken.version,
        publish_at=taken.publish_at,
        attempt=attempt,
        lease_token=taken.lease_token,
        reason=DispatchReason.WATCHDOG,
    )
    try:
        queue.send(message, 0)
    except QueueSendError:
        result.send_failures += 1
        logger.exception("watchdog send failed", extra={"schedule_id": schedule_id})
        # no message carries the new token: expire it now, so the next run (not one
        # LEASE_SECONDS after it) takes the post over again
        store.hand_back_lease(taken, now=now)
        return
    result.taken_over.append(schedule_id)
    logger.warning("lease taken over", extra={"schedule_id": schedule_id})
