"""The pure decisions of one delivery round (``docs/dispatch.md``, steps 4-5).

Given what a channel's delivery did -- a final result, a retryable error, another invocation
holding it, a deleted channel -- decide the channel's new :class:`Delivery` and its
:class:`Attempt` row; given every channel's delivery, decide the post's :class:`Completion`.
The worker (``logic/publish.py``) persists the decisions; these functions do no I/O and take
the instant and the jitter source as arguments, so they are unit-tested without moto.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.lifecycle.backoff import Uniform, full_jitter
from scheduled_posts.lifecycle.reasons import DeliveryError, StatusReason
from scheduled_posts.lifecycle.retry import RetryPolicy, plan_retry
from scheduled_posts.lifecycle.states import (
    TERMINAL_DELIVERY_STATUSES,
    DeliveryStatus,
    PostStatus,
)
from scheduled_posts.models.post import Attempt, Delivery, Post
from scheduled_posts.models.thread import CommentOutcome
from scheduled_posts.platforms.answers import bounded_error
from scheduled_posts.platforms.base import DeliveryResult
from scheduled_posts.platforms.thread import CommentRetry


@dataclass
class ChannelRound:
    """One channel's result in a round: its new ``delivery``, the finished ``attempt`` row (None
    when no attempt started), and whether it waits on another invocation (``in_progress``) or
    on a rate limit (``rate_limited``)."""

    delivery: Delivery
    attempt: Attempt | None
    in_progress: bool = False
    rate_limited: bool = False


@dataclass(frozen=True)
class Completion:
    """The terminal outcome of a publishing post.

    ``status`` is ``published``, ``partially_published`` or ``failed``; ``expires_at`` is the
    TTL (epoch seconds, finished + ``RETENTION_DAYS``).
    """

    status: PostStatus
    published_at: datetime | None
    publish_lag_seconds: float | None
    status_reason: str | None
    expires_at: int


def skipped(delivery: Delivery, *, number: int, started_at: datetime) -> ChannelRound:
    """The channel was deleted: the delivery is ``skipped``, its attempt row says so."""
    error = DeliveryError.CHANNEL_DELETED.value
    new = delivery.model_copy(update={"status": DeliveryStatus.SKIPPED, "last_error": error})
    attempt = Attempt(
        channel_id=delivery.channel_id,
        attempt=number,
        started_at=started_at,
        finished_at=started_at,
        outcome="skipped",
        error=error,
    )
    return ChannelRound(new, attempt)


def _thread_of(result: DeliveryResult) -> dict[str, Any]:
    """What a final result records of a thread: its published parts, their count in all and
    the first comment's own outcome."""
    return {
        "parts": list(result.parts),
        "parts_total": result.parts_total,
        "comment": result.comment,
    }


def final(
    post: Post, delivery: Delivery, started: Attempt, result: DeliveryResult, finished_at: datetime
) -> ChannelRound:
    """A final result: ``published`` (with its lag from ``publish_at``, seconds, >= 0, and where
    it landed: ``remote_id``, ``remote_url``) or ``failed`` (the result's error, else
    ``HTTP <status>``, after the result's ``reason`` when it has one). ``finished_at``: when
    the answer arrived (``published_at``); the attempt row never ends before it started."""
    number = started.attempt
    ended = max(finished_at, started.started_at)
    if result.outcome == "published":
        # a thread whose first comment came in a later round was out when its parts were
        finished_at = min(finished_at, result.published_at or finished_at)
        lag = max(0.0, (finished_at - post.publish_at).total_seconds())
        new = delivery.model_copy(
            update={
                "status": DeliveryStatus.PUBLISHED,
                "attempts": number,
                "remote_id": result.remote_id,
                "remote_url": result.remote_url,
                "receipt": result.receipt,
                **_thread_of(result),
                "published_at": finished_at,
                "last_error": None,
                "next_attempt_at": None,
                "lag_seconds": lag,
            }
        )
        attempt = started.model_copy(
            update={
                "finished_at": ended,
                "outcome": "published",
                "http_status": result.http_status,
                "lag_seconds": lag,
                "remote_id": result.remote_id,
                "remote_url": result.remote_url,
            }
        )
        return ChannelRound(new, attempt)
    error = result.error or f"http_{result.http_status}"  # the word of docs/dispatch.md
    if result.reason is not None:  # e.g. "reauthorization_required: Mastodon refused ..."
        error = f"{result.reason}: {error}"
    error = bounded_error(error) or error
    new = delivery.model_copy(
        update={
            "status": DeliveryStatus.FAILED,
            "attempts": number,
            "last_error": error,
            "next_attempt_at": None,
            **_thread_of(result),  # a thread refused at a part: the parts published before it
        }
    )
    attempt = started.model_copy(
        update={
            "finished_at": ended,
            "outcome": "failed",
            "http_status": result.http_status,
            "error": error,
        }
    )
    return ChannelRound(new, attempt)


