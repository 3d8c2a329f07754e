"""A recurring schedule's template may be a thread with a first comment: every materialized
occurrence carries its parts and comment, and a bad template part is a 422 naming it
(decision "Threads and first comments")."""

from __future__ import annotations

from tests.integration.recurring.conftest import World
from tests.integration.recurring.test_api_series_length_rules import mastodon_channel
from tests.support.fixtures import AwsResources

PARTS = [
    {"content": "2/3 the middle", "media_ids": []},
    {"content": "3/3 the end", "media_ids": []},
]
COMMENT = {"content": "the link", "delay_seconds": 60}


def test_series_thread_with_a_comment_materializes_occurrences_carrying_them(world: World) -> None:
    created = world.create(content="1/3 the start", parts=PARTS, first_comment=COMMENT)
    assert (created["parts"], created["first_comment"]) == (PARTS, COMMENT)
    posts = world.posts(created["series_id"])
    assert posts
    assert all(p["parts"] == PARTS and p["first_comment"] == COMMENT for p in posts)


def test_series_template_part_over_a_channel_limit_is_422_naming_it(
    world: World, aws: AwsResources
) -> None:
    channel_id = mastodon_channel(aws)
    parts = [{"content": "fine"}, {"content": "x" * 600}]
    body = world.series_body(channel_ids=[channel_id], parts=parts)
    answer = world.alice.post("/v1/recurring-schedules", body)
    assert answer.status == 422, answer.json
    [error] = answer.json["errors"]
    assert (error["loc"], error["type"]) == (["body", "parts", 1, "content"], "too_long")
    assert "part 3 of 3" in error["msg"]
    assert world.alice.get("/v1/recurring-schedules").json["items"] == []
