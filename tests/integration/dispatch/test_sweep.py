"""Sweeper and promotion against moto: what is sent, when, and what it costs to read."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import boto3
import pytest

from scheduled_posts import keys
from scheduled_posts.data.due_index import DueIndex
from scheduled_posts.data.queue import DispatchQueue
from scheduled_posts.errors import QueueSendError
from scheduled_posts.logic.promotion import make_promoter
from scheduled_posts.logic.sweep import Sweeper
from tests.support.clock import SimClock
from tests.support.factories import (
    create_post,
    due_entry,
    seed_far_future_entries,
)
from tests.support.fixtures import AwsResources


def _receive_all(aws: AwsResources) -> list[dict[str, Any]]:
    bodies = []
    while True:
        got = aws.sqs.receive_message(
            QueueUrl=aws.settings.DISPATCH_QUEUE_URL, MaxNumberOfMessages=10
        ).get("Messages", [])
        if not got:
            return bodies
        for message in got:
            bodies.append(json.loads(message["Body"]))
            aws.sqs.delete_message(
                QueueUrl=aws.settings.DISPATCH_QUEUE_URL, ReceiptHandle=message["ReceiptHandle"]
            )


def _entry_item(aws: AwsResources, post: Any) -> dict[str, Any]:
    table = boto3.resource("dynamodb", region_name="us-east-1").Table(
        aws.settings.DUE_INDEX_TABLE_NAME
    )
    return table.get_item(
        Key={
            "bucket": keys.due_bucket(post.publish_at, post.shard),
            "due": keys.order_key(post.publish_at, post.schedule_id),
        }
    ).get("Item", {})


def test_sweep_due_within_lookahead_sends_with_delay_and_writes_no_mark(
    aws: AwsResources, clock: SimClock
) -> None:
    now = clock.now()
    # Given a post in 5 min (sweeper's window) and one in 30 min (outside it)
    soon = create_post(
        aws.settings,
        now=now - timedelta(hours=1),
        publish_at=now + timedelta(minutes=5),
        channel_ids=["c1"],
    )
    create_post(aws.settings, now=now, publish_at=now + timedelta(minutes=30), channel_ids=["c1"])
    # When the sweeper runs
    result = Sweeper(aws.settings, clock=clock).sweep()
    # Then only the soon one is enqueued, invisible until its publish_at
    assert result.enqueued == 1
    assert _receive_all(aws) == []
    clock.advance(5 * 60 - 1)
    assert _receive_all(aws) == []
    clock.advance(1.5)
    bodies = _receive_all(aws)
    assert [b["schedule_id"] for b in bodies] == [soon.schedule_id]
    # the watermark, not a mark on the entry, keeps the next sweep from sending it (W4)
    assert "enqueued_version" not in _entry_item(aws, soon)


def test_sweep_twice_sends_once(aws: AwsResources, clock: SimClock) -> None:
    now = clock.now()
    create_post(aws.settings, now=now, publish_at=now + timedelta(minutes=2), channel_ids=["c1"])
    Sweeper(aws.settings, clock=clock).sweep()
    second = Sweeper(aws.settings, clock=clock).sweep()
    assert second.enqueued == 0
    clock.advance(200)
    assert len(_receive_all(aws)) == 1


def test_sweep_two_sweepers_overlapping_send_each_post_at_most_twice(
    aws: AwsResources, clock: SimClock
) -> None:
    now = clock.now()
    for i in range(12):
        create_post(
            aws.settings, now=now, publish_at=now + timedelta(seconds=30 + i), channel_ids=["c"]
        )

    # Two sweepers at once: the second read its watermark and entries before the first wrote.
    class StaleReadIndex(DueIndex):
        def read_watermark(self, shard: int) -> Any:
            return None

        def query_bucket(self, *args: Any, **kwargs: Any) -> Any:
            for page in super().query_bucket(*args, **kwargs):
                for entry in page.entries:
                    entry.enqueued_version = None
                yield page

    first = Sweeper(aws.settings, clock=clock)
    second = Sweeper(
        aws.settings, clock=clock, due_index=StaleReadIndex(aws.settings.DUE_INDEX_TABLE_NAME)
    )
    r1, r2 = first.sweep(), second.sweep()
    clock.advance(60)
    bodies = _receive_all(aws)
    assert len({b["schedule_id"] for b in bodies}) == 12
    # each sweeper sent every post once: the duplicates are the worker's claim to drop
    assert r1.enqueued == r2.enqueued == 12
    assert len(bodies) == 24


@pytest.mark.slow
def test_sweep_reads_with_far_future_entries_equal_reads_without(
    aws: AwsResources, clock: SimClock
) -> None:
    sweeper = Sweeper(aws.settings, clock=clock)
    sweeper.sweep()  # establishes the watermarks
    # Given one due post and no far-future entries: the sweep a minute later
    clock.advance(60)
    now = clock.now()
    create_post(aws.settings, now=now, publish_at=now + timedelta(minutes=9), channel_ids=["c"])
    baseline = sweeper.sweep()
    # And the same a minute later, with 10,000 far-future entries pending
    clock.advance(60)
    now = clock.now()
    seed_far_future_entries(aws.settings, count=10_000, after=now)
    create_post(aws.settings, now=now, publish_at=now + timedelta(minutes=9), channel_ids=["c"])
    loaded = sweeper.sweep()
    # Then both read the same number of items
    assert loaded.enqueued == baseline.enqueued == 1
    assert loaded.scanned_count == baseline.scanned_count


def test_promoter_sends_at_once_and_deletes_late_marker(aws: AwsResources, clock: SimClock) -> None:
    now = clock.now()
    post = create_post(
        aws.settings, now=now, publish_at=now + timedelta(seconds=30), channel_ids=["c"]
    )
    make_promoter(aws.settings, clock)(due_entry(post))
    markers, _ = DueIndex(aws.settings.DUE_INDEX_TABLE_NAME).query_late_markers(post.shard)
    assert markers == []
    # the promotion's mark is what keeps the sweeper from sending it again
    swept = Sweeper(aws.settings, clock=clock).sweep()
    assert (swept.enqueued, swept.already_enqueued) == (0, 1)
    clock.advance(31)
    assert [b["reason"] for b in _receive_all(aws)] == ["promote"]


def test_sweep_after_failed_promotion_drains_late_marker(
    aws: AwsResources, clock: SimClock
) -> None:
    now = clock.now()
    # Given a sweep already passed this window (watermark at now + lookahead) ...
    Sweeper(aws.settings, clock=clock).sweep()
    # ... a post created behind the watermark whose promotion fails
    post = create_post(
        aws.settings, now=now, publish_at=now + timedelta(seconds=30), channel_ids=["c"]
    )

    class DownQueue(DispatchQueue):
        def send(self, *args: Any, **kwargs: Any) -> None:
            raise QueueSendError("down")

    from scheduled_posts.logic.promotion import promote_entry

    with pytest.raises(QueueSendError):
        promote_entry(
            due_entry(post),
            settings=aws.settings,
            due_index=DueIndex(aws.settings.DUE_INDEX_TABLE_NAME),
            queue=DownQueue(aws.settings.DISPATCH_QUEUE_URL),
            clock=clock,
        )
    # When the next sweep runs, Then it sends the post from its late marker
    clock.advance(10)
    result = Sweeper(aws.settings, clock=clock).sweep()
    assert (result.enqueued, result.late_drained) == (1, 1)
    clock.advance(30)
    assert [b["schedule_id"] for b in _receive_all(aws)] == [post.schedule_id]


class _CountingIndex(DueIndex):
    """Records the shard of every watermark write."""

    def __init__(self, table_name: str) -> None:
        super().__init__(table_name)
        self.writes: list[int] = []

    def advance_watermark(self, shard: int, instant: Any) -> Any:
        self.writes.append(shard)
        return super().advance_watermark(shard, instant)


def test_sweep_across_the_hour_writes_one_watermark_per_shard_unless_the_first_bucket_sent(
    aws: AwsResources, clock: SimClock
) -> None:
    # Given a first sweep at 12:55, whose window spans every hour bucket from
    # MISFIRE_GRACE_SECONDS back to 13:05, and one post due at 12:58, so its shard's 12:xx
    # bucket sends something before the 13:xx bucket
    clock.advance_to(clock.now().replace(minute=55))
    post = create_post(
        aws.settings,
        now=clock.now() - timedelta(hours=1),
        publish_at=clock.now() + timedelta(minutes=3),
        channel_ids=["c"],
    )
    index = _CountingIndex(aws.settings.DUE_INDEX_TABLE_NAME)
    # When it sweeps
    result = Sweeper(aws.settings, due_index=index, clock=clock).sweep()
    # Then each shard writes its watermark once (after its last bucket), except the post's
    # shard, which also writes after the 12:xx bucket that sent it
    shards = aws.settings.WRITE_SHARD_COUNT
    assert result.enqueued == 1
    assert sorted(index.writes) == sorted([*range(shards), post.shard])
    # and the next sweep, from those watermarks, sends nothing again
    clock.advance(60)
    assert Sweeper(aws.settings, clock=clock).sweep().enqueued == 0


def _threaded_world(aws: AwsResources, clock: SimClock, count: int) -> tuple[Any, list[Any], int]:
    """Settings sweeping on 4 threads, ``count`` posts due 30 s on, and one post's shard."""
    settings = aws.settings.model_copy(update={"SWEEP_PARALLELISM": 4})
    now = clock.now()
    posts = [
        create_post(
            settings, now=now, publish_at=now + timedelta(seconds=30 + i), channel_ids=["c"]
        )
        for i in range(count)
    ]
    return settings, posts, posts[0].shard


