"""The worker handler's batch contract (Powertools BatchProcessor, partial batch responses)
and the backoff's bounds."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from local.emulation.lambda_runtime import LambdaContext
from scheduled_posts.data.post_store import PostStore
from scheduled_posts.lifecycle.backoff import backoff_bound, full_jitter
from scheduled_posts.models.messages import DispatchMessage
from tests.integration.dispatch.conftest import FirePath


def _message(schedule_id: str, publish_at: Any) -> DispatchMessage:
    return DispatchMessage(schedule_id=schedule_id, version=1, publish_at=publish_at)


def test_worker_empty_records_returns_no_failures(fire: FirePath) -> None:
    handler = fire.driver.worker
    response = handler({"Records": []}, LambdaContext("worker", 30, clock=fire.clock.seconds))
    assert response == {"batchItemFailures": []}


def test_worker_one_bad_record_fails_alone(fire: FirePath) -> None:
    fire.channel("c1")
    post = fire.post(fire.clock.now(), ["c1"])
    fire.queue.send(_message(post.schedule_id, post.publish_at), 0)
    fire.aws.sqs.send_message(QueueUrl=fire.settings.DISPATCH_QUEUE_URL, MessageBody="not json")
    messages = fire.driver.receive(10)
    assert len(messages) == 2
    report = fire.driver.invoke(messages)
    bad = next(m["MessageId"] for m in messages if m["Body"] == "not json")
    assert report.failed_ids == [bad]
    assert fire.receiver.accepted(f"{post.schedule_id}:c1") == 1


def test_worker_every_record_failing_reports_every_record(fire: FirePath) -> None:
    class Down(PostStore):
        def get_post(self, schedule_id: str) -> Any:
            raise RuntimeError("DynamoDB unavailable")

    fire.store = Down(fire.settings.POSTS_TABLE_NAME)
    now = fire.clock.now()
    for sid in ("a", "b"):
        fire.queue.send(_message(sid, now), 0)
    messages = fire.driver.receive(10)
    report = fire.driver.invoke(messages)
    assert report.error is None  # no invocation error: a partial response naming every record
    assert sorted(report.failed_ids) == sorted(m["MessageId"] for m in messages)


def test_worker_stale_version_dropped_not_failed(fire: FirePath) -> None:
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(seconds=1), ["c1"])
    stale = DispatchMessage(schedule_id=post.schedule_id, version=7, publish_at=post.publish_at)
    fire.queue.send(stale, 1)
    fire.clock.advance(1)
    report = fire.driver.poll()
    assert report is not None and report.failed_ids == []
    assert fire.receiver.count() == 0
    assert report.bodies[0]["version"] == 7


@pytest.mark.parametrize(
    ("attempt", "bound"), [(1, 30.0), (2, 60.0), (3, 120.0), (5, 480.0), (6, 900.0), (60, 900.0)]
)
def test_backoff_bound_doubles_then_caps(attempt: int, bound: float) -> None:
    assert backoff_bound(attempt, base_seconds=30, cap_seconds=900) == bound


def test_backoff_full_jitter_draws_between_zero_and_bound() -> None:
    calls: list[tuple[float, float]] = []

    def uniform(low: float, high: float) -> float:
        calls.append((low, high))
        return high * 0.25

    assert full_jitter(3, base_seconds=30, cap_seconds=900, uniform=uniform) == 30.0
    assert calls == [(0.0, 120.0)]
