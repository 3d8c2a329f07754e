"""Issue 17 item 2 end to end: every ``Retry-After`` gives a bounded wait, a bounded number of
requests per post, and a terminal ``failed`` whose reason says the destination caused it."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest

from scheduled_posts.models.post import DeliveryStatus, PostStatus
from tests.support.receiver import Answer

URL = "https://hooks.example.com/c1"


def test_always_429_retry_after_zero_bounded_requests_then_failed(make_fire) -> None:  # type: ignore[no-untyped-def]
    # Given a destination that always answers 429 with Retry-After: 0
    fire = make_fire(MAX_DESTINATION_WAITS=5)
    fire.channel("c1")
    fire.receiver.set_default(Answer.rate_limited("0"), url=URL)
    post = fire.post(fire.clock.now() + timedelta(seconds=5), ["c1"])

    # When the service runs for ten simulated minutes
    fire.driver.run_for(600)

    # Then it sent MAX_DESTINATION_WAITS + 1 requests, at least the floor apart, and gave up
    requests = fire.receiver.requests_to(URL)
    assert len(requests) == 6
    gaps = [(b.at - a.at).total_seconds() for a, b in itertools.pairwise(requests)]
    assert min(gaps) >= fire.settings.RETRY_AFTER_FLOOR_SECONDS
    final = fire.read(post)
    delivery = final.deliveries["c1"]
    assert (final.status, delivery.status) == (PostStatus.FAILED, DeliveryStatus.FAILED)
    assert "asked to wait 6 times" in (delivery.last_error or "")


@pytest.mark.parametrize(
    "answer",
    [
        Answer.error(503, retry_after="99999999999999999999"),
        Answer.rate_limited("99999999999999999999"),
        Answer.error(503, retry_after="Fri, 31 Dec 9999 23:59:59 GMT"),
    ],
)
def test_huge_retry_after_ends_failed_not_stuck_publishing(make_fire, answer: Answer) -> None:  # type: ignore[no-untyped-def]
    # Given a destination whose Retry-After is far beyond the misfire window
    fire = make_fire(MISFIRE_GRACE_SECONDS=600)
    fire.channel("c1")
    fire.receiver.set_default(answer, url=URL)
    post = fire.post(fire.clock.now() + timedelta(seconds=5), ["c1"])

    # When the service runs
    fire.driver.run_for(30)

    # Then the post is terminal after one request (no overflow, nothing left publishing), and
    # its reason names the misfire window
    final = fire.read(post)
    assert final.status == PostStatus.FAILED
    assert len(fire.receiver.requests_to(URL)) == 1
    assert "misfire window" in (final.deliveries["c1"].last_error or "")