def retryable(
    post: Post,
    delivery: Delivery,
    started: Attempt,
    exc: RetryableDeliveryError,
    *,
    now: datetime,
    policy: RetryPolicy,
    uniform: Uniform,
) -> ChannelRound:
    """A retryable error: ``retry_scheduled`` at :func:`plan_retry`'s time, or ``failed`` when
    it says the delivery is exhausted (``docs/dispatch.md``, "State machine"); an exhausted
    first comment's retry: :func:`_comment_given_up`."""
    error = bounded_error(str(exc)) or f"http_{exc.http_status}"

    def jitter(attempt: int) -> float:
        return full_jitter(
            attempt,
            base_seconds=policy.base_seconds,
            cap_seconds=policy.cap_seconds,
            uniform=uniform,
        )

    plan = plan_retry(
        now=now,
        publish_at=post.publish_at,
        attempts_before=delivery.attempts,
        attempt_number=started.attempt,
        destination_waits_before=delivery.destination_waits,
        attempts_before_retry=delivery.attempts_before_retry,
        rate_limited=exc.rate_limited,
        retry_after_seconds=exc.retry_after_seconds,
        error=error,
        policy=policy,
        jitter=jitter,
    )
    attempts, exhausted = plan.attempts, plan.exhausted
    final_error, next_at = plan.final_error, plan.next_attempt_at
    if exhausted and isinstance(exc, CommentRetry):
        return _comment_given_up(post, delivery, started, exc, final_error=final_error, now=now)
    attempt = started.model_copy(
        update={
            "finished_at": now,
            "outcome": "rate_limited" if exc.rate_limited else "retryable",
            "http_status": exc.http_status,
            "error": error,
        }
    )
    status = DeliveryStatus.FAILED if exhausted else DeliveryStatus.RETRY_SCHEDULED
    new = delivery.model_copy(
        update={
            "status": status,
            "attempts": attempts,
            "destination_waits": plan.destination_waits,
            "last_error": bounded_error(final_error) if exhausted else error,
            "next_attempt_at": None if exhausted else next_at,
        }
    )
    return ChannelRound(new, attempt, rate_limited=exc.rate_limited)


def _comment_given_up(
    post: Post,
    delivery: Delivery,
    started: Attempt,
    exc: CommentRetry,
    *,
    final_error: str | None,
    now: datetime,
) -> ChannelRound:
    """A first comment's retry (:class:`~scheduled_posts.platforms.thread.CommentRetry`) whose
    budget is spent: the delivery ends ``published`` (the post is out), its comment ``failed``
    with the reason (decision "Threads and first comments")."""
    gave_up = CommentOutcome(status="failed", error=bounded_error(final_error))
    result = exc.published.model_copy(update={"comment": gave_up})
    return final(post, delivery, started, result, now)


def in_progress(
    delivery: Delivery, started: Attempt, *, now: datetime, lease_seconds: int
) -> ChannelRound:
    """Another invocation holds the delivery's idempotency record: try again after
    ``LEASE_SECONDS`` under this lease, no attempt used."""
    error = DeliveryError.IN_PROGRESS.value
    new = delivery.model_copy(
        update={"next_attempt_at": now + timedelta(seconds=lease_seconds), "last_error": error}
    )
    attempt = started.model_copy(
        update={"finished_at": now, "outcome": "retryable", "error": error}
    )
    return ChannelRound(new, attempt, in_progress=True)


def rate_limit_wait(
    delivery: Delivery, *, start_at: datetime, slot: str | None, limit: int
) -> ChannelRound:
    """The delivery waits for its rate-limit slot (``logic/rate_limit.py``): no attempt used,
    ``next_attempt_at`` = the slot's minute."""
    waiting = delivery.model_copy(
        update={
            "next_attempt_at": start_at,
            "rate_slot": slot,
            "last_error": f"waiting for a rate-limit slot (rate_limit_per_minute={limit})",
        }
    )
    return ChannelRound(waiting, None, rate_limited=True)


def breaker_wait(delivery: Delivery, *, until: datetime) -> ChannelRound:
    """The delivery waits for its channel's breaker (``logic/breaker.py``): no attempt used,
    ``next_attempt_at`` = ``until``, ``last_error`` = :attr:`DeliveryError.BREAKER_OPEN`."""
    waiting = delivery.model_copy(
        update={"next_attempt_at": until, "last_error": DeliveryError.BREAKER_OPEN.value}
    )
    return ChannelRound(waiting, None)


