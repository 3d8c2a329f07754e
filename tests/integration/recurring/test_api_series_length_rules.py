"""A recurring schedule gets the same 422 as a post when its text breaks a channel's length
rule, on create and on a PATCH of content or channels (``logic/network_rules.py``), instead of
failing every occurrence ``too_long`` later."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.models.network import ChannelAccount, ChannelLimits
from scheduled_posts.models.post import Channel
from tests.integration.recurring.conftest import World
from tests.support.fixtures import AwsResources

SERIES = {"timezone": "UTC", "cron": "0 9 * * *"}


def mastodon_channel(aws: AwsResources, max_characters: int = 500) -> str:
    """A checked Mastodon channel of alice whose instance allows ``max_characters``."""
    channel = Channel(
        channel_id="ch-toots",
        owner="alice",
        platform="mastodon",
        name="toots",
        url="https://mastodon.example",
        signing_secret="unused",
        created_at=datetime(2026, 11, 29, tzinfo=UTC),
        account=ChannelAccount(id="101", acct="alice"),
        limits=ChannelLimits(max_characters=max_characters, characters_reserved_per_url=23),
    )
    ChannelRepository(posts_table_name=aws.settings.POSTS_TABLE_NAME).put_new(
        channel, max_channels=50
    )
    return channel.channel_id


def assert_too_long(answer: Any, channel_id: str) -> None:
    assert answer.status == 422, answer.json
    [error] = answer.json["errors"]
    assert (error["loc"], error["type"]) == (["body", "content"], "too_long")
    assert "channel toots" in error["msg"] and channel_id in error["msg"]
    assert "the text has 600, the limit is 500" in error["msg"]


def test_series_create_over_a_channel_length_rule_is_422_and_nothing_is_stored(
    world: World, aws: AwsResources
) -> None:
    channel_id = mastodon_channel(aws)
    body = {**SERIES, "content": "x" * 600, "channel_ids": [channel_id]}
    assert_too_long(world.alice.post("/v1/recurring-schedules", body), channel_id)
    assert world.alice.get("/v1/recurring-schedules").json["items"] == []


def test_series_create_within_the_length_rule_is_created(world: World, aws: AwsResources) -> None:
    channel_id = mastodon_channel(aws)
    created = world.create(content="x" * 500, channel_ids=[channel_id])
    assert created["content"] == "x" * 500


def test_series_patch_of_content_over_the_length_rule_is_422_and_keeps_it(
    world: World, aws: AwsResources
) -> None:
    channel_id = mastodon_channel(aws)
    created = world.create(content="short", channel_ids=[channel_id])
    path = f"/v1/recurring-schedules/{created['series_id']}"
    assert_too_long(world.alice.patch(path, {"content": "x" * 600}), channel_id)
    got = world.alice.get(path).json
    assert (got["content"], got["version"]) == ("short", 1)
    assert {p["content"] for p in world.posts(created["series_id"])} == {"short"}


def test_series_patch_of_channels_to_a_shorter_rule_is_422(world: World, aws: AwsResources) -> None:
    channel_id = mastodon_channel(aws)
    created = world.create(content="x" * 600)  # to the webhook channel: no length rule
    path = f"/v1/recurring-schedules/{created['series_id']}"
    answer = world.alice.patch(path, {"channel_ids": [world.channel, channel_id]})
    assert_too_long(answer, channel_id)
    assert world.alice.get(path).json["channel_ids"] == [world.channel]
