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
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.base import BasePersistenceLayer

from scheduled_posts.clock import Clock, SystemClock, epoch_seconds, format_instant
from scheduled_posts.clock import instant_from_storage as parse_stored
from scheduled_posts.data.dispatch import Completion, DispatchStore
from scheduled_posts.data.queue import DispatchQueue, delay_until
from scheduled_posts.data.rate_limit import RateLimitStore
from scheduled_posts.errors import QueueSendError, RetryableDeliveryError
from scheduled_posts.logic.backoff import Uniform, full_jitter
from scheduled_posts.logic.rate_limit import RateLimiter
from scheduled_posts.models.messages import DispatchMessage, DispatchReason
from scheduled_posts.models.post import (
    TERMINAL_DELIVERY_STATUSES,
    TERMINAL_POST_STATUSES,
    Attempt,
    Channel,
    Delivery,
    DeliveryStatus,
    Post,
    PostStatus,
)
from scheduled_posts.observability import logger, metrics
from scheduled_posts.platforms.base import DeliveryRequest, DeliveryResult, PlatformAdapter
from scheduled_posts.settings import Settings

#: At most this many channels are delivered at once (a post has at most 10 channels).
MAX_CONCURRENT_DELIVERIES = 10
#: A remainder this short (seconds) is waited out in the worker instead of re-queued.
MAX_IN_WORKER_WAIT_SECONDS = 1.0
#: How long past ``MISFIRE_GRACE_SECONDS`` the idempotency records of deliveries live: it covers
#: the retry horizon (6 attempts capped at 900 s is about 1.5 h; 429 waits stop at the grace).
RETRY_HORIZON_SECONDS = 86_400


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


@dataclass
class _ChannelRound:
    delivery: Delivery
    attempt: Attempt | None
    in_progress: bool = False
    rate_limited: bool = False


def new_lease_token() -> str:
    """A fresh, unguessable lease token."""
    return uuid.uuid4().hex


