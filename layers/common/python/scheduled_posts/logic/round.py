"""Steps 4-5 of the publish worker: deliver a post's due channels, record the round.

The channels due in this round are delivered concurrently (``logic/delivery.py``); the round is
recorded in one transaction on the lease token (``lifecycle.transitions.record_round`` while
channels are still owed, ``complete`` when none is), then either a follow-up message continues
the post at the earliest ``next_attempt_at`` or the post is finished.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from enum import StrEnum

from scheduled_posts.clock import Clock, epoch_seconds
from scheduled_posts.data.post_store import PostStore
from scheduled_posts.data.queue import DispatchQueue, delay_until
from scheduled_posts.errors import QueueSendError
from scheduled_posts.lifecycle import outcomes, transitions
from scheduled_posts.lifecycle.metric_names import Metric
from scheduled_posts.lifecycle.outcomes import ChannelRound
from scheduled_posts.lifecycle.states import DeliveryStatus, PostStatus
from scheduled_posts.logic.delivery import ChannelDeliverer, attempts_expire_at
from scheduled_posts.models.messages import DispatchMessage, DispatchReason
from scheduled_posts.models.post import Attempt, Delivery, Post
from scheduled_posts.observability import logger, metrics, tracer
from scheduled_posts.settings import Settings

#: At most this many channels are delivered at once (a post has at most 10 channels).
MAX_CONCURRENT_DELIVERIES = 10


class RecordOutcome(StrEnum):
    """What processing one message did (returned to the batch processor; for logs and tests)."""

    DEFERRED = "deferred"
    DROPPED = "dropped"
    MISSED = "missed"
    RETRY_SCHEDULED = "retry_scheduled"
    COMPLETED = "completed"


class DeliveryInProgressError(Exception):
    """A delivery of this post is in progress in another invocation (Powertools
    ``IdempotencyAlreadyInProgressError``). The record is reported as a batch item failure;
    the channel was already rescheduled under this worker's lease."""


def emit(metric: Metric, value: float = 1) -> None:
    """Add one data point of ``metric`` (its own unit) to the invocation's metrics."""
    metrics.add_metric(name=metric, unit=metric.unit, value=value)


def drop(message: DispatchMessage, why: str) -> RecordOutcome:
    """Drop ``message`` quietly (stale, lost claim or lease), counted as ``StaleDropped``."""
    emit(Metric.STALE_DROPPED)
    logger.info("dropped", extra={"schedule_id": message.schedule_id, "why": why})
    return RecordOutcome.DROPPED


def _fold(
    rounds: dict[str, ChannelRound], *, completing: bool
) -> tuple[dict[str, Delivery], list[Attempt]]:
    """The deliveries and attempt rows a round writes (decision "The round's attempts live on the
    post item where they can").

    In the round that completes the post, a published attempt is folded into its delivery
    (``started_at``, ``http_status``; the rest of the attempt is already there) instead of an
    ``ATTEMPT#`` row, so the usual one-channel post ends with one ``UpdateItem`` and no
    transaction. Every other attempt gets its row, and its delivery drops the start mark.
    """
    changed: dict[str, Delivery] = {}
    rows: list[Attempt] = []
    for cid, r in rounds.items():
        attempt = r.attempt
        if completing and attempt is not None and r.delivery.status == DeliveryStatus.PUBLISHED:
            folded = {"started_at": attempt.started_at, "http_status": attempt.http_status}
            changed[cid] = r.delivery.model_copy(update=folded)
            continue
        changed[cid] = r.delivery.model_copy(update={"started_at": None, "http_status": None})
        if attempt is not None:
            rows.append(attempt)
    return changed, rows


