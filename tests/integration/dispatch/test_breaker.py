"""A breaker per destination, through the real worker: a channel whose webhook always times out
stops taking attempts after ``BREAKER_FAILURES`` timeouts; its deliveries are deferred without
an attempt while another tenant's posts are delivered; after the cool-down one probe goes
through, and its success closes the breaker. Assertions are on attempts and requests, never on
wall time (the clock is simulated)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from scheduled_posts.data.breaker import BreakerStore
from scheduled_posts.lifecycle.reasons import DeliveryError
from scheduled_posts.models.post import DeliveryStatus, Post, PostStatus
from tests.integration.dispatch.conftest import FirePath
from tests.support.receiver import Answer

HANG = "https://hooks.example.com/hang"


def _hanging_posts(fire: FirePath) -> tuple[list[Post], datetime]:
    """Two channels (``hang`` of user-0, whose webhook always times out, and ``ok`` of user-1)
    and three of user-0's posts to ``hang`` due in 5 s; their due instant."""
    fire.channel("hang", owner="user-0")
    fire.channel("ok", owner="user-1")
    fire.receiver.set_default(Answer.timeout(), url=HANG)
    due = fire.clock.now() + timedelta(seconds=5)
    return [fire.post(due, ["hang"], owner="user-0") for _ in range(3)], due


def _open_breaker(fire: FirePath, due: datetime) -> datetime:
    """Run until the three posts timed out in the same second: the breaker is open until the
    instant returned."""
    fire.driver.run_until(due + timedelta(seconds=1))
    assert len(fire.receiver.requests_to(HANG)) == 3
    state = BreakerStore(fire.settings.POSTS_TABLE_NAME).read("hang")
    assert state.failures == 3 and state.opened_until is not None
    return datetime.fromtimestamp(state.opened_until, UTC)


def test_breaker_open_defers_without_attempt_while_other_tenant_publishes(
    fire: FirePath,
) -> None:
    # Given the hanging channel's breaker opens, and more posts of both tenants fall due
    # 5 s later, before the cool-down ends
    hanging, first = _hanging_posts(fire)
    due = first + timedelta(seconds=5)
    later = [fire.post(due, ["hang"], owner="user-0") for _ in range(3)]
    others = [fire.post(due, ["ok"], owner="user-1") for _ in range(5)]
    opened_until = _open_breaker(fire, first)

    # When the worker runs on until after they were due
    fire.driver.run_until(due + timedelta(seconds=10))

    # Then no further request went to the hanging destination (the first posts' retries
    # included), its new deliveries used no attempt and wait for the breaker, visibly
    assert len(fire.receiver.requests_to(HANG)) == 3
    for post in later:
        delivery = fire.read(post).deliveries["hang"]
        assert delivery.attempts == 0
        assert delivery.next_attempt_at == opened_until
        assert delivery.last_error == DeliveryError.BREAKER_OPEN
    assert all(fire.read(p).deliveries["hang"].attempts == 1 for p in hanging)
    # and the other tenant's posts were each delivered on their first attempt
    for post in others:
        got = fire.read(post)
        assert got.status == PostStatus.PUBLISHED and got.deliveries["ok"].attempts == 1
        assert fire.receiver.accepted(f"{post.schedule_id}:ok") == 1


def test_breaker_half_open_probe_success_closes_it_and_every_post_publishes(
    fire: FirePath,
) -> None:
    # Given an open breaker, posts waiting for it, and the destination recovered
    hanging, first = _hanging_posts(fire)
    later = [fire.post(first + timedelta(seconds=3), ["hang"], owner="user-0")]
    opened_until = _open_breaker(fire, first)
    fire.driver.run_until(opened_until - timedelta(seconds=1))
    assert len(fire.receiver.requests_to(HANG)) == 3
    fire.receiver.set_default(Answer.ok(), url=HANG)

    # When the cool-down ends and the waiting deliveries run
    fire.driver.run_until(opened_until + timedelta(seconds=60))

    # Then the first request after the timeouts was at the end of the cool-down (the probe),
    # each post was sent once more, and the probe's success closed the breaker
    requests = fire.receiver.requests_to(HANG)[3:]
    assert requests and requests[0].at == opened_until
    assert len(requests) == 4
    state = BreakerStore(fire.settings.POSTS_TABLE_NAME).read("hang")
    assert (state.failures, state.opened_until, state.probe_until) == (0, None, None)
    # and every post published, nothing early, no attempt spent on the waits
    for post in hanging + later:
        got = fire.read(post)
        assert got.status == PostStatus.PUBLISHED
        assert got.deliveries["hang"].status == DeliveryStatus.PUBLISHED
    assert [fire.read(p).deliveries["hang"].attempts for p in hanging + later] == [2, 2, 2, 1]
    assert not any(r.early for r in fire.receiver.requests_to(HANG))
