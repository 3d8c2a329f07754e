"""Delivery of one channel of a post under Powertools idempotency (``docs/dispatch.md``, step 4).

The idempotent section calls the platform adapter once per ``<schedule_id>:<channel_id>``: a
final result (published, or a permanent failure) is stored and replayed to any later call;
a retryable error is raised, so nothing is stored and the next round calls the destination
again (Powertools: "a result returned, not raised, is replayed"). The result is stored through
Powertools' ``PydanticSerializer`` (:class:`DeliveredResult`). What the outcome means for the
delivery is decided in ``lifecycle/outcomes.py``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import datetime, timedelta

from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.base import BasePersistenceLayer
from aws_lambda_powertools.utilities.idempotency.serialization.pydantic import PydanticSerializer

from scheduled_posts.clock import Clock, epoch_seconds
from scheduled_posts.data.breaker import BreakerStore
from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.data.post_store import PostStore
from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.lifecycle import outcomes
from scheduled_posts.lifecycle.backoff import Uniform
from scheduled_posts.lifecycle.metric_names import Metric
from scheduled_posts.lifecycle.outcomes import ChannelRound
from scheduled_posts.lifecycle.retry import RetryPolicy
from scheduled_posts.logic import post_media
from scheduled_posts.logic.breaker import Breaker, probe_hold_seconds
from scheduled_posts.logic.rate_limit import RateLimiter
from scheduled_posts.models.post import Attempt, Channel, Delivery, Post
from scheduled_posts.models.variants import effective_for
from scheduled_posts.observability import logger, metrics
from scheduled_posts.platforms.answers import bounded_result
from scheduled_posts.platforms.base import DeliveryRequest, DeliveryResult, PlatformAdapter
from scheduled_posts.settings import Settings

#: How long past ``MISFIRE_GRACE_SECONDS`` the idempotency records of deliveries live: it covers
#: the retry horizon (6 attempts capped at 900 s is about 1.5 h; 429 waits stop at the grace).
RETRY_HORIZON_SECONDS = 86_400


class DeliveredResult(DeliveryResult):
    """A final result as stored in the idempotency record: the adapter's result and when the
    worker got it (``delivered_at``, UTC)."""

    delivered_at: datetime


def retry_policy(settings: Settings) -> RetryPolicy:
    """The :class:`RetryPolicy` of ``settings``."""
    return RetryPolicy(
        max_attempts=settings.MAX_ATTEMPTS,
        base_seconds=settings.RETRY_BASE_SECONDS,
        cap_seconds=settings.RETRY_CAP_SECONDS,
        misfire_grace_seconds=settings.MISFIRE_GRACE_SECONDS,
        lease_seconds=settings.LEASE_SECONDS,
        max_destination_waits=settings.MAX_DESTINATION_WAITS,
    )


def attempts_expire_at(settings: Settings, now: datetime) -> int:
    """TTL (epoch seconds) of attempt rows written at ``now``: ``RETENTION_DAYS`` after the
    retry horizon."""
    return epoch_seconds(
        now
        + timedelta(days=settings.RETENTION_DAYS)
        + timedelta(seconds=settings.MISFIRE_GRACE_SECONDS + RETRY_HORIZON_SECONDS)
    )


def _media_repository(settings: Settings) -> post_media.MediaLookup:
    from scheduled_posts.data.media import MediaRepository

    return MediaRepository(posts_table_name=settings.POSTS_TABLE_NAME)


class ChannelDeliverer:
    """Delivers one channel of a post per call (:meth:`deliver`), returning its
    :class:`ChannelRound`. Collaborators as :class:`scheduled_posts.logic.publish.Publisher`."""

    def __init__(
        self,
        settings: Settings,
        *,
        store: PostStore,
        adapters: Mapping[str, PlatformAdapter],
        clock: Clock,
        rate_limiter: RateLimiter,
        persistence: BasePersistenceLayer | None = None,
        uniform: Uniform = random.uniform,
        channels: ChannelRepository | None = None,
        media: post_media.MediaLookup | None = None,
        breaker: Breaker | None = None,
    ) -> None:
        self.settings = settings
        #: The channels' circuit breakers (decision "A breaker per destination").
        self.breaker = breaker or Breaker(
            BreakerStore(settings.POSTS_TABLE_NAME),
            failures=settings.BREAKER_FAILURES,
            cooldown_seconds=settings.BREAKER_COOLDOWN_SECONDS,
            probe_seconds=probe_hold_seconds(settings.DELIVERY_TIMEOUT_SECONDS),
        )
        #: The uploads a post's ``media_ids`` name (``data/media.py``), read per attempt; built
        #: on the first post with media (a text post never imports it).
        self._media = media
        self.store = store
        #: Channel writes of network deliveries (``needs_reauthorization``).
        self.channels = channels or ChannelRepository(posts_table_name=settings.POSTS_TABLE_NAME)
        self.adapters = dict(adapters)
        self.clock = clock
        self.rate_limiter = rate_limiter
        self.uniform = uniform
        self.policy = retry_policy(settings)
        self.idempotency_config = IdempotencyConfig(
            event_key_jmespath="idempotency_key",
            raise_on_no_idempotency_key=True,
            expires_after_seconds=settings.MISFIRE_GRACE_SECONDS + RETRY_HORIZON_SECONDS,
        )
        self._deliver_once = idempotent_function(
            self._deliver_raw,
            data_keyword_argument="key",
            persistence_store=persistence
            or DynamoDBPersistenceLayer(table_name=settings.IDEMPOTENCY_TABLE_NAME),
            config=self.idempotency_config,
            key_prefix="deliver",
            output_serializer=PydanticSerializer(DeliveredResult),
        )

    def _media_lookup(self) -> post_media.MediaLookup:
        if self._media is None:
            self._media = _media_repository(self.settings)
        return self._media

    def _deliver_raw(
        self,
        *,
        key: dict[str, str],
        adapter: PlatformAdapter,
        channel: Channel,
        request: DeliveryRequest,
    ) -> DeliveredResult:
        """The idempotent section: returns only final outcomes, raises on retryable ones.

        ``delivered_at`` is read when the adapter returns, i.e. when the destination's answer
        arrived (decision "Lag is stamped when the answer arrives"), so a slow destination
        counts in ``published_at`` and the lag."""
        result = adapter.deliver(channel, request, now=self.clock.now())
        answered = self.clock.now()
        # bounded before the idempotency record stores it (decision "Network answers are
        # bounded before they are stored")
        result = bounded_result(result, allowed_origins=self.settings.allowed_origins)
        return DeliveredResult(**result.model_dump(), delivered_at=answered)

    def deliver(self, post: Post, channel_id: str, started_at: datetime) -> ChannelRound:
        """One channel's round: skipped (channel deleted), waiting for a rate-limit slot, or one
        attempt through the idempotent section and its outcome."""
        delivery = post.deliveries.get(channel_id) or Delivery(channel_id=channel_id)
        number = delivery.attempts + 1
        channel = self.store.get_channel(post.owner, channel_id)
        if channel is None:
            return outcomes.skipped(delivery, number=number, started_at=started_at)
        if channel.rate_limit_per_minute:
            waiting = self._rate_limit_wait(post, delivery, channel, started_at)
            if waiting is not None:
                return waiting
            delivery = delivery.model_copy(update={"rate_slot": None})
        # The start is already on the post item (the lease write of this round marked it,
        # ``Publisher._hold``), so no ``started`` row is written here (decision "The round's
        # attempts live on the post item where they can").
        started = Attempt(
            channel_id=channel_id, attempt=number, started_at=started_at, outcome="started"
        )
        if delivery.first_attempt_at is None:
            delivery = delivery.model_copy(update={"first_attempt_at": started_at})
        admission = self.breaker.admit(channel_id, started_at)
        if admission.defer_until is not None and self._may_defer(post, admission.defer_until):
            logger.info(
                "breaker open",
                extra={"channel_id": channel_id, "until": admission.defer_until.isoformat()},
            )
            metrics.add_metric(
                name=Metric.BREAKER_DEFERRED, unit=Metric.BREAKER_DEFERRED.unit, value=1
            )
            return outcomes.breaker_wait(delivery, until=admission.defer_until)
        result = self._attempt(post, delivery, channel, started)
        self.breaker.record(channel_id, admission, result, self.clock.now())
        return result

    def _may_defer(self, post: Post, until: datetime) -> bool:
        """A breaker defers a delivery only within its misfire grace: past it, the delivery is
        attempted as without a breaker, so its retries end it as they always did."""
        grace = timedelta(seconds=self.settings.MISFIRE_GRACE_SECONDS)
        return until <= post.publish_at + grace

    def _attempt(
        self, post: Post, delivery: Delivery, channel: Channel, started: Attempt
    ) -> ChannelRound:
        adapter = self.adapters.get(channel.platform)
        try:
            if adapter is None:
                raise LookupError(f"no adapter for platform {channel.platform!r}")
            # What this channel publishes: the post with its variant (decision "A text per
            # channel: variants"), the same on every attempt.
            effective = effective_for(post, channel.channel_id)
            media, parts = post_media.resolve_effective(
                post.owner, effective, channel.platform, self._media_lookup
            )
            if media.refusal is not None:
                # Never without its media (decision "Media are checked again before
                # publishing"): the adapter is not called.
                refused = DeliveryResult(outcome="failed", error=media.refusal)
                return outcomes.final(post, delivery, started, refused, self.clock.now())
            request = DeliveryRequest(
                schedule_id=post.schedule_id,
                channel_id=channel.channel_id,
                content=effective.content,
                media_ids=effective.media_ids,
                publish_at=post.publish_at,
                attempt=started.attempt,
                idempotency_key=f"{post.schedule_id}:{channel.channel_id}",
                first_attempt_at=delivery.first_attempt_at if started.attempt > 1 else None,
                language=effective.language,
                media=media.media,
                options=effective.options,
                link_card=None if effective.media_ids else post.link_card,
                parts=parts,
                first_comment=post.first_comment,
            )
            result = self._deliver_once(
                key={"idempotency_key": request.idempotency_key},
                adapter=adapter,
                channel=channel,
                request=request,
            )
        except IdempotencyAlreadyInProgressError:
            return outcomes.in_progress(
                delivery, started, now=self.clock.now(), lease_seconds=self.settings.LEASE_SECONDS
            )
        except RetryableDeliveryError as exc:
            return self._retryable(post, delivery, started, exc)
        except LookupError as exc:
            failed = DeliveryResult(outcome="failed", error=str(exc))
            return outcomes.final(post, delivery, started, failed, self.clock.now())
        except Exception as exc:  # an adapter bug or a persistence error: retry like a 5xx
            logger.exception("delivery error", extra={"schedule_id": post.schedule_id})
            return self._retryable(post, delivery, started, RetryableDeliveryError(repr(exc)))
        # again for a record stored before the bounds existed
        result = bounded_result(result, allowed_origins=self.settings.allowed_origins)
        if result.reason == "reauthorization_required":
            # the network modules load only for a network's refusal (lean cold start)
            from scheduled_posts.logic.network_delivery import record_refusal

            record_refusal(channel, result, channels=self.channels)
        return outcomes.final(post, delivery, started, result, result.delivered_at)

    def _retryable(
        self, post: Post, delivery: Delivery, started: Attempt, exc: RetryableDeliveryError
    ) -> ChannelRound:
        return outcomes.retryable(
            post,
            delivery,
            started,
            exc,
            now=self.clock.now(),
            policy=self.policy,
            uniform=self.uniform,
        )

    def _rate_limit_wait(
        self, post: Post, delivery: Delivery, channel: Channel, now: datetime
    ) -> ChannelRound | None:
        """None when the delivery holds a slot of the current minute and starts now; otherwise
        the round that makes it wait for its slot (``logic/rate_limit.py``): no attempt used,
        ``next_attempt_at`` = the slot's minute, never failed for it.

        A slot reserved in an earlier round is used up on the post item before the request
        (:func:`scheduled_posts.lifecycle.transitions.use_rate_slot`); when another holder of
        the lease used it first, this delivery takes a slot of its own."""
        limit = int(channel.rate_limit_per_minute or 0)
        held = delivery.rate_slot
        decision = self.rate_limiter.acquire(channel.channel_id, limit=limit, now=now, held=held)
        if decision.may_start(now) and held is not None and decision.slot == held:
            if self.store.use_rate_slot(post, channel_id=channel.channel_id, slot=held, now=now):
                return None
            decision = self.rate_limiter.acquire(channel.channel_id, limit=limit, now=now)
        if decision.may_start(now):
            return None
        wait = (decision.start_at - now).total_seconds()
        metrics.add_metric(
            name=Metric.RATE_LIMIT_WAIT_SECONDS,
            unit=Metric.RATE_LIMIT_WAIT_SECONDS.unit,
            value=wait,
        )
        logger.info(
            "rate limited",
            extra={"channel_id": channel.channel_id, "slot": decision.slot, "wait_seconds": wait},
        )
        return outcomes.rate_limit_wait(
            delivery, start_at=decision.start_at, slot=decision.slot, limit=limit
        )
