"""The reconciler: finds posts the fire path left behind, rescues each once, repairs counters."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from functions.reconciler.handler import make_lambda_handler
from local.emulation.lambda_runtime import LambdaContext
from scheduled_posts.data.posts import PostRepository
from scheduled_posts.data.queue import DispatchQueue, Outgoing
from scheduled_posts.logic.reconcile import Reconciler, ReconcileResult
from scheduled_posts.models.messages import DispatchMessage
from scheduled_posts.models.post import PostStatus
from tests.integration.dispatch.conftest import FirePath
from tests.integration.ops.conftest import emitted_metric


class DroppingQueue:
    """A dispatch queue that loses (accepts, then drops) every message for ``lost_ids``."""

    def __init__(self, inner: DispatchQueue, lost_ids: set[str]) -> None:
        self.inner = inner
        self.lost_ids = lost_ids
        self.dropped: list[DispatchMessage] = []

    def send(self, message: DispatchMessage, delay_seconds: int = 0) -> None:
        if message.schedule_id in self.lost_ids:
            self.dropped.append(message)
            return
        self.inner.send(message, delay_seconds)

    def send_batch(self, outgoing: Sequence[Outgoing]) -> list[bool]:
        kept = [o for o in outgoing if o.message.schedule_id not in self.lost_ids]
        self.dropped += [o.message for o in outgoing if o.message.schedule_id in self.lost_ids]
        flags = iter(self.inner.send_batch(kept) if kept else [])
        return [True if o.message.schedule_id in self.lost_ids else next(flags) for o in outgoing]


def _reconciler(fire: FirePath) -> Reconciler:
    return Reconciler(
        fire.settings, queue=DispatchQueue(fire.settings.DISPATCH_QUEUE_URL), clock=fire.clock
    )


def _run_handler(fire: FirePath) -> dict[str, Any]:
    handler = make_lambda_handler(_reconciler(fire).run)
    return handler({}, LambdaContext("reconciler", 240, clock=fire.clock.seconds))


def test_reconciler_lost_message_post_delivered_once_with_one_miss(
    fire: FirePath, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a post whose every dispatch message is lost by the queue
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(seconds=120), ["c1"])
    lossy = DroppingQueue(fire.queue, {post.schedule_id})
    fire.queue = lossy
    fire.driver.run_for(120 + 180, step=5)
    assert lossy.dropped, "the sweeper sent the post (and lost it)"
    assert fire.read(post).status == PostStatus.SCHEDULED
    capsys.readouterr()
    # When the reconciler runs
    summary = _run_handler(fire)
    # Then it rescued exactly that post and said so in ReconciliationMisses
    assert summary["misses"] == 1
    assert list(summary["rescued"]) == [post.schedule_id]
    assert emitted_metric(capsys.readouterr().out, "ReconciliationMisses") == [1.0]
    # ... and the post is delivered once
    fire.driver.run_for(10)
    assert fire.receiver.accepted(f"{post.schedule_id}:c1") == 1
    assert len(fire.receiver.requests_for(f"{post.schedule_id}:c1")) == 1
    assert fire.read(post).status == PostStatus.PUBLISHED


def test_reconciler_healthy_fire_path_reports_zero_misses(
    fire: FirePath, capsys: pytest.CaptureFixture[str]
) -> None:
    fire.channel("c1")
    fire.post(fire.clock.now() + timedelta(seconds=60), ["c1"])
    fire.driver.run_for(60 + 180, step=5)
    capsys.readouterr()
    summary = _run_handler(fire)
    assert summary["misses"] == 0
    assert emitted_metric(capsys.readouterr().out, "ReconciliationMisses") == [0.0]


def test_reconciler_lease_expired_long_ago_taken_over_and_completed(fire: FirePath) -> None:
    # Given a post claimed by a worker that died, and a watchdog that is down
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(seconds=30), ["c1"])
    fire.driver.watchdog_down = True
    table = boto3.resource("dynamodb", region_name="us-east-1").Table(
        fire.settings.POSTS_TABLE_NAME
    )
    fire.clock.advance(30)
    fire.store.claim(
        post,
        lease_token="dead-worker",
        lease_expires_at=fire.clock.now() + timedelta(seconds=60),
        now=fire.clock.now(),
    )
    fire.clock.advance(600)
    assert (
        table.get_item(Key={"pk": f"POST#{post.schedule_id}", "sk": "POST"})["Item"]["lease_token"]
        == "dead-worker"
    )
    # When the reconciler runs
    result: ReconcileResult = _reconciler(fire).run()
    fire.driver.run_for(10)
    # Then it took the lease over and the post completed once
    assert result.misses == 1
    assert fire.receiver.accepted(f"{post.schedule_id}:c1") == 1
    assert fire.read(post).status == PostStatus.PUBLISHED


def _set_pending(fire: FirePath, owner: str, pending: int) -> None:
    boto3.resource("dynamodb", region_name="us-east-1").Table(
        fire.settings.POSTS_TABLE_NAME
    ).put_item(Item={"pk": f"OWNER#{owner}", "sk": "PENDING", "pending": pending})


def _pending(fire: FirePath, owner: str) -> int:
    return PostRepository(
        posts_table_name=fire.settings.POSTS_TABLE_NAME,
        due_table_name=fire.settings.DUE_INDEX_TABLE_NAME,
    ).pending_count(owner)


def _owner_with_drift(fire: FirePath) -> None:
    # alice: one post in the window (published, so released), one still scheduled, and a
    # counter saying 2 (3 counted, 1 released) where 1 is true
    fire.channel("c1")
    fire.post(fire.clock.now() + timedelta(seconds=30), ["c1"])
    fire.post(fire.clock.now() + timedelta(days=2), ["c1"])
    fire.driver.run_for(30 + 180, step=5)
    _set_pending(fire, "alice", 3)


def test_reconciler_pending_drift_seen_once_not_repaired(fire: FirePath) -> None:
    _owner_with_drift(fire)
    result = _reconciler(fire).run()
    assert result.drift_seen == {"alice": 1}
    assert result.pending_repaired == {}
    assert _pending(fire, "alice") == 2


def test_reconciler_pending_drift_seen_twice_repaired(fire: FirePath) -> None:
    _owner_with_drift(fire)
    _reconciler(fire).run()
    fire.clock.advance(300)
    result = _reconciler(fire).run()
    assert result.pending_repaired == {"alice": 1}
    assert _pending(fire, "alice") == 1


class _OversizedWritesStore:
    """The post store, with every lease write of the ids in ``failing`` refused as DynamoDB
    refuses an item over its 400 KB limit."""

    def __init__(self, store: Any, failing: set[str]) -> None:
        self._store, self._failing = store, failing

    def renew_lease(self, post: Any, **kwargs: Any) -> Any:
        if post.schedule_id in self._failing:
            raise ClientError(
                {
                    "Error": {
                        "Code": "ValidationException",
                        "Message": "Item size to update has exceeded the maximum allowed size",
                    }
                },
                "UpdateItem",
            )
        return self._store.renew_lease(post, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def test_reconciler_one_failing_post_write_still_rescues_another_tenants_lost_post(
    fire: FirePath, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given alice's post left publishing by a dead worker, whose every write now fails, and
    # (due after it) bob's post whose dispatch message was lost; the watchdog is down
    fire.channel("c1")
    fire.channel("b1", owner="bob")
    wedged = fire.post(fire.clock.now() + timedelta(seconds=30), ["c1"])
    lost = fire.post(fire.clock.now() + timedelta(seconds=60), ["b1"], owner="bob")
    fire.queue = DroppingQueue(fire.queue, {wedged.schedule_id, lost.schedule_id})
    fire.driver.watchdog_down = True
    fire.clock.advance(30)
    fire.store.claim(
        wedged,
        lease_token="dead-worker",
        lease_expires_at=fire.clock.now() + timedelta(seconds=60),
        now=fire.clock.now(),
    )
    fire.driver.run_for(300, step=5)
    assert fire.read(lost).status == PostStatus.SCHEDULED
    capsys.readouterr()
    reconciler = Reconciler(
        fire.settings,
        dispatch=_OversizedWritesStore(fire.store, {wedged.schedule_id}),  # type: ignore[arg-type]
        queue=DispatchQueue(fire.settings.DISPATCH_QUEUE_URL),
        clock=fire.clock,
    )
    handler = make_lambda_handler(reconciler.run)

    # When the reconciler runs
    with pytest.raises(RuntimeError, match="1 post"):
        handler({}, LambdaContext("reconciler", 240, clock=fire.clock.seconds))

    # Then bob's post was rescued in the same run, and the failure was counted
    out = capsys.readouterr().out
    assert emitted_metric(out, "RescueFailures") == [1.0]
    assert emitted_metric(out, "ReconciliationMisses") == [1.0]
    fire.queue = DispatchQueue(fire.settings.DISPATCH_QUEUE_URL)
    fire._publisher = None
    fire.driver.run_for(10)
    assert fire.receiver.accepted(f"{lost.schedule_id}:b1") == 1
    assert fire.read(lost).status == PostStatus.PUBLISHED
    assert fire.read(wedged).lease_token == "dead-worker"  # the next run tries it again