def test_sweep_on_several_threads_sends_what_the_shards_in_turn_send_and_isolates_a_failure(
    aws: AwsResources, clock: SimClock
) -> None:
    settings, posts, broken = _threaded_world(aws, clock, 40)

    class OneShardDown(DispatchQueue):
        def send_batch(self, outgoing: Any) -> list[bool]:
            ids = {p.schedule_id for p in posts if p.shard == broken}
            if any(o.message.schedule_id in ids for o in outgoing):
                raise QueueSendError("down")
            return super().send_batch(outgoing)

    # When a sweep on 4 threads meets one shard whose sends fail
    first = Sweeper(settings, clock=clock, queue=OneShardDown(settings.DISPATCH_QUEUE_URL)).sweep()
    # Then only that shard failed, every other post was sent once
    others = [p for p in posts if p.shard != broken]
    assert first.failed_shards == [broken]
    assert first.enqueued == len(others)
    # and the next sweep sends the failed shard's posts from its watermark, nothing else again
    second = Sweeper(settings, clock=clock).sweep()
    assert second.enqueued == len(posts) - len(others)
    clock.advance(120)  # past the last publish_at (now + 69 s)
    assert sorted(b["schedule_id"] for b in _receive_all(aws)) == sorted(
        p.schedule_id for p in posts
    )


