"""Per-channel rate limit: delivery starts are capped per UTC minute, waits are never failures."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import boto3
import pytest

from scheduled_posts.data.rate_limit import RateLimitStore
from scheduled_posts.logic.rate_limit import RateLimiter
from scheduled_posts.models.post import PostStatus
from tests.integration.dispatch.conftest import FirePath
from tests.integration.ops.conftest import set_rate_limit


@pytest.mark.slow  # about 60 s of CPU: moto copies every table on each transaction
def test_rate_limit_burst_of_300_at_60_per_minute_delivered_over_5_minutes_in_order(
    make_fire,  # type: ignore[no-untyped-def]
) -> None:
    # Given a channel limited to 60 starts a minute and 300 posts due within 30 s
    fire: FirePath = make_fire(RETRY_BASE_SECONDS=2.0, RETRY_CAP_SECONDS=60.0)
    fire.channel("c1")
    set_rate_limit(fire, "c1", 60)
    t0 = fire.clock.now() + timedelta(seconds=60)
    # 100 ms apart, offset so each SQS delay second (whole seconds) holds 10 posts
    posts = [fire.post(t0 + timedelta(milliseconds=50 + 100 * i), ["c1"]) for i in range(300)]
    # When the fire path runs for 7 minutes
    fire.driver.run_for(60 + 7 * 60, step=1.0)
    # Then every post is published exactly once ...
    keys = [f"{p.schedule_id}:c1" for p in posts]
    assert all(fire.receiver.accepted(k) == 1 for k in keys)
    assert fire.receiver.early_requests() == []
    minutes = [fire.receiver.accepted_at(k).replace(second=0, microsecond=0) for k in keys]  # type: ignore[union-attr]
    # ... at most 60 starts in any minute, over exactly 5 minutes ...
    per_minute = Counter(minutes)
    assert max(per_minute.values()) <= 60
    assert len(per_minute) == 5
    # ... and in publish_at order (minute by minute)
    assert minutes == sorted(minutes)


def test_rate_limit_wait_uses_no_attempt_and_records_lag(make_fire) -> None:  # type: ignore[no-untyped-def]
    # Given a channel limited to 1 start a minute and two posts due at once
    fire: FirePath = make_fire()
    fire.channel("c1")
    set_rate_limit(fire, "c1", 1)
    at = fire.clock.now() + timedelta(seconds=30)
    first, second = fire.post(at, ["c1"]), fire.post(at + timedelta(milliseconds=1), ["c1"])
    # When both fall due
    fire.driver.run_for(30 + 150)
    # Then the second waits for the next minute: published, one attempt, its lag recorded
    late = fire.read(second)
    assert fire.read(first).status == late.status == PostStatus.PUBLISHED
    assert late.deliveries["c1"].attempts == 1
    assert [a["outcome"] for a in fire.attempts(second)] == ["published"]
    assert late.deliveries["c1"].lag_seconds is not None
    assert late.deliveries["c1"].lag_seconds >= 29


def test_rate_limiter_full_minute_reserves_next_minute(fire: FirePath) -> None:
    limiter = RateLimiter(RateLimitStore(fire.settings.POSTS_TABLE_NAME))
    now = fire.clock.now() + timedelta(seconds=10)
    granted = limiter.acquire("c9", limit=1, now=now)
    waiting = limiter.acquire("c9", limit=1, now=now)
    assert granted.may_start(now)
    assert not waiting.may_start(now)
    assert waiting.start_at == now.replace(second=0, microsecond=0) + timedelta(minutes=1)


def test_rate_limiter_held_slot_of_current_minute_takes_no_second_slot(fire: FirePath) -> None:
    store = RateLimitStore(fire.settings.POSTS_TABLE_NAME)
    limiter = RateLimiter(store)
    now = fire.clock.now()
    reserved = limiter.acquire("c9", limit=5, now=now)
    again = limiter.acquire("c9", limit=5, now=now, held=reserved.slot)
    assert again.may_start(now)
    assert store.starts("c9", reserved.slot or "") == 1


def test_rate_limit_reserved_slot_is_used_once_even_when_the_first_holder_dies_after_its_request(
    make_fire,  # type: ignore[no-untyped-def]
) -> None:
    # Given a channel limited to 1 start a minute; the second of two posts due at once reserved
    # the next minute's slot and waits for it
    fire: FirePath = make_fire()
    fire.channel("c1")
    set_rate_limit(fire, "c1", 1)
    at = fire.clock.now() + timedelta(seconds=30)
    fire.post(at, ["c1"])
    second = fire.post(at + timedelta(milliseconds=1), ["c1"])
    fire.driver.run_for(32)
    waiting = fire.read(second)
    slot = waiting.deliveries["c1"].rate_slot
    assert slot is not None and waiting.status == PostStatus.PUBLISHING
    # When, in the slot's minute, one holder of the lease starts on the slot and dies after its
    # request (its idempotency record lost, its round never saved), and a second holder of the
    # same lease (a duplicate of the message) starts in the same minute from the same reading
    fire.clock.advance(
        (waiting.deliveries["c1"].next_attempt_at - fire.clock.now()).total_seconds()
    )  # type: ignore[operator]
    deliverer = fire.publisher().deliverer
    deliverer.deliver(waiting, "c1", fire.clock.now())
    key = f"{second.schedule_id}:c1"
    assert fire.receiver.accepted(key) == 1
    idempotency = boto3.resource("dynamodb", region_name="us-east-1").Table(
        fire.settings.IDEMPOTENCY_TABLE_NAME
    )
    for item in idempotency.scan()["Items"]:
        idempotency.delete_item(Key={"id": item["id"]})
    fire.clock.advance(5)
    again = deliverer.deliver(waiting, "c1", fire.clock.now())
    # Then the slot was used once: the second holder waits for a slot of its own, next minute
    assert fire.receiver.accepted(key) == 1
    assert len(fire.receiver.requests) == 2  # the first post's and this one's, one per minute
    assert again.delivery.next_attempt_at is not None
    assert again.delivery.next_attempt_at > fire.clock.now()
    assert again.delivery.rate_slot not in (None, slot)
