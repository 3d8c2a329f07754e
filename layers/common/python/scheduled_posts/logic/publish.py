"""The publish worker's logic: one dispatch message -> at most one accepted delivery per channel.

Per message (``docs/dispatch.md`` has the whole path and the state machine):

1. **Never early.** ``target = max(publish_at, not_before)`` by the worker's clock: a remainder
   of at most 1 s is waited out (``clock.sleep``); a longer one goes back to the queue as a fresh
   message with the remaining delay (chained past the 900 s SQS limit through ``not_before``).
2. **Stale?** Consistent read of the post; missing, expired, another version, or terminal ->
   dropped quietly (``StaleDropped``).
3. **Claim or continue.** ``scheduled``: overdue past ``MISFIRE_GRACE_SECONDS`` -> ``missed``;
   else claimed (``status = scheduled AND version = :v``) with a new lease. ``publishing``: only
   a message carrying the current lease token continues, renewing the lease with a new token
   (so a duplicate of that message finds the token gone and is dropped).
4. **Deliver** to every owed channel whose ``next_attempt_at`` has passed, concurrently (at
   most 10 threads), each under Powertools idempotency keyed on ``<schedule_id>:<channel_id>``.
5. **Record** the round in one transaction on the lease token; retry what is still owed with
   full-jitter backoff (429: ``Retry-After``, no attempt used, bounded by the misfire grace), or
   finish the post ``published`` / ``partially_published`` / ``failed``.
6. **Last receive.** A record about to fail on its ``MAX_RECEIVE_COUNT - 1``-th receive turns
   its post ``failed`` (best effort) so nothing stays non-terminal behind a poison message.

This module holds steps 1-3 (gate, stale check, claim); steps 4-5 are ``logic/round.py`` (the
round) and ``logic/delivery.py`` (one channel), step 6 ``logic/dead_letter.py``; the decisions
are ``lifecycle/outcomes.py`` and the state changes ``lifecycle/transitions.py``, applied by
``data/post_store.py``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from aws_lambda_powertools.utilities.idempotency.persistence.base import BasePersistenceLayer

from scheduled_posts.clock import Clock, SystemClock, epoch_seconds
from scheduled_posts.data.post_store import PostStore
from scheduled_posts.data.queue import DispatchQueue, delay_until
from scheduled_posts.data.rate_limit import RateLimitStore
from scheduled_posts.keys import new_lease_token
from scheduled_posts.lifecycle import outcomes
from scheduled_posts.lifecycle.backoff import Uniform
from scheduled_posts.lifecycle.metric_names import Metric
from scheduled_posts.lifecycle.reasons import missed_reason
from scheduled_posts.lifecycle.states import TERMINAL_POST_STATUSES, PostStatus
from scheduled_posts.logic.dead_letter import fail_dead_lettered
from scheduled_posts.logic.delivery import (
    RETRY_HORIZON_SECONDS,
    ChannelDeliverer,
    attempts_expire_at,
)
from scheduled_posts.logic.rate_limit import RateLimiter
from scheduled_posts.logic.round import (
    MAX_CONCURRENT_DELIVERIES,
    DeliveryInProgressError,
    RecordOutcome,
    RoundRecorder,
    drop,
    emit,
)
from scheduled_posts.models.messages import DispatchMessage
from scheduled_posts.models.post import Attempt, Post
from scheduled_posts.observability import logger, tracer
from scheduled_posts.platforms.base import PlatformAdapter
from scheduled_posts.settings import Settings

__all__ = [
    "MAX_CONCURRENT_DELIVERIES",
    "RETRY_HORIZON_SECONDS",
    "DeliveryInProgressError",
    "Publisher",
    "RecordOutcome",
    "new_lease_token",
]

#: At most this many channels are delivered at once (a post has at most 10 channels).
MAX_IN_WORKER_WAIT_SECONDS = 1.0


class Publisher:
    """Processes dispatch messages. Every collaborator is a parameter with a production default,
    so tests and the fault suite can wrap them.

    Parameters
    ----------
    settings:
        Timing and retry settings and resource names.
    store, queue:
        :class:`PostStore` and :class:`DispatchQueue` (default: the production ones).
    adapters:
        ``platform -> PlatformAdapter`` (default: the registry's adapter for every known platform).
    clock:
        The worker's clock, the only gate of "never early" (default :class:`SystemClock`).
    uniform:
        Random source of the backoff jitter (default :func:`random.uniform`).
    persistence:
        The Powertools persistence layer of the delivery idempotency records (default: a
        ``DynamoDBPersistenceLayer`` on ``IDEMPOTENCY_TABLE_NAME``, used by nothing else).
    rate_limiter:
        Per-channel delivery-start slots (default: a :class:`RateLimiter` on ``PostsTable``).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        store: PostStore | None = None,
        queue: DispatchQueue | None = None,
        adapters: Mapping[str, PlatformAdapter] | None = None,
        clock: Clock | None = None,
        uniform: Uniform = random.uniform,
        persistence: BasePersistenceLayer | None = None,
        rate_limiter: RateLimiter | None = None,
    ) -> None:
        self.settings = settings
        self.store = store or PostStore(settings.POSTS_TABLE_NAME)
        self.queue = queue or DispatchQueue.from_settings(settings)
        if adapters is None:
            from scheduled_posts.logic.network_delivery import default_adapters

            adapters = default_adapters(settings)
        self.clock: Clock = clock or SystemClock()
        self.deliverer = ChannelDeliverer(
            settings,
            store=self.store,
            adapters=adapters,
            clock=self.clock,
            rate_limiter=rate_limiter or RateLimiter(RateLimitStore(settings.POSTS_TABLE_NAME)),
            persistence=persistence,
            uniform=uniform,
        )
        self.rounds = RoundRecorder(
            settings, store=self.store, queue=self.queue, deliverer=self.deliverer, clock=self.clock
        )

    # -- entry point ---------------------------------------------------------------------------

    @tracer.capture_method
    def process(
        self, message: DispatchMessage, *, receive_count: int = 1, context: Any = None
    ) -> RecordOutcome:
        """Process one dispatch message (steps 1-6 of the module docstring).

        ``receive_count`` is SQS's ``ApproximateReceiveCount``; ``context`` the Lambda context
        (registered with the idempotency config on every call, so an in-progress record does
        not outlive a timeout).

        Raises
        ------
        DeliveryInProgressError
            Another invocation is delivering one of the channels: report a batch item failure.
        Exception
            Anything unexpected (DynamoDB, SQS): the record fails and SQS redelivers it; on the
            last receive before the dead-letter queue the post is turned ``failed`` first.
        """
        if context is not None:
            self.deliverer.idempotency_config.register_lambda_context(context)
        try:
            return self._process(message)
        except DeliveryInProgressError:
            raise
        except Exception as exc:
            if receive_count >= self.settings.MAX_RECEIVE_COUNT - 1:
                fail_dead_lettered(
                    message,
                    exc,
                    store=self.store,
                    clock=self.clock,
                    retention_days=self.settings.RETENTION_DAYS,
                    release_pending=self._release_pending,
                )
            raise

    # -- steps 1-3: gate, stale check, claim or continue ----------------------------------------

    def _process(self, message: DispatchMessage) -> RecordOutcome:
        target = max(message.publish_at, message.not_before or message.publish_at)
        if not self._wait_until(target, message):
            return RecordOutcome.DEFERRED

        post = self.store.get_post(message.schedule_id)
        now = self.clock.now()
        if (
            post is None
            or post.is_expired(now)
            or post.version != message.version
            or post.status in TERMINAL_POST_STATUSES
        ):
            return self._drop(message, "stale")
        if now < post.publish_at:  # belt and braces: the stored time gates too
            if not self._wait_until(post.publish_at, message):
                return RecordOutcome.DEFERRED
            now = self.clock.now()
        held = self._hold(post, message, now)
        if isinstance(held, RecordOutcome):
            return held
        return self.rounds.run(held, message, started_at=now)

    @tracer.capture_method
    def _hold(self, post: Post, message: DispatchMessage, now: datetime) -> Post | RecordOutcome:
        """Claim a ``scheduled`` post (or miss it when overdue), or continue a ``publishing``
        one as the lease holder; the post under this worker's lease, or the outcome.

        The lease write also marks the attempts of the channels due at ``now`` as started (the
        delivery's ``started_at``), in place of one ``started`` row per attempt; a mark left by
        a round that never recorded itself (a crash) is first kept as its own row."""
        lease_expires_at = now + timedelta(seconds=self.settings.LEASE_SECONDS)
        due = tuple(outcomes.due_channels(outcomes.current_deliveries(post), now))
        if post.status == PostStatus.SCHEDULED:
            lag = (now - post.publish_at).total_seconds()
            if lag > self.settings.MISFIRE_GRACE_SECONDS:
                return self._miss(post, now, lag)
            claimed = self.store.claim(
                post,
                lease_token=new_lease_token(),
                lease_expires_at=lease_expires_at,
                now=now,
                starting=due,
            )
            if claimed is None:
                return self._drop(message, "claim lost")
            self._release_pending(claimed)
            logger.info("claimed", extra={"schedule_id": post.schedule_id, "lag_seconds": lag})
            return claimed
        if message.lease_token is None or message.lease_token != post.lease_token:
            return self._drop(message, "not the lease holder")
        self._keep_unrecorded_starts(post, due)
        renewed = self.store.renew_lease(
            post,
            new_token=new_lease_token(),
            lease_expires_at=lease_expires_at,
            now=now,
            starting=due,
        )
        return renewed if renewed is not None else self._drop(message, "lease lost")

    def _keep_unrecorded_starts(self, post: Post, due: tuple[str, ...]) -> None:
        """Write a ``started`` row for each attempt marked on the item by a round that never
        recorded itself (the new mark is about to replace it); the same key every time, so a
        repeat after a crash writes the same row."""
        for cid in due:
            delivery = post.deliveries.get(cid)
            if delivery is None or delivery.started_at is None:
                continue
            started = Attempt(
                channel_id=cid,
                attempt=delivery.attempts + 1,
                started_at=delivery.started_at,
                outcome="started",
            )
            self.store.put_attempt(
                post.schedule_id,
                started,
                expires_at=attempts_expire_at(self.settings, delivery.started_at),
            )

    def _wait_until(self, target: datetime, message: DispatchMessage) -> bool:
        """True when ``target`` has been reached (after at most a 1 s in-worker wait); False when
        the message was sent back with the remaining delay."""
        remaining = (target - self.clock.now()).total_seconds()
        if remaining <= 0:
            return True
        if remaining <= MAX_IN_WORKER_WAIT_SECONDS:
            self.clock.sleep(remaining)
            return self.clock.now() >= target or self._wait_until(target, message)
        again = message.model_copy(update={"not_before": target})
        self.queue.send(again, delay_until(target, self.clock.now()))
        logger.info(
            "deferred",
            extra={"schedule_id": message.schedule_id, "remaining_seconds": remaining},
        )
        return False

    def _drop(self, message: DispatchMessage, why: str) -> RecordOutcome:
        return drop(message, why)

    def _retention(self, now: datetime) -> int:
        return epoch_seconds(now + timedelta(days=self.settings.RETENTION_DAYS))

    def _miss(self, post: Post, now: datetime, lag: float) -> RecordOutcome:
        reason = missed_reason(self.settings.MISFIRE_GRACE_SECONDS, lag)
        if not self.store.mark_missed(
            post, reason=reason, now=now, expires_at=self._retention(now)
        ):
            return RecordOutcome.DROPPED
        self._release_pending(post)
        emit(Metric.MISSED)
        logger.warning("missed", extra={"schedule_id": post.schedule_id, "lag_seconds": lag})
        return RecordOutcome.MISSED

    def _release_pending(self, post: Post) -> None:
        """Best effort (the reconciler repairs the counter; never fail the post for it)."""
        self.store.release_pending(owner=post.owner, schedule_id=post.schedule_id)

    # -- steps 4-5: deliver the due channels, record the round -----------------------------------
