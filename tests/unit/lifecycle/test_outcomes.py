"""The pure outcome decisions of a delivery round (no moto, no I/O)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.lifecycle import outcomes
from scheduled_posts.lifecycle.reasons import DeliveryError, StatusReason
from scheduled_posts.lifecycle.retry import RetryPolicy
from scheduled_posts.lifecycle.states import DeliveryStatus, PostStatus
from scheduled_posts.models.post import Attempt, Delivery, Post
from scheduled_posts.platforms.base import DeliveryResult

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
POLICY = RetryPolicy(
    max_attempts=3, base_seconds=30, cap_seconds=900, misfire_grace_seconds=600, lease_seconds=60
)
POST = Post(
    schedule_id="s1",
    owner="alice",
    status=PostStatus.PUBLISHING,
    content="hi",
    publish_at=T0,
    channel_ids=["c1", "c2"],
    created_at=T0,
    updated_at=T0,
)


def top(low: float, high: float) -> float:
    return high


def started(number: int = 1) -> Attempt:
    return Attempt(channel_id="c1", attempt=number, started_at=T0, outcome="started")


def test_final_published_records_lag_and_clears_the_error() -> None:
    r = outcomes.final(
        POST,
        Delivery(channel_id="c1", last_error="x"),
        started(),
        DeliveryResult(outcome="published", http_status=201, remote_id="r1"),
        T0 + timedelta(seconds=2),
    )
    assert (r.delivery.status, r.delivery.attempts, r.delivery.remote_id) == (
        DeliveryStatus.PUBLISHED,
        1,
        "r1",
    )
    assert (r.delivery.lag_seconds, r.delivery.last_error) == (2.0, None)
    assert r.attempt is not None and r.attempt.outcome == "published"


def test_final_replayed_answer_before_the_attempt_start_never_ends_before_it() -> None:
    # Given a result replayed from an earlier attempt, answered 5 s before this attempt started
    answered = T0 - timedelta(seconds=5)
    r = outcomes.final(
        POST.model_copy(update={"publish_at": T0 - timedelta(seconds=10)}),
        Delivery(channel_id="c1"),
        started(2),
        DeliveryResult(outcome="published", http_status=200, remote_id="r1"),
        answered,
    )
    # Then the publish time and lag are the answer's, and the attempt ends when it started
    assert (r.delivery.published_at, r.delivery.lag_seconds) == (answered, 5.0)
    assert r.attempt is not None and r.attempt.finished_at == T0


def test_final_failed_without_error_text_names_the_status() -> None:
    r = outcomes.final(
        POST,
        Delivery(channel_id="c1"),
        started(),
        DeliveryResult(outcome="failed", http_status=403),
        T0,
    )
    assert (r.delivery.status, r.delivery.last_error) == (DeliveryStatus.FAILED, "http_403")


def test_retryable_under_max_attempts_is_retry_scheduled_after_the_jitter() -> None:
    r = outcomes.retryable(
        POST,
        Delivery(channel_id="c1"),
        started(1),
        RetryableDeliveryError("HTTP 503"),
        now=T0,
        policy=POLICY,
        uniform=top,
    )
    assert r.delivery.status == DeliveryStatus.RETRY_SCHEDULED
    assert r.delivery.next_attempt_at == T0 + timedelta(seconds=30)
    assert r.attempt is not None and r.attempt.outcome == "retryable"


def test_retryable_retry_after_raises_the_wait() -> None:
    exc = RetryableDeliveryError("HTTP 503", retry_after_seconds=120)
    r = outcomes.retryable(
        POST, Delivery(channel_id="c1"), started(1), exc, now=T0, policy=POLICY, uniform=top
    )
    assert r.delivery.next_attempt_at == T0 + timedelta(seconds=120)


def test_retryable_at_max_attempts_fails_with_gave_up() -> None:
    r = outcomes.retryable(
        POST,
        Delivery(channel_id="c1", attempts=2),
        started(3),
        RetryableDeliveryError("HTTP 500"),
        now=T0,
        policy=POLICY,
        uniform=top,
    )
    assert r.delivery.status == DeliveryStatus.FAILED
    assert r.delivery.last_error == "gave up after 3 attempts: HTTP 500"
    assert r.delivery.next_attempt_at is None


def test_rate_limited_uses_no_attempt_and_waits_retry_after() -> None:
    exc = RetryableDeliveryError(
        "HTTP 429", http_status=429, retry_after_seconds=10, rate_limited=True
    )
    r = outcomes.retryable(
        POST,
        Delivery(channel_id="c1", attempts=1),
        started(2),
        exc,
        now=T0,
        policy=POLICY,
        uniform=top,
    )
    assert (r.delivery.status, r.delivery.attempts, r.rate_limited) == (
        DeliveryStatus.RETRY_SCHEDULED,
        1,
        True,
    )
    assert r.delivery.next_attempt_at == T0 + timedelta(seconds=10)


def test_rate_limited_past_the_misfire_grace_fails() -> None:
    exc = RetryableDeliveryError("HTTP 429", retry_after_seconds=601, rate_limited=True)
    r = outcomes.retryable(
        POST, Delivery(channel_id="c1"), started(1), exc, now=T0, policy=POLICY, uniform=top
    )
    assert r.delivery.status == DeliveryStatus.FAILED
    assert r.delivery.last_error == (
        "the destination's wait would end after the misfire window"
        " (MISFIRE_GRACE_SECONDS): HTTP 429"
    )


def test_in_progress_waits_a_lease_without_using_an_attempt() -> None:
    r = outcomes.in_progress(Delivery(channel_id="c1"), started(), now=T0, lease_seconds=60)
    assert r.in_progress and r.delivery.attempts == 0
    assert r.delivery.next_attempt_at == T0 + timedelta(seconds=60)
    assert r.delivery.last_error == DeliveryError.IN_PROGRESS


def test_skipped_marks_a_deleted_channel() -> None:
    r = outcomes.skipped(Delivery(channel_id="c1"), number=1, started_at=T0)
    assert r.delivery.status == DeliveryStatus.SKIPPED
    assert r.attempt is not None and r.attempt.outcome == "skipped"


def test_rate_limit_wait_holds_the_slot_until_its_minute() -> None:
    r = outcomes.rate_limit_wait(Delivery(channel_id="c1"), start_at=T0, slot="m1", limit=5)
    assert (r.delivery.next_attempt_at, r.delivery.rate_slot, r.attempt) == (T0, "m1", None)


def d(cid: str, status: DeliveryStatus, **kw: object) -> Delivery:
    return Delivery.model_validate({"channel_id": cid, "status": status, **kw})


@pytest.mark.parametrize(
    ("statuses", "status", "reason"),
    [
        ((DeliveryStatus.PUBLISHED, DeliveryStatus.PUBLISHED), PostStatus.PUBLISHED, None),
        (
            (DeliveryStatus.PUBLISHED, DeliveryStatus.SKIPPED),
            PostStatus.PARTIALLY_PUBLISHED,
            StatusReason.SOME_CHANNELS_FAILED,
        ),
        (
            (DeliveryStatus.SKIPPED, DeliveryStatus.SKIPPED),
            PostStatus.FAILED,
            StatusReason.EVERY_CHANNEL_DELETED,
        ),
        (
            (DeliveryStatus.FAILED, DeliveryStatus.SKIPPED),
            PostStatus.FAILED,
            StatusReason.NO_CHANNEL_ACCEPTED,
        ),
    ],
)
def test_completion_decides_the_post_outcome(
    statuses: tuple[DeliveryStatus, DeliveryStatus], status: PostStatus, reason: str | None
) -> None:
    got = outcomes.completion(
        {f"c{i}": d(f"c{i}", s) for i, s in enumerate(statuses)}, expires_at=7
    )
    assert (got.status, got.status_reason, got.expires_at) == (status, reason, 7)


def test_completion_takes_the_latest_channel_time_and_lag() -> None:
    later = T0 + timedelta(seconds=5)
    got = outcomes.completion(
        {
            "c1": d("c1", DeliveryStatus.PUBLISHED, published_at=T0, lag_seconds=1.0),
            "c2": d("c2", DeliveryStatus.PUBLISHED, published_at=later, lag_seconds=5.0),
        },
        expires_at=1,
    )
    assert (got.published_at, got.publish_lag_seconds) == (later, 5.0)


def test_due_channels_skips_final_and_not_yet_due() -> None:
    current = {
        "a": d("a", DeliveryStatus.PENDING),
        "b": d("b", DeliveryStatus.PUBLISHED),
        "c": d("c", DeliveryStatus.RETRY_SCHEDULED, next_attempt_at=T0 + timedelta(seconds=1)),
        "e": d("e", DeliveryStatus.RETRY_SCHEDULED, next_attempt_at=T0),
    }
    assert outcomes.due_channels(current, T0) == ["a", "e"]
    assert [x.channel_id for x in outcomes.owed(current)] == ["a", "c", "e"]


def test_dead_lettered_fails_only_owed_deliveries() -> None:
    got = outcomes.dead_lettered(
        {"a": d("a", DeliveryStatus.PUBLISHED), "b": d("b", DeliveryStatus.PENDING)}, "boom"
    )
    assert list(got) == ["b"]
    assert (got["b"].status, got["b"].last_error) == (DeliveryStatus.FAILED, "boom")


def test_current_deliveries_defaults_missing_channels_to_pending() -> None:
    assert outcomes.current_deliveries(POST)["c2"].status == DeliveryStatus.PENDING


# -- attempts kept on the post item (issue 16, W2) -------------------------------------------


def test_attempts_on_item_published_delivery_gives_its_folded_attempt() -> None:
    # Given a delivery whose published attempt was folded into the post item
    folded = Delivery(
        channel_id="c1",
        status=DeliveryStatus.PUBLISHED,
        attempts=2,
        published_at=T0 + timedelta(seconds=1),
        lag_seconds=1.0,
        started_at=T0,
        http_status=201,
    )
    post = POST.model_copy(update={"deliveries": {"c1": folded}})
    # When the item's attempts are listed
    [attempt] = outcomes.attempts_on_item(post)
    # Then it is the published attempt, whole
    assert attempt == Attempt(
        channel_id="c1",
        attempt=2,
        started_at=T0,
        finished_at=T0 + timedelta(seconds=1),
        outcome="published",
        http_status=201,
        lag_seconds=1.0,
    )


def test_attempts_on_item_replayed_answer_before_the_start_ends_at_the_start() -> None:
    # Given a folded delivery whose (replayed) answer predates the attempt's start mark
    folded = Delivery(
        channel_id="c1",
        status=DeliveryStatus.PUBLISHED,
        attempts=2,
        published_at=T0 - timedelta(seconds=3),
        lag_seconds=1.0,
        started_at=T0,
    )
    [attempt] = outcomes.attempts_on_item(POST.model_copy(update={"deliveries": {"c1": folded}}))
    assert attempt.finished_at == T0


def test_attempts_on_item_owed_delivery_with_a_start_mark_is_a_started_attempt() -> None:
    marked = Delivery(channel_id="c2", attempts=1, started_at=T0)
    post = POST.model_copy(update={"deliveries": {"c2": marked, "c1": Delivery(channel_id="c1")}})
    assert outcomes.attempts_on_item(post) == [
        Attempt(channel_id="c2", attempt=2, started_at=T0, outcome="started")
    ]


def test_merge_attempts_row_wins_over_the_same_attempt_on_the_item_in_start_order() -> None:
    # Given a start mark also kept as a row (a retried lease write), and an earlier row
    marked = Delivery(channel_id="c1", attempts=1, started_at=T0)
    post = POST.model_copy(update={"deliveries": {"c1": marked}})
    earlier = Attempt(
        channel_id="c1",
        attempt=1,
        started_at=T0 - timedelta(minutes=1),
        outcome="retryable",
        http_status=503,
    )
    kept = Attempt(channel_id="c1", attempt=2, started_at=T0, outcome="started")
    # When merged
    merged = outcomes.merge_attempts([kept, earlier], post)
    # Then each attempt appears once, in start order
    assert merged == [earlier, kept]