class RoundRecorder:
    """Runs one delivery round of a post held under this worker's lease (``settings``,
    ``store``, ``queue``, ``deliverer`` and ``clock`` as the :class:`Publisher`'s)."""

    def __init__(
        self,
        settings: Settings,
        *,
        store: PostStore,
        queue: DispatchQueue,
        deliverer: ChannelDeliverer,
        clock: Clock,
    ) -> None:
        self.settings = settings
        self.store = store
        self.queue = queue
        self.deliverer = deliverer
        self.clock = clock

    @tracer.capture_method
    def _deliver(self, post: Post, due: list[str], started_at: datetime) -> dict[str, ChannelRound]:
        """Deliver each due channel (concurrently, at most ``MAX_CONCURRENT_DELIVERIES``); each
        channel's round, in ``due``'s order. Emits ``PublishLagSeconds`` per published one."""
        if not due:
            return {}
        with ThreadPoolExecutor(max_workers=min(MAX_CONCURRENT_DELIVERIES, len(due))) as pool:
            futures = {
                cid: pool.submit(self.deliverer.deliver, post, cid, started_at) for cid in due
            }
            rounds = {cid: future.result() for cid, future in futures.items()}
        for cid, r in rounds.items():
            if r.delivery.status == DeliveryStatus.PUBLISHED and r.delivery.lag_seconds is not None:
                emit(Metric.PUBLISH_LAG_SECONDS, r.delivery.lag_seconds)
                logger.info(
                    "delivered",
                    extra={
                        "schedule_id": post.schedule_id,
                        "channel_id": cid,
                        "lag_seconds": r.delivery.lag_seconds,
                    },
                )
        return rounds

    def run(
        self, post: Post, message: DispatchMessage, *, started_at: datetime | None = None
    ) -> RecordOutcome:
        """Deliver the due channels of ``post`` and record the round; the outcome of the message.

        ``started_at`` is the instant the lease write marked the due channels' attempts started
        (default: now).

        Raises
        ------
        DeliveryInProgressError
            A channel is being delivered by another invocation (after the round was recorded).
        """
        started_at = started_at or self.clock.now()
        current = outcomes.current_deliveries(post)
        due = outcomes.due_channels(current, started_at)
        rounds = self._deliver(post, due, started_at)
        current.update({cid: r.delivery for cid, r in rounds.items()})
        now = self.clock.now()
        owed = outcomes.owed(current)
        changed, attempts = _fold(rounds, completing=not owed)
        next_at = max(now, min(d.next_attempt_at or now for d in owed)) if owed else None
        completion = None
        if next_at is not None:
            change = transitions.record_round(
                post,
                deliveries=changed,
                now=now,
                lease_expires_at=next_at + timedelta(seconds=self.settings.LEASE_SECONDS),
            )
        else:
            completion = outcomes.completion(
                current,
                expires_at=epoch_seconds(now + timedelta(days=self.settings.RETENTION_DAYS)),
            )
            change = transitions.complete(post, deliveries=changed, completion=completion, now=now)
        if not self.store.save_round(
            change, attempts=attempts, attempts_expire_at=attempts_expire_at(self.settings, now)
        ):
            return drop(message, "lease lost before the round was recorded")
        if completion is not None:
            return self._finished(post, completion)
        assert next_at is not None
        return self._follow_up(post, message, rounds=rounds, owed=owed, next_at=next_at, now=now)

    def _follow_up(
        self,
        post: Post,
        message: DispatchMessage,
        *,
        rounds: dict[str, ChannelRound],
        owed: list[Delivery],
        next_at: datetime,
        now: datetime,
    ) -> RecordOutcome:
        """Send the message that continues the post at ``next_at`` under the same lease."""
        only_rate_limited = bool(rounds) and all(
            r.rate_limited for r in rounds.values() if r.delivery in owed
        )
        follow_up = DispatchMessage(
            schedule_id=post.schedule_id,
            version=post.version,
            publish_at=post.publish_at,
            attempt=message.attempt + 1,
            lease_token=post.lease_token,
            not_before=next_at,
            reason=DispatchReason.RATE_LIMIT if only_rate_limited else DispatchReason.RETRY,
        )
        try:
            self.queue.send(follow_up, delay_until(next_at, now))
        except QueueSendError:  # the lease expires and the watchdog re-dispatches
            logger.exception("retry send failed", extra={"schedule_id": post.schedule_id})
        emit(Metric.RETRIED)
        if any(r.in_progress for r in rounds.values()):
            raise DeliveryInProgressError(post.schedule_id)
        return RecordOutcome.RETRY_SCHEDULED

    def _finished(self, post: Post, completion: outcomes.Completion) -> RecordOutcome:
        emit(Metric.FAILED if completion.status == PostStatus.FAILED else Metric.PUBLISHED)
        logger.info(
            "finished",
            extra={
                "schedule_id": post.schedule_id,
                "status": completion.status.value,
                "publish_lag_seconds": completion.publish_lag_seconds,
            },
        )
        return RecordOutcome.COMPLETED