class Publisher:
    """Processes dispatch messages. Every collaborator is a parameter with a production default,
    so tests and the fault suite can wrap them.

    Parameters
    ----------
    settings:
        Timing and retry settings and resource names.
    store, queue:
        :class:`DispatchStore` and :class:`DispatchQueue` (default: the production ones).
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
        store: DispatchStore | None = None,
        queue: DispatchQueue | None = None,
        adapters: Mapping[str, PlatformAdapter] | None = None,
        clock: Clock | None = None,
        uniform: Uniform = random.uniform,
        persistence: BasePersistenceLayer | None = None,
        rate_limiter: RateLimiter | None = None,
    ) -> None:
        self.settings = settings
        self.rate_limiter = rate_limiter or RateLimiter(RateLimitStore(settings.POSTS_TABLE_NAME))
        self.store = store or DispatchStore(settings.POSTS_TABLE_NAME)
        self.queue = queue or DispatchQueue(settings.DISPATCH_QUEUE_URL)
        if adapters is None:
            from scheduled_posts.platforms.registry import KNOWN_PLATFORMS, get_adapter

            adapters = {name: get_adapter(name, settings=settings) for name in KNOWN_PLATFORMS}
        self.adapters = dict(adapters)
        self.clock: Clock = clock or SystemClock()
        self.uniform = uniform
        self.idempotency_config = IdempotencyConfig(
            event_key_jmespath="idempotency_key",
            raise_on_no_idempotency_key=True,
            expires_after_seconds=settings.MISFIRE_GRACE_SECONDS + RETRY_HORIZON_SECONDS,
        )
        persistence_layer = persistence or DynamoDBPersistenceLayer(
            table_name=settings.IDEMPOTENCY_TABLE_NAME
        )
        self._deliver_once = idempotent_function(
            self._deliver_raw,
            data_keyword_argument="key",
            persistence_store=persistence_layer,
            config=self.idempotency_config,
            key_prefix="deliver",
        )

    # -- entry point ---------------------------------------------------------------------------

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
            self.idempotency_config.register_lambda_context(context)
        try:
            return self._process(message)
        except DeliveryInProgressError:
            raise
        except Exception as exc:
            if receive_count >= self.settings.MAX_RECEIVE_COUNT - 1:
                self._fail_dead_lettered(message, exc)
            raise

    # -- steps ---------------------------------------------------------------------------------

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

        if post.status == PostStatus.SCHEDULED:
            lag = (now - post.publish_at).total_seconds()
            if lag > self.settings.MISFIRE_GRACE_SECONDS:
                return self._miss(post, now, lag)
            claimed = self.store.claim(
                post,
                lease_token=new_lease_token(),
                lease_expires_at=now + timedelta(seconds=self.settings.LEASE_SECONDS),
                now=now,
            )
            if claimed is None:
                return self._drop(message, "claim lost")
            self._release_pending(claimed)
            logger.info("claimed", extra={"schedule_id": post.schedule_id, "lag_seconds": lag})
            post = claimed
        else:  # publishing
            if message.lease_token is None or message.lease_token != post.lease_token:
                return self._drop(message, "not the lease holder")
            renewed = self.store.renew_lease(
                post.schedule_id,
                old_token=message.lease_token,
                new_token=new_lease_token(),
                lease_expires_at=now + timedelta(seconds=self.settings.LEASE_SECONDS),
                now=now,
            )
            if renewed is None:
                return self._drop(message, "lease lost")
            post = renewed
        return self._deliver_round(post, message)

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
        metrics.add_metric(name="StaleDropped", unit="Count", value=1)
        logger.info("dropped", extra={"schedule_id": message.schedule_id, "why": why})
        return RecordOutcome.DROPPED

    def _retention(self, now: datetime) -> int:
        return epoch_seconds(now + timedelta(days=self.settings.RETENTION_DAYS))

    def _miss(self, post: Post, now: datetime, lag: float) -> RecordOutcome:
        reason = (
            f"not dispatched within MISFIRE_GRACE_SECONDS={self.settings.MISFIRE_GRACE_SECONDS}"
            f" of publish_at (overdue by {lag:.0f} s when a worker received it)"
        )
        if not self.store.mark_missed(
            post, reason=reason, now=now, expires_at=self._retention(now)
        ):
            return RecordOutcome.DROPPED
        self._release_pending(post)
        metrics.add_metric(name="Missed", unit="Count", value=1)
        logger.warning("missed", extra={"schedule_id": post.schedule_id, "lag_seconds": lag})
        return RecordOutcome.MISSED

    def _release_pending(self, post: Post) -> None:
        try:
            self.store.release_pending(owner=post.owner, schedule_id=post.schedule_id)
        except Exception:  # the reconciler repairs the counter; never fail the post for it
            logger.exception("pending release failed", extra={"schedule_id": post.schedule_id})

    # -- delivery round -------------------------------------------------------------------------

    def _deliver_raw(
        self,
        *,
        key: dict[str, str],
        adapter: PlatformAdapter,
        channel: Channel,
        request: DeliveryRequest,
    ) -> dict[str, Any]:
        """The idempotent section: returns only final outcomes, raises on retryable ones."""
        now = self.clock.now()
        result = adapter.deliver(channel, request, now=now)
        return {**result.model_dump(mode="json"), "delivered_at": format_instant(now)}

    def _deliver_channel(self, post: Post, channel_id: str, started_at: datetime) -> _ChannelRound:
        delivery = post.deliveries.get(channel_id) or Delivery(channel_id=channel_id)
        number = delivery.attempts + 1
        attempts_expire = self._attempts_expire_at(started_at)
        channel = self.store.get_channel(post.owner, channel_id)
        if channel is None:
            skipped = delivery.model_copy(
                update={"status": DeliveryStatus.SKIPPED, "last_error": "channel was deleted"}
            )
            attempt = Attempt(
                channel_id=channel_id,
                attempt=number,
                started_at=started_at,
                finished_at=started_at,
                outcome="skipped",
                error="channel was deleted",
            )
            return _ChannelRound(skipped, attempt)
        if channel.rate_limit_per_minute:
            waiting = self._rate_limit_wait(delivery, channel, started_at)
            if waiting is not None:
                return waiting
            delivery = delivery.model_copy(update={"rate_slot": None})
        started = Attempt(
            channel_id=channel_id, attempt=number, started_at=started_at, outcome="started"
        )
        self.store.put_attempt(post.schedule_id, started, expires_at=attempts_expire)
        adapter = self.adapters.get(channel.platform)
        try:
            if adapter is None:
                raise LookupError(f"no adapter for platform {channel.platform!r}")
            request = DeliveryRequest(
                schedule_id=post.schedule_id,
                channel_id=channel_id,
                content=post.content,
                media_ids=tuple(post.media_ids),
                publish_at=post.publish_at,
                attempt=number,
                idempotency_key=f"{post.schedule_id}:{channel_id}",
            )
            data = self._deliver_once(
                key={"idempotency_key": request.idempotency_key},
                adapter=adapter,
                channel=channel,
                request=request,
            )
        except IdempotencyAlreadyInProgressError:
            return self._in_progress(post, delivery, started)
        except RetryableDeliveryError as exc:
            return self._retryable(post, delivery, started, exc)
        except LookupError as exc:
            return self._final(
                post,
                delivery,
                started,
                DeliveryResult(outcome="failed", error=str(exc)),
                self.clock.now(),
            )
        except Exception as exc:  # an adapter bug or a persistence error: retry like a 5xx
            logger.exception("delivery error", extra={"schedule_id": post.schedule_id})
            return self._retryable(post, delivery, started, RetryableDeliveryError(repr(exc)))
        result = DeliveryResult.model_validate(
            {k: v for k, v in data.items() if k != "delivered_at"}
        )
        delivered_at = parse_stored(data["delivered_at"]) if data.get("delivered_at") else None
        return self._final(post, delivery, started, result, delivered_at or self.clock.now())

    def _rate_limit_wait(
        self, delivery: Delivery, channel: Channel, now: datetime
    ) -> _ChannelRound | None:
        """None when the delivery holds a slot of the current minute and starts now; otherwise
        the round that makes it wait for its slot (``logic/rate_limit.py``): no attempt used,
        ``next_attempt_at`` = the slot's minute, never failed for it."""
        limit = int(channel.rate_limit_per_minute or 0)
        decision = self.rate_limiter.acquire(
            channel.channel_id, limit=limit, now=now, held=delivery.rate_slot
        )
        if decision.may_start(now):
            return None
        wait = (decision.start_at - now).total_seconds()
        metrics.add_metric(name="RateLimitWaitSeconds", unit="Seconds", value=wait)
        logger.info(
            "rate limited",
            extra={"channel_id": channel.channel_id, "slot": decision.slot, "wait_seconds": wait},
        )
        waiting = delivery.model_copy(
            update={
                "next_attempt_at": decision.start_at,
                "rate_slot": decision.slot,
                "last_error": f"waiting for a rate-limit slot (rate_limit_per_minute={limit})",
            }
        )
        return _ChannelRound(waiting, None, rate_limited=True)

    def _attempts_expire_at(self, now: datetime) -> int:
        return epoch_seconds(
            now
            + timedelta(days=self.settings.RETENTION_DAYS)
            + timedelta(seconds=self.settings.MISFIRE_GRACE_SECONDS + RETRY_HORIZON_SECONDS)
        )

    def _final(
        self,
        post: Post,
        delivery: Delivery,
        started: Attempt,
        result: DeliveryResult,
        finished_at: datetime,
    ) -> _ChannelRound:
        number = started.attempt
        if result.outcome == "published":
            lag = max(0.0, (finished_at - post.publish_at).total_seconds())
            new = delivery.model_copy(
                update={
                    "status": DeliveryStatus.PUBLISHED,
                    "attempts": number,
                    "remote_id": result.remote_id,
                    "published_at": finished_at,
                    "last_error": None,
                    "next_attempt_at": None,
                    "lag_seconds": lag,
                }
            )
            attempt = started.model_copy(
                update={
                    "finished_at": finished_at,
                    "outcome": "published",
                    "http_status": result.http_status,
                    "lag_seconds": lag,
                }
            )
            return _ChannelRound(new, attempt)
        error = result.error or f"HTTP {result.http_status}"
        new = delivery.model_copy(
            update={
                "status": DeliveryStatus.FAILED,
                "attempts": number,
                "last_error": error,
                "next_attempt_at": None,
            }
        )
        attempt = started.model_copy(
            update={
                "finished_at": finished_at,
                "outcome": "failed",
                "http_status": result.http_status,
                "error": error,
            }
        )
        return _ChannelRound(new, attempt)

    def _retryable(
        self, post: Post, delivery: Delivery, started: Attempt, exc: RetryableDeliveryError
    ) -> _ChannelRound:
        now = self.clock.now()
        settings = self.settings
        error = str(exc) or f"HTTP {exc.http_status}"
        horizon = post.publish_at + timedelta(seconds=settings.MISFIRE_GRACE_SECONDS)
        if exc.rate_limited:
            attempts = delivery.attempts
            wait = exc.retry_after_seconds
            if wait is None:
                wait = full_jitter(
                    attempts + 1,
                    base_seconds=settings.RETRY_BASE_SECONDS,
                    cap_seconds=settings.RETRY_CAP_SECONDS,
                    uniform=self.uniform,
                )
            next_at = now + timedelta(seconds=wait)
            exhausted = next_at > horizon
            final_error = f"rate limited past MISFIRE_GRACE_SECONDS: {error}"
        else:
            attempts = started.attempt
            wait = full_jitter(
                attempts,
                base_seconds=settings.RETRY_BASE_SECONDS,
                cap_seconds=settings.RETRY_CAP_SECONDS,
                uniform=self.uniform,
            )
            if exc.retry_after_seconds is not None:
                wait = max(wait, exc.retry_after_seconds)
            next_at = now + timedelta(seconds=wait)
            exhausted = attempts >= settings.MAX_ATTEMPTS
            final_error = f"gave up after {attempts} attempts: {error}"
        attempt = started.model_copy(
            update={
                "finished_at": now,
                "outcome": "rate_limited" if exc.rate_limited else "retryable",
                "http_status": exc.http_status,
                "error": error,
            }
        )
        if exhausted:
            new = delivery.model_copy(
                update={
                    "status": DeliveryStatus.FAILED,
                    "attempts": attempts,
                    "last_error": final_error,
                    "next_attempt_at": None,
                }
            )
        else:
            new = delivery.model_copy(
                update={
                    "status": DeliveryStatus.RETRY_SCHEDULED,
                    "attempts": attempts,
                    "last_error": error,
                    "next_attempt_at": next_at,
                }
            )
        return _ChannelRound(new, attempt, rate_limited=exc.rate_limited)

    def _in_progress(self, post: Post, delivery: Delivery, started: Attempt) -> _ChannelRound:
        now = self.clock.now()
        error = "delivery already in progress in another invocation"
        new = delivery.model_copy(
            update={
                "next_attempt_at": now + timedelta(seconds=self.settings.LEASE_SECONDS),
                "last_error": error,
            }
        )
        attempt = started.model_copy(
            update={
                "finished_at": now,
                "outcome": "retryable",
                "error": error,
            }
        )
        return _ChannelRound(new, attempt, in_progress=True)

    def _deliver_round(self, post: Post, message: DispatchMessage) -> RecordOutcome:
        assert post.lease_token is not None
        started_at = self.clock.now()
        current = {
            cid: post.deliveries.get(cid) or Delivery(channel_id=cid) for cid in post.channel_ids
        }
        due = [
            cid
            for cid, d in current.items()
            if d.status not in TERMINAL_DELIVERY_STATUSES
            and (d.next_attempt_at is None or d.next_attempt_at <= started_at)
        ]
        rounds: dict[str, _ChannelRound] = {}
        if due:
            workers = min(MAX_CONCURRENT_DELIVERIES, len(due))
            with ThreadPoolExecutor(max_workers=workers) as pool:
                futures = {
                    cid: pool.submit(self._deliver_channel, post, cid, started_at) for cid in due
                }
                rounds = {cid: future.result() for cid, future in futures.items()}
        for cid, r in rounds.items():
            current[cid] = r.delivery
            if r.delivery.status == DeliveryStatus.PUBLISHED and r.delivery.lag_seconds is not None:
                metrics.add_metric(
                    name="PublishLagSeconds", unit="Seconds", value=r.delivery.lag_seconds
                )
                logger.info(
                    "delivered",
                    extra={
                        "schedule_id": post.schedule_id,
                        "channel_id": cid,
                        "lag_seconds": r.delivery.lag_seconds,
                    },
                )
        now = self.clock.now()
        attempts = [r.attempt for r in rounds.values() if r.attempt is not None]
        changed = {cid: r.delivery for cid, r in rounds.items()}
        owed = [d for d in current.values() if d.status not in TERMINAL_DELIVERY_STATUSES]
        attempts_expire = self._attempts_expire_at(now)
        if owed:
            next_at = max(now, min(d.next_attempt_at or now for d in owed))
            saved = self.store.save_round(
                post.schedule_id,
                lease_token=post.lease_token,
                deliveries=changed,
                attempts=attempts,
                attempts_expire_at=attempts_expire,
                now=now,
                lease_expires_at=next_at + timedelta(seconds=self.settings.LEASE_SECONDS),
            )
            if not saved:
                return self._drop(message, "lease lost before the round was recorded")
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
            metrics.add_metric(name="Retried", unit="Count", value=1)
            if any(r.in_progress for r in rounds.values()):
                raise DeliveryInProgressError(post.schedule_id)
            return RecordOutcome.RETRY_SCHEDULED

        completion = self._completion(current, now)
        if not self.store.save_round(
            post.schedule_id,
            lease_token=post.lease_token,
            deliveries=changed,
            attempts=attempts,
            attempts_expire_at=attempts_expire,
            now=now,
            completion=completion,
        ):
            return self._drop(message, "lease lost before the final write")
        name = "Failed" if completion.status == PostStatus.FAILED else "Published"
        metrics.add_metric(name=name, unit="Count", value=1)
        logger.info(
            "finished",
            extra={
                "schedule_id": post.schedule_id,
                "status": completion.status.value,
                "publish_lag_seconds": completion.publish_lag_seconds,
            },
        )
        return RecordOutcome.COMPLETED

    def _completion(self, deliveries: dict[str, Delivery], now: datetime) -> Completion:
        published = [d for d in deliveries.values() if d.status == DeliveryStatus.PUBLISHED]
        if published and len(published) == len(deliveries):
            status, reason = PostStatus.PUBLISHED, None
        elif published:
            status = PostStatus.PARTIALLY_PUBLISHED
            reason = "some channels failed or were deleted"
        elif all(d.status == DeliveryStatus.SKIPPED for d in deliveries.values()):
            status, reason = PostStatus.FAILED, "every channel was deleted"
        else:
            status, reason = PostStatus.FAILED, "no channel accepted the post"
        lags = [d.lag_seconds for d in published if d.lag_seconds is not None]
        times = [d.published_at for d in published if d.published_at is not None]
        return Completion(
            status=status,
            published_at=max(times) if times else None,
            publish_lag_seconds=max(lags) if lags else None,
            status_reason=reason,
            expires_at=self._retention(now),
        )

    # -- last receive before the dead-letter queue ------------------------------------------------

    def _fail_dead_lettered(self, message: DispatchMessage, exc: Exception) -> None:
        try:
            post = self.store.get_post(message.schedule_id)
            if post is None or post.status in TERMINAL_POST_STATUSES:
                return
            if post.version != message.version:
                return
            if post.status == PostStatus.PUBLISHING and post.lease_token != message.lease_token:
                return  # another holder is working on it; this message is superseded
            now = self.clock.now()
            error = f"dispatch message dead-lettered after repeated failures: {exc!r}"[:500]
            deliveries = {
                cid: (post.deliveries.get(cid) or Delivery(channel_id=cid)).model_copy(
                    update={
                        "status": DeliveryStatus.FAILED,
                        "last_error": error,
                        "next_attempt_at": None,
                    }
                )
                for cid in post.channel_ids
                if (post.deliveries.get(cid) or Delivery(channel_id=cid)).status
                not in TERMINAL_DELIVERY_STATUSES
            }
            if self.store.fail_post(
                post,
                reason="dead-lettered: the dispatch message kept failing",
                last_error=error,
                deliveries=deliveries,
                now=now,
                expires_at=self._retention(now),
            ):
                if post.status == PostStatus.SCHEDULED:
                    self._release_pending(post)
                metrics.add_metric(name="Failed", unit="Count", value=1)
        except Exception:
            logger.exception(
                "dead-letter failure marking failed", extra={"schedule_id": message.schedule_id}
            )
