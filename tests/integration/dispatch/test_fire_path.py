"""The fire path end to end (sweeper -> SQS delay queue -> worker -> receiver) on the simulated
clock: exactly one accepted delivery per (post, channel), never early."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from scheduled_posts.data.due_index import DueIndex
from scheduled_posts.data.post_store import PostStore
from scheduled_posts.logic.promotion import make_promoter
from scheduled_posts.logic.sweep import Sweeper
from scheduled_posts.models.messages import DispatchMessage
from scheduled_posts.models.post import DeliveryStatus, Post, PostStatus
from tests.integration.dispatch.conftest import FirePath
from tests.support.driver import Crash
from tests.support.factories import cancel_post, due_entry, move_post
from tests.support.receiver import Answer


def test_fire_path_due_post_delivered_once_on_time(fire: FirePath) -> None:
    fire.channel("c1")
    publish_at = fire.clock.now() + timedelta(seconds=125)
    post = fire.post(publish_at, ["c1"])
    fire.driver.run_for(300)
    key = f"{post.schedule_id}:c1"
    assert fire.receiver.accepted(key) == 1
    assert fire.receiver.early_requests() == []
    got = fire.read(post)
    assert got.status == PostStatus.PUBLISHED
    assert got.deliveries["c1"].status == DeliveryStatus.PUBLISHED
    assert got.publish_lag_seconds is not None and got.publish_lag_seconds < 2
    assert fire.receiver.accepted_at(key) >= publish_at  # type: ignore[operator]


# -- duplicates and overlapping sweepers -------------------------------------------------------


def _sent_message(fire: FirePath, post: Post) -> DispatchMessage:
    return DispatchMessage(
        schedule_id=post.schedule_id, version=post.version, publish_at=post.publish_at
    )


def test_fire_path_same_message_twice_sequential_delivers_once(fire: FirePath) -> None:
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(seconds=30), ["c1"])
    fire.queue.send(_sent_message(fire, post), 30)
    fire.queue.send(_sent_message(fire, post), 30)
    fire.clock.advance(30)
    first = fire.driver.poll_concurrently(1)  # one message in the first invocation ...
    second = fire.driver.poll_concurrently(1)  # ... its duplicate in the next
    assert len(first) == len(second) == 1
    fire.driver.run_for(120)
    assert fire.receiver.accepted(f"{post.schedule_id}:c1") == 1
    assert len(fire.receiver.requests_for(f"{post.schedule_id}:c1")) == 1
    assert [a["outcome"] for a in fire.attempts(post)] == ["published"]  # the duplicate was dropped
    assert fire.driver.dlq_bodies() == []


def test_fire_path_same_message_twice_concurrent_delivers_once(fire: FirePath) -> None:
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(seconds=30), ["c1"])
    fire.queue.send(_sent_message(fire, post), 30)
    fire.queue.send(_sent_message(fire, post), 30)
    fire.clock.advance(30)
    reports = fire.driver.poll_concurrently(2)
    assert len(reports) == 2
    fire.driver.run_for(120)
    assert fire.receiver.accepted(f"{post.schedule_id}:c1") == 1
    assert [a["outcome"] for a in fire.attempts(post)] == ["published"]
    assert fire.read(post).status == PostStatus.PUBLISHED


def test_fire_path_retry_message_duplicated_concurrently_delivers_once(fire: FirePath) -> None:
    # Given a post whose first attempt got a 503 (a retry message with the lease token is out),
    # with the backoff pinned to 8 s so the retry is still queued when the test duplicates it
    fire.uniform = lambda low, high: min(high, 8.0)
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(seconds=5), ["c1"])
    fire.receiver.script(Answer.error(503), url="https://hooks.example.com/c1")
    fire.driver.run_for(6)
    publishing = fire.read(post)
    assert publishing.status == PostStatus.PUBLISHING
    retry = fire.driver.receive()  # take the retry message out and duplicate it
    assert retry == []
    fire.clock.advance(10)
    retry = fire.driver.receive()
    assert len(retry) == 1
    fire.aws.sqs.send_message(
        QueueUrl=fire.settings.DISPATCH_QUEUE_URL, MessageBody=retry[0]["Body"]
    )
    fire.aws.sqs.change_message_visibility(
        QueueUrl=fire.settings.DISPATCH_QUEUE_URL,
        ReceiptHandle=retry[0]["ReceiptHandle"],
        VisibilityTimeout=0,
    )
    # When both copies are processed at once
    fire.driver.poll_concurrently(2)
    fire.driver.run_for(120)
    # Then the channel was accepted once
    assert fire.receiver.accepted(f"{post.schedule_id}:c1") == 1
    assert fire.read(post).status == PostStatus.PUBLISHED


def test_fire_path_two_sweepers_at_once_deliver_once(fire: FirePath) -> None:
    for cid in ("c1", "c2"):
        fire.channel(cid)
    now = fire.clock.now()
    posts = [fire.post(now + timedelta(seconds=40 + i % 3), ["c1", "c2"]) for i in range(8)]

    class StaleReadIndex(DueIndex):
        def read_watermark(self, shard: int) -> Any:
            return None

        def query_bucket(self, *args: Any, **kwargs: Any) -> Any:
            for page in super().query_bucket(*args, **kwargs):
                for entry in page.entries:
                    entry.enqueued_version = None
                yield page

    first = Sweeper(fire.settings, clock=fire.clock).sweep()
    second = Sweeper(
        fire.settings,
        clock=fire.clock,
        due_index=StaleReadIndex(fire.settings.DUE_INDEX_TABLE_NAME),
    ).sweep()
    assert first.enqueued == second.enqueued == 8  # every message sent twice
    fire.driver.sweeper = None
    fire.driver.run_for(120)
    for post in posts:
        for cid in ("c1", "c2"):
            assert fire.receiver.accepted(f"{post.schedule_id}:{cid}") == 1
    assert fire.receiver.raw_resends() == 0
    assert fire.receiver.early_requests() == []


# -- crashes -----------------------------------------------------------------------------------


def test_fire_path_crash_after_claim_watchdog_completes_once(fire: FirePath) -> None:
    class CrashAfterClaim(PostStore):
        crashed = False

        def claim(self, *args: Any, **kwargs: Any) -> Any:
            claimed = super().claim(*args, **kwargs)
            if not self.crashed:
                self.crashed = True
                raise Crash("after claim")
            return claimed

    fire.store = CrashAfterClaim(fire.settings.POSTS_TABLE_NAME)
    fire.channel("c1")
    publish_at = fire.clock.now() + timedelta(seconds=20)
    post = fire.post(publish_at, ["c1"])
    fire.driver.run_for(
        20 + fire.settings.LEASE_SECONDS + fire.settings.WATCHDOG_INTERVAL_SECONDS + 10
    )
    assert fire.store.crashed
    key = f"{post.schedule_id}:c1"
    assert fire.receiver.accepted(key) == 1
    got = fire.read(post)
    assert got.status == PostStatus.PUBLISHED
    worst = fire.settings.LEASE_SECONDS + fire.settings.WATCHDOG_INTERVAL_SECONDS + 2
    assert got.publish_lag_seconds is not None and got.publish_lag_seconds <= worst


def test_fire_path_crash_after_2xx_before_status_write_no_resend(fire: FirePath) -> None:
    class CrashBeforeRecord(PostStore):
        crashed = False

        def save_round(self, *args: Any, **kwargs: Any) -> Any:
            if not self.crashed:
                self.crashed = True
                raise Crash("before the status write")
            return super().save_round(*args, **kwargs)

    fire.store = CrashBeforeRecord(fire.settings.POSTS_TABLE_NAME)
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(seconds=20), ["c1"])
    fire.driver.run_for(200)
    key = f"{post.schedule_id}:c1"
    assert fire.store.crashed
    assert fire.receiver.accepted(key) == 1
    assert len(fire.receiver.requests_for(key)) == 1  # the retry replayed the stored 2xx
    assert fire.read(post).status == PostStatus.PUBLISHED


def test_fire_path_timeout_inside_idempotent_section_one_accepted(fire: FirePath) -> None:
    real = fire.adapter

    class TimesOutAfterSend:
        platform = "webhook"
        crashed = False

        def deliver(self, channel: Any, request: Any, *, now: Any) -> Any:
            result = real.deliver(channel, request, now=now)
            if not self.crashed:
                self.crashed = True
                raise Crash("Lambda timeout while the response was in flight")
            return result

    fire.adapter = TimesOutAfterSend()
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(seconds=20), ["c1"])
    fire.driver.run_for(200)
    key = f"{post.schedule_id}:c1"
    assert fire.adapter.crashed
    assert fire.receiver.accepted(key) == 1
    requests = fire.receiver.requests_for(key)
    assert len(requests) == 2  # a raw re-send with the same Idempotency-Key, counted
    assert fire.receiver.raw_resends() == 1
    assert fire.read(post).status == PostStatus.PUBLISHED


# -- edits and cancels -------------------------------------------------------------------------


def test_fire_path_cancel_two_seconds_before_no_delivery(fire: FirePath) -> None:
    fire.channel("c1")
    publish_at = fire.clock.now() + timedelta(seconds=60)
    post = fire.post(publish_at, ["c1"])
    fire.driver.run_until(publish_at - timedelta(seconds=2))
    cancel_post(fire.settings, post, now=fire.clock.now())
    fire.driver.run_for(120)
    assert fire.receiver.count() == 0
    assert fire.read(post).status == PostStatus.CANCELLED
    assert fire.driver.dlq_bodies() == []


def test_fire_path_move_later_after_enqueue_delivers_at_new_time_only(fire: FirePath) -> None:
    fire.channel("c1")
    old_at = fire.clock.now() + timedelta(seconds=60)
    post = fire.post(old_at, ["c1"])
    fire.driver.run_for(10)  # swept and enqueued for the old time
    new_at = old_at + timedelta(minutes=5)
    move_post(fire.settings, post, publish_at=new_at, now=fire.clock.now())
    fire.driver.run_until(new_at - timedelta(seconds=1))
    assert fire.receiver.count() == 0
    fire.driver.run_for(60)
    requests = fire.receiver.requests_for(f"{post.schedule_id}:c1")
    assert len(requests) == 1
    assert requests[0].at >= new_at


def test_fire_path_move_earlier_into_lookahead_delivers_at_new_time(fire: FirePath) -> None:
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(hours=2), ["c1"])
    fire.driver.run_for(30)
    new_at = fire.clock.now() + timedelta(minutes=3)
    moved = move_post(fire.settings, post, publish_at=new_at, now=fire.clock.now())
    make_promoter(fire.settings, fire.clock)(due_entry(moved))
    fire.driver.run_for(5 * 60)
    requests = fire.receiver.requests_for(f"{post.schedule_id}:c1")
    assert len(requests) == 1
    assert new_at <= requests[0].at <= new_at + timedelta(seconds=2)


def test_fire_path_move_earlier_without_promotion_sweeper_drains_marker(fire: FirePath) -> None:
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(hours=2), ["c1"])
    fire.driver.run_for(30)
    new_at = fire.clock.now() + timedelta(minutes=3)
    move_post(fire.settings, post, publish_at=new_at, now=fire.clock.now())
    fire.driver.run_for(5 * 60)
    requests = fire.receiver.requests_for(f"{post.schedule_id}:c1")
    assert len(requests) == 1
    assert requests[0].at >= new_at