def current_deliveries(post: Post) -> dict[str, Delivery]:
    """Every channel's delivery (``pending`` for a channel not yet in ``post.deliveries``)."""
    return {cid: post.deliveries.get(cid) or Delivery(channel_id=cid) for cid in post.channel_ids}


def due_channels(deliveries: dict[str, Delivery], now: datetime) -> list[str]:
    """The channels owed a delivery whose ``next_attempt_at`` has passed (or is unset)."""
    return [
        cid
        for cid, d in deliveries.items()
        if d.status not in TERMINAL_DELIVERY_STATUSES
        and (d.next_attempt_at is None or d.next_attempt_at <= now)
    ]


def owed(deliveries: dict[str, Delivery]) -> list[Delivery]:
    """The deliveries not yet final."""
    return [d for d in deliveries.values() if d.status not in TERMINAL_DELIVERY_STATUSES]


def completion(deliveries: dict[str, Delivery], *, expires_at: int) -> Completion:
    """The post's outcome once no channel is owed: ``published`` when every channel published,
    ``partially_published`` when some did, else ``failed`` (every channel deleted, or none
    accepted). ``published_at`` and the lag are the latest channel's."""
    published = [d for d in deliveries.values() if d.status == DeliveryStatus.PUBLISHED]
    reason: StatusReason | None
    if published and len(published) == len(deliveries):
        status, reason = PostStatus.PUBLISHED, None
    elif published:
        status, reason = PostStatus.PARTIALLY_PUBLISHED, StatusReason.SOME_CHANNELS_FAILED
    elif all(d.status == DeliveryStatus.SKIPPED for d in deliveries.values()):
        status, reason = PostStatus.FAILED, StatusReason.EVERY_CHANNEL_DELETED
    else:
        status, reason = PostStatus.FAILED, StatusReason.NO_CHANNEL_ACCEPTED
    lags = [d.lag_seconds for d in published if d.lag_seconds is not None]
    times = [d.published_at for d in published if d.published_at is not None]
    return Completion(
        status=status,
        published_at=max(times) if times else None,
        publish_lag_seconds=max(lags) if lags else None,
        status_reason=reason.value if reason else None,
        expires_at=expires_at,
    )


def dead_lettered(deliveries: dict[str, Delivery], error: str) -> dict[str, Delivery]:
    """The owed deliveries of a post failed by the dead-letter path, each ``failed`` with
    ``error``."""
    return {
        cid: d.model_copy(
            update={"status": DeliveryStatus.FAILED, "last_error": error, "next_attempt_at": None}
        )
        for cid, d in deliveries.items()
        if d.status not in TERMINAL_DELIVERY_STATUSES
    }


def attempts_on_item(post: Post) -> list[Attempt]:
    """The attempts recorded on the post item rather than as ``ATTEMPT#`` rows (decision "The
    round's attempts live on the post item where they can"): a published delivery's folded attempt
    (``published``, with its ``http_status`` and lag), and an owed delivery's attempt in flight
    (``started``). Merged into ``GET .../attempts`` with the rows."""
    found: list[Attempt] = []
    for cid, d in sorted(post.deliveries.items()):
        if d.started_at is None:
            continue
        if d.status == DeliveryStatus.PUBLISHED:
            found.append(
                Attempt(
                    channel_id=cid,
                    attempt=d.attempts,
                    started_at=d.started_at,
                    finished_at=max(d.published_at or d.started_at, d.started_at),
                    outcome="published",
                    http_status=d.http_status,
                    lag_seconds=d.lag_seconds,
                    remote_id=d.remote_id,
                    remote_url=d.remote_url,
                )
            )
        else:  # in flight, or left by a round that never recorded itself
            found.append(
                Attempt(
                    channel_id=cid,
                    attempt=d.attempts + 1,
                    started_at=d.started_at,
                    outcome="started",
                )
            )
    return found


def merge_attempts(rows: list[Attempt], post: Post) -> list[Attempt]:
    """``GET .../attempts``: the ``ATTEMPT#`` ``rows`` and :func:`attempts_on_item` (a row wins
    over the same attempt on the item), in start order."""
    seen = {(a.started_at, a.channel_id, a.attempt) for a in rows}
    on_item = [
        a for a in attempts_on_item(post) if (a.started_at, a.channel_id, a.attempt) not in seen
    ]
    return sorted([*rows, *on_item], key=lambda a: (a.started_at, a.channel_id, a.attempt))
