"""The fault suite's checks of recurring schedules can fail (issue 13): one small world with its
series played to the end, then a duplicate occurrence, a request under content an edit had
replaced, and an early request are each planted and must be reported."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import time_machine
from moto import mock_aws

from scheduled_posts.api_app import set_dependencies
from scheduled_posts.clock import format_instant
from scheduled_posts.data.aws import reset_clients
from scheduled_posts.models.post import Post, PostStatus
from tests.support.clock import SimClock
from tests.support.faults import FaultRates
from tests.support.fixtures import START
from tests.support.scenario import World, seeded_uuid4
from tests.support.series_world import PlannedSeries

SEED = 7


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    """A fault-free world of 8 posts and its series, played to the end and checked clean."""
    with seeded_uuid4(SEED), time_machine.travel(START, tick=False) as traveller, mock_aws():
        played = World(SEED, 8, SimClock(traveller), rates=FaultRates.none(), concurrent_rate=0)
        try:
            played.build()
            played.play()
            played.plan.enabled = False
            assert _problems(played) == []
            yield played
        finally:
            set_dependencies(None)
            reset_clients()


def _problems(world: World) -> list[str]:
    return world.series.check(Counter(), set(), {})


def _published(world: World) -> tuple[PlannedSeries, Post]:
    """A series with an edit of its content that answered 200, and one of its occurrences
    published after it (unclaimed when the edit answered)."""
    for planned in world.series.series:
        versions = planned.versions
        if len(versions) < 2 or versions[0].content == versions[-1].content:
            continue
        for post in world.series._occurrence_posts(planned.series_id or ""):
            if post.status == PostStatus.PUBLISHED and all(
                post.schedule_id not in v.claimed for v in planned.versions
            ):
                return planned, post
    raise AssertionError("the seed has no occurrence published after an edit")


def _request(world: World, post: Post, content: str, key: str) -> None:
    channel = post.channel_ids[0]
    payload: dict[str, Any] = {
        "schedule_id": post.schedule_id,
        "channel_id": channel,
        "content": content,
        "publish_at": format_instant(post.publish_at),
    }
    world.receiver.handle(
        world.channel_urls[channel],
        "93.184.216.34",
        {"Idempotency-Key": key},
        json.dumps(payload).encode(),
    )


def test_series_check_reports_a_second_post_for_one_occurrence(world: World) -> None:
    # Given a published occurrence
    planned, post = _published(world)
    # When a second post for the same series and instant exists, and was delivered
    twin = post.model_copy(update={"schedule_id": f"{post.schedule_id[:-4]}beef"})
    table = world.resource.Table(world.settings.POSTS_TABLE_NAME)
    item = twin.to_item()
    table.put_item(Item=item)
    try:
        _request(world, twin, planned.versions[-1].content, f"{twin.schedule_id}:x")
        problems = _problems(world)
    finally:
        table.delete_item(Key={"pk": item["pk"], "sk": item["sk"]})
    # Then the table and the receiver both show the duplicate
    assert any(f"2 posts for {format_instant(post.publish_at)}" in p for p in problems)
    assert any("accepted under 2 Idempotency-Keys" in p for p in problems), problems


def test_series_check_reports_old_content_after_an_edit_answered(world: World) -> None:
    # Given an occurrence not yet claimed when its series' edit answered 200
    planned, post = _published(world)
    # When a request for it carries the content before the edit
    _request(world, post, planned.versions[0].content, f"{post.schedule_id}:stale")
    # Then it is reported as delivered under an old version
    assert any(post.schedule_id in p and "after version" in p for p in _problems(world)), _problems(
        world
    )


def test_series_check_reports_a_request_before_the_occurrence(world: World) -> None:
    # Given a published occurrence
    planned, post = _published(world)
    back = world.clock.now()
    # When a request for it reaches the receiver a minute before its instant
    world.clock.travel_to(post.publish_at - timedelta(seconds=60))
    try:
        _request(world, post, planned.versions[-1].content, f"{post.schedule_id}:early")
    finally:
        world.clock.travel_to(back)
    # Then it is reported early
    assert any(
        p.startswith(f"occurrence {post.schedule_id} requested at") for p in _problems(world)
    )
