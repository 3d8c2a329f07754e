"""DLQ redrive: poison messages move back once fixed; only posts that may still publish reopen."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from scheduled_posts.data.post_store import PostStore
from scheduled_posts.data.queue import DispatchQueue
from scheduled_posts.logic.recovery import (
    DEAD_LETTERED_ERROR_PREFIX,
    RecoveryDeps,
)
from scheduled_posts.logic.redrive import Redriver
from scheduled_posts.models.messages import DispatchMessage
from scheduled_posts.models.post import Delivery, DeliveryStatus, Post, PostStatus
from scheduled_posts.redrive_cli import main as redrive_main
from tests.integration.dispatch.conftest import FirePath
from tests.support.fixtures import TEST_VISIBILITY_SECONDS


class PoisonStore:
    """A post store whose reads of ``poisoned`` fail while ``broken`` (a bug, then its fix)."""

    def __init__(self, inner: PostStore, poisoned: str) -> None:
        self.inner = inner
        self.poisoned = poisoned
        self.broken = True

    def get_post(self, schedule_id: str) -> Post | None:
        if self.broken and schedule_id == self.poisoned:
            raise RuntimeError("poison: this post cannot be read (test)")
        return self.inner.get_post(schedule_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _redriver(fire: FirePath, *, dry_run: bool = False) -> Redriver:
    deps = RecoveryDeps(
        fire.settings, clock=fire.clock, queue=DispatchQueue(fire.settings.DISPATCH_QUEUE_URL)
    )
    return Redriver(deps, dry_run=dry_run)


def _message_for(post: Post) -> DispatchMessage:
    return DispatchMessage(
        schedule_id=post.schedule_id, version=post.version, publish_at=post.publish_at
    )


def _dead_letter(fire: FirePath, message: DispatchMessage) -> None:
    fire.aws.sqs.send_message(
        QueueUrl=fire.settings.DISPATCH_DLQ_URL, MessageBody=message.model_dump_json()
    )


def test_redrive_poison_message_moved_back_and_post_completes_once(make_fire) -> None:  # type: ignore[no-untyped-def]
    # Given a post whose message dead-letters because reading the post fails (a bug)
    fire: FirePath = make_fire(MAX_RECEIVE_COUNT=2)
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(seconds=30), ["c1"])
    poison = PoisonStore(fire.store, post.schedule_id)
    fire.store = poison
    fire.driver.run_for(30 + 3 * TEST_VISIBILITY_SECONDS + 60, step=30)
    assert [b["schedule_id"] for b in fire.driver.dlq_bodies()] == [post.schedule_id]
    assert fire.receiver.accepted(f"{post.schedule_id}:c1") == 0
    # When the bug is fixed and redrive runs
    poison.broken = False
    lines = _redriver(fire).run()
    fire.driver.run_for(10)
    # Then it moved the message back, said why it was there, and the post completed once
    assert [(line.action, line.schedule_id) for line in lines] == [("moved", post.schedule_id)]
    assert "kept failing" in lines[0].why_there
    assert fire.receiver.accepted(f"{post.schedule_id}:c1") == 1
    assert fire.read(post).status == PostStatus.PUBLISHED
    assert fire.driver.dlq_bodies() == []


def _failed_by_dead_letter(fire: FirePath) -> Post:
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(seconds=5), ["c1"])
    failed = Delivery(
        channel_id="c1",
        status=DeliveryStatus.FAILED,
        attempts=1,
        last_error=f"{DEAD_LETTERED_ERROR_PREFIX} after repeated failures: RuntimeError()",
    )
    store = PostStore(fire.settings.POSTS_TABLE_NAME)
    fire.clock.advance(10)
    assert store.fail_post(
        post,
        last_error="x",
        deliveries={"c1": failed},
        now=fire.clock.now(),
        expires_at=2_000_000_000,
    )
    _dead_letter(
        fire, DispatchMessage(schedule_id=post.schedule_id, version=1, publish_at=post.publish_at)
    )
    return post


def test_redrive_post_failed_by_dead_letter_reopened_and_completes_once(fire: FirePath) -> None:
    post = _failed_by_dead_letter(fire)
    lines = _redriver(fire).run()
    fire.driver.run_for(10)
    assert [line.action for line in lines] == ["reopened"]
    assert fire.receiver.accepted(f"{post.schedule_id}:c1") == 1
    got = fire.read(post)
    assert got.status == PostStatus.PUBLISHED
    assert got.expires_at is not None


def test_redrive_terminal_published_post_dropped_not_resent(fire: FirePath) -> None:
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(seconds=5), ["c1"])
    fire.driver.run_for(10)
    _dead_letter(
        fire, DispatchMessage(schedule_id=post.schedule_id, version=1, publish_at=post.publish_at)
    )
    lines = _redriver(fire).run()
    fire.driver.run_for(10)
    assert [line.action for line in lines] == ["dropped"]
    assert len(fire.receiver.requests_for(f"{post.schedule_id}:c1")) == 1
    assert fire.driver.dlq_bodies() == []


def test_redrive_dry_run_changes_nothing(fire: FirePath) -> None:
    post = _failed_by_dead_letter(fire)
    lines = _redriver(fire, dry_run=True).run()
    assert [line.action for line in lines] == ["would-reopened"]
    assert fire.read(post).status == PostStatus.FAILED


def test_redrive_after_dry_run_sees_the_messages_at_once(fire: FirePath) -> None:
    _failed_by_dead_letter(fire)
    _redriver(fire, dry_run=True).run()
    fire.clock.advance(1)  # moto: visible only once its clock passes the instant (frozen here)
    assert [line.action for line in _redriver(fire).run()] == ["reopened"]


def test_redrive_unparseable_message_left_in_dlq(fire: FirePath) -> None:
    fire.aws.sqs.send_message(QueueUrl=fire.settings.DISPATCH_DLQ_URL, MessageBody="garbage")
    lines = _redriver(fire).run()
    assert [line.action for line in lines] == ["left"]
    fire.clock.advance(1)  # moto: visible only once its clock passes the instant (frozen here)
    assert len(_redriver(fire).run()) == 1  # still there, visible again


def test_redrive_cli_prints_each_message_and_summary(
    fire: FirePath, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    post = _failed_by_dead_letter(fire)
    for name, value in fire.settings.model_dump().items():
        monkeypatch.setenv(name, str(value))
    assert redrive_main([]) == 0
    out = capsys.readouterr().out
    assert post.schedule_id in out
    assert "in DLQ because:" in out
    assert "1 reopened" in out


def test_redrive_cli_without_queue_urls_exits_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPATCH_QUEUE_URL", raising=False)
    monkeypatch.delenv("DISPATCH_DLQ_URL", raising=False)
    assert redrive_main(["--dry-run"]) == 2
