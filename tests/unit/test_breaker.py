"""The breaker's decisions over its DynamoDB item (moto): what counts as a failure, when it
opens, that one worker at a time holds the half-open probe, and what closes it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from moto import mock_aws

from scheduled_posts.data.breaker import BreakerStore
from scheduled_posts.lifecycle.outcomes import ChannelRound
from scheduled_posts.logic.breaker import Admission, Breaker, counts_as_failure
from scheduled_posts.models.post import Attempt, Delivery
from tests.support.fixtures import create_resources

T0 = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


@pytest.fixture
def breaker() -> Iterator[Breaker]:
    with mock_aws():
        settings = create_resources().settings
        store = BreakerStore(settings.POSTS_TABLE_NAME)
        yield Breaker(store, failures=3, cooldown_seconds=60, probe_seconds=15)


def _round(outcome: str | None, http_status: int | None = None) -> ChannelRound:
    attempt = None
    if outcome is not None:
        attempt = Attempt(
            channel_id="c", attempt=1, started_at=T0, outcome=outcome, http_status=http_status
        )
    return ChannelRound(Delivery(channel_id="c"), attempt)


@pytest.mark.parametrize(
    ("outcome", "status", "counted"),
    [
        ("retryable", None, True),
        ("retryable", 503, True),
        ("retryable", 408, False),
        ("rate_limited", 429, None),
        ("failed", 400, False),
        ("published", 200, False),
        (None, None, None),
    ],
)
def test_counts_as_failure_timeouts_and_5xx_only(
    outcome: str | None, status: int | None, counted: bool | None
) -> None:
    assert counts_as_failure(_round(outcome, status)) is counted


def _fail(breaker: Breaker, times: int, at: datetime = T0) -> None:
    for _ in range(times):
        breaker.record("c", breaker.admit("c", at), _round("retryable"), at)


def test_breaker_stays_closed_below_failures_and_opens_at_them(breaker: Breaker) -> None:
    _fail(breaker, 2)
    assert breaker.admit("c", T0).defer_until is None
    _fail(breaker, 1)
    assert breaker.admit("c", T0 + timedelta(seconds=59)).defer_until == T0 + timedelta(seconds=60)
    assert breaker.admit("other", T0).defer_until is None  # its own breaker per channel


def test_breaker_success_between_failures_resets_the_count(breaker: Breaker) -> None:
    _fail(breaker, 2)
    breaker.record("c", breaker.admit("c", T0), _round("published", 200), T0)
    _fail(breaker, 2)
    assert breaker.admit("c", T0).defer_until is None


def test_breaker_half_open_lets_one_probe_through_and_defers_the_rest(breaker: Breaker) -> None:
    _fail(breaker, 3)
    after = T0 + timedelta(seconds=60)
    probe = breaker.admit("c", after)
    second = breaker.admit("c", after)
    assert probe == Admission(probe=True, failures=3)
    assert second.defer_until == after + timedelta(seconds=15)
    # a probe held past its hold (its worker died) is taken by the next caller
    assert breaker.admit("c", after + timedelta(seconds=15)).probe


def test_breaker_probe_success_closes_and_failure_reopens(breaker: Breaker) -> None:
    _fail(breaker, 3)
    after = T0 + timedelta(seconds=60)
    breaker.record("c", breaker.admit("c", after), _round("retryable", 502), after)
    assert breaker.admit("c", after).defer_until == after + timedelta(seconds=60)
    later = after + timedelta(seconds=60)
    breaker.record("c", breaker.admit("c", later), _round("published", 200), later)
    assert breaker.admit("c", later) == Admission()


def test_breaker_off_with_zero_failures_never_defers(breaker: Breaker) -> None:
    off = Breaker(breaker.store, failures=0, cooldown_seconds=60, probe_seconds=15)
    _fail(off, 5)
    assert off.admit("c", T0) == Admission()