def test_sweep_result_merged_sums_every_count() -> None:
    from scheduled_posts.logic.sweep import SweepResult

    parts = [
        SweepResult(enqueued=2, duplicates=1, already_enqueued=3, late_drained=4,
                    scanned_count=5, queries=6, failed_shards=[1]),
        SweepResult(enqueued=1, queries=1, failed_shards=[3]),
    ]  # fmt: skip
    merged = SweepResult.merged(parts)
    assert (merged.enqueued, merged.duplicates, merged.already_enqueued, merged.late_drained,
            merged.scanned_count, merged.queries) == (3, 1, 3, 4, 5, 7)  # fmt: skip
    assert merged.failed_shards == [1, 3]


def test_sweep_on_threads_sweeps_every_other_shard_before_raising_an_unexpected_error(
    aws: AwsResources, clock: SimClock
) -> None:
    settings, posts, broken = _threaded_world(aws, clock, 24)

    class OneShardBroken(DueIndex):
        def query_late_markers(self, shard: int) -> Any:  # a shard's first read
            if shard == broken:
                raise RuntimeError("unreadable watermark")
            return super().query_late_markers(shard)

    # When one shard fails with an error that is not a refused send, Then the sweep raises it
    with pytest.raises(RuntimeError, match="unreadable watermark"):
        Sweeper(
            settings, clock=clock, due_index=OneShardBroken(settings.DUE_INDEX_TABLE_NAME)
        ).sweep()
    # ... after every other shard sent its posts
    clock.advance(120)
    sent = sorted(b["schedule_id"] for b in _receive_all(aws))
    assert sent == sorted(p.schedule_id for p in posts if p.shard != broken)


def test_sweep_out_of_time_stops_cleanly_and_the_next_run_goes_on_from_the_watermarks(
    aws: AwsResources, clock: SimClock
) -> None:
    now = clock.now()
    Sweeper(aws.settings, clock=clock).sweep()  # watermarks at now + lookahead (12:10)
    posts = [
        create_post(
            aws.settings,
            now=now - timedelta(hours=1),
            publish_at=now + timedelta(minutes=12, seconds=i),
            channel_ids=["c"],
        )
        for i in range(30)
    ]
    clock.advance(180)  # the next run's horizon (12:13) covers them: one page per shard
    # Given a run whose Lambda has time for three shards only (each shard checks the time
    # once before it starts and once per page)
    checks = iter([60.0] * 6 + [4.0] * 1000)
    first = Sweeper(aws.settings, clock=clock).sweep(remaining_seconds=lambda: next(checks))
    # Then it stopped the other shards before they sent anything, without failing them
    stopped = set(first.stopped_shards)
    assert stopped and not first.failed_shards
    assert stopped == set(range(aws.settings.WRITE_SHARD_COUNT)) - {0, 1, 2}
    assert first.enqueued == sum(1 for p in posts if p.shard not in stopped)
    # and the next run sends exactly the rest
    second = Sweeper(aws.settings, clock=clock).sweep(remaining_seconds=lambda: 50.0)
    assert second.stopped_shards == [] and second.enqueued == len(posts) - first.enqueued
    clock.advance(800)
    assert sorted(b["schedule_id"] for b in _receive_all(aws)) == sorted(
        p.schedule_id for p in posts
    )
