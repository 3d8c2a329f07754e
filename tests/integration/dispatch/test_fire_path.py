"""The fire path end to end (sweeper -> SQS delay queue -> worker -> receiver) on the simulated
clock: exactly one accepted delivery per (post, channel), never early."""

from __future__ import annotations

from datetime import timedelta

from scheduled_posts.models.post import DeliveryStatus, PostStatus
from tests.integration.dispatch.conftest import FirePath


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
