"""The retry decision (issue 17 item 2): pure, every Retry-After bounded, one rule for 429/5xx."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from scheduled_posts.lifecycle.retry import RetryPolicy, plan_retry

PUBLISH_AT = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
NOW = PUBLISH_AT + timedelta(minutes=1)
SETTINGS = RetryPolicy(
    max_attempts=6,
    base_seconds=30,
    cap_seconds=900,
    misfire_grace_seconds=3600,
    lease_seconds=60,
    max_destination_waits=3,
)


def plan(**overrides: object):  # type: ignore[no-untyped-def]
    args: dict[str, object] = {
        "now": NOW,
        "publish_at": PUBLISH_AT,
        "attempts_before": 0,
        "attempt_number": 1,
        "destination_waits_before": 0,
        "rate_limited": False,
        "retry_after_seconds": None,
        "error": "http_503",
        "policy": SETTINGS,
        "jitter": lambda attempt: 10.0 * attempt,
    }
    args.update(overrides)
    return plan_retry(**args)  # type: ignore[arg-type]


def test_plan_retry_5xx_uses_an_attempt_and_jitter() -> None:
    result = plan()
    assert (result.attempts, result.destination_waits) == (1, 0)
    assert result.next_attempt_at == NOW + timedelta(seconds=10)


def test_plan_retry_5xx_retry_after_raises_the_wait_and_counts_a_wait() -> None:
    result = plan(retry_after_seconds=120.0)
    assert (result.attempts, result.destination_waits) == (1, 1)
    assert result.next_attempt_at == NOW + timedelta(seconds=120)


def test_plan_retry_429_uses_no_attempt_and_counts_a_wait() -> None:
    result = plan(rate_limited=True, retry_after_seconds=1.0, attempts_before=2, attempt_number=3)
    assert (result.attempts, result.destination_waits, result.exhausted) == (2, 1, False)


@pytest.mark.parametrize("rate_limited", [True, False])
def test_plan_retry_destination_waits_over_bound_fails_saying_so(rate_limited: bool) -> None:
    result = plan(rate_limited=rate_limited, retry_after_seconds=1.0, destination_waits_before=3)
    assert result.exhausted and result.next_attempt_at is None
    assert "asked to wait 4 times" in (result.final_error or "")
    assert "MAX_DESTINATION_WAITS" in (result.final_error or "")


@pytest.mark.parametrize("rate_limited", [True, False])
def test_plan_retry_wait_past_misfire_window_fails_for_429_and_5xx(rate_limited: bool) -> None:
    result = plan(rate_limited=rate_limited, retry_after_seconds=3600.0)
    assert result.exhausted
    assert "misfire window" in (result.final_error or "")


def test_plan_retry_5xx_backoff_past_misfire_window_fails_too() -> None:
    result = plan(now=PUBLISH_AT + timedelta(seconds=3595))
    assert result.exhausted and "the next retry would end after" in (result.final_error or "")


def test_plan_retry_last_attempt_fails() -> None:
    result = plan(attempts_before=5, attempt_number=6)
    assert result.exhausted and (result.final_error or "").startswith("gave up after 6 attempts")


def test_plan_retry_429_retry_after_zero_bounded_requests() -> None:
    # Given a destination that always answers 429 Retry-After: 0 (clamped to the 1 s floor)
    waits, requests, now = 0, 0, NOW
    while True:
        requests += 1
        result = plan(
            now=now, rate_limited=True, retry_after_seconds=1.0, destination_waits_before=waits
        )
        if result.exhausted:
            break
        waits = result.destination_waits
        assert result.next_attempt_at is not None
        now = result.next_attempt_at
    # Then the requests stop at the bound, and the delivery fails saying why
    assert requests == SETTINGS.max_destination_waits + 1


def test_plan_retry_after_an_owner_retry_numbers_go_on_and_the_budget_restarts() -> None:
    # Attempt #7 is the first of a new budget: the owner retried after 6 used attempts.
    first = plan(attempts_before=6, attempt_number=7, attempts_before_retry=6)
    assert (first.attempts, first.final_error) == (7, None)
    assert first.next_attempt_at == NOW + timedelta(seconds=10)  # jitter of this budget's 1st
    last = plan(attempts_before=11, attempt_number=12, attempts_before_retry=6)
    assert last.final_error is not None and "gave up after 6 attempts" in last.final_error
