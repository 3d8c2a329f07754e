"""Media for a channel of a platform that cannot publish them (``PlatformSpec.publishes_media``
false: here ``textonly``, a registered copy of Mastodon's spec without media, since every real
network publishes media now) are refused (422 naming the channel, ``media_ids`` and the rule)
on post create and edit, and on a recurring schedule's create and edit; webhooks, Mastodon and
Bluesky take media (decisions "Media refused for network channels until they can be
published", "Publishing media to Bluesky and webhooks")."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.models.network import ChannelAccount
from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.registry import registered, spec_of
from tests.support.api import ApiClient
from tests.support.fixtures import AwsResources
from tests.support.media import ready_media

PUBLISH_AT = "2026-11-29T13:00:00Z"


@pytest.fixture(autouse=True)
def textonly() -> Iterator[str]:
    """A network platform whose adapter cannot publish media."""
    with registered(replace(spec_of("mastodon"), name="textonly", publishes_media=False)):
        yield "textonly"


@pytest.fixture
def m1(aws: AwsResources, alice: ApiClient) -> str:
    """A ready upload of alice's: a post's media_ids name ready uploads."""
    return ready_media(aws.settings)


def network_channel(aws: AwsResources, platform: str, owner: str = "alice") -> str:
    """Store a checked network channel of ``owner`` as the API would (no network needed)."""
    channel = Channel(
        channel_id=f"ch-{platform}",
        owner=owner,
        platform=platform,
        name=f"my {platform}",
        url="https://network.example",
        signing_secret="unused",
        created_at=datetime(2026, 11, 29, tzinfo=UTC),
        account=ChannelAccount(id="101", acct="alice"),
    )
    ChannelRepository(posts_table_name=aws.settings.POSTS_TABLE_NAME).put_new(
        channel, max_channels=50
    )
    return channel.channel_id


def assert_media_refused(answer: Any, channel_id: str, platform: str) -> None:
    assert answer.status == 422, answer.json
    [error] = answer.json["errors"]
    assert error["loc"] == ["body", "media_ids"]
    assert error["type"] == "media_unsupported"
    assert f"my {platform}" in error["msg"] and channel_id in error["msg"]
    assert "cannot publish media" in error["msg"]


@pytest.mark.parametrize("platform", ["textonly"])
def test_post_with_media_for_a_network_channel_is_422_and_nothing_is_stored(
    m1: str, alice: ApiClient, aws: AwsResources, platform: str
) -> None:
    channel_id = network_channel(aws, platform)
    webhook = alice.create_channel()
    body = {
        "content": "look",
        "media_ids": [m1],
        "publish_at": PUBLISH_AT,
        "channel_ids": [webhook, channel_id],
    }
    assert_media_refused(alice.post("/v1/scheduled-posts", body), channel_id, platform)
    assert alice.get("/v1/scheduled-posts").json["items"] == []


def test_post_with_media_for_a_webhook_only_is_created(m1: str, alice: ApiClient) -> None:
    webhook = alice.create_channel()
    body = {"content": "look", "media_ids": [m1], "publish_at": PUBLISH_AT}
    answer = alice.post("/v1/scheduled-posts", {**body, "channel_ids": [webhook]})
    assert (answer.status, answer.json["media_ids"]) == (201, [m1]), answer.json


def test_post_without_media_for_a_network_channel_is_created(
    alice: ApiClient, aws: AwsResources
) -> None:
    channel_id = network_channel(aws, "textonly")
    assert alice.schedule(PUBLISH_AT, [channel_id], "text only")["media_ids"] == []


def test_edit_adding_media_to_a_network_post_is_422_and_keeps_the_post(
    m1: str, alice: ApiClient, aws: AwsResources
) -> None:
    channel_id = network_channel(aws, "textonly")
    post = alice.schedule(PUBLISH_AT, [channel_id], "short")
    path = f"/v1/scheduled-posts/{post['schedule_id']}"
    assert_media_refused(alice.patch(path, {"media_ids": [m1]}), channel_id, "textonly")
    got = alice.get(path).json
    assert (got["media_ids"], got["version"]) == ([], 1)


def test_edit_adding_a_network_channel_to_a_post_with_media_is_422(
    m1: str, alice: ApiClient, aws: AwsResources
) -> None:
    channel_id = network_channel(aws, "textonly")
    webhook = alice.create_channel()
    created = alice.post(
        "/v1/scheduled-posts",
        {"content": "x", "media_ids": [m1], "publish_at": PUBLISH_AT, "channel_ids": [webhook]},
    )
    path = f"/v1/scheduled-posts/{created.json['schedule_id']}"
    answer = alice.patch(path, {"channel_ids": [webhook, channel_id]})
    assert_media_refused(answer, channel_id, "textonly")
    assert alice.get(path).json["channel_ids"] == [webhook]


def test_edit_removing_the_media_of_a_network_post_is_accepted(
    alice: ApiClient, aws: AwsResources
) -> None:
    channel_id = network_channel(aws, "textonly")
    post = alice.schedule(PUBLISH_AT, [channel_id], "short")
    answer = alice.patch(f"/v1/scheduled-posts/{post['schedule_id']}", {"media_ids": []})
    assert answer.status == 200, answer.json


SERIES = {"content": "weekly", "timezone": "UTC", "cron": "0 9 * * *"}


@pytest.mark.parametrize("platform", ["textonly"])
def test_series_with_media_for_a_network_channel_is_422(
    m1: str, alice: ApiClient, aws: AwsResources, platform: str
) -> None:
    channel_id = network_channel(aws, platform)
    body = {**SERIES, "media_ids": [m1], "channel_ids": [channel_id]}
    assert_media_refused(alice.post("/v1/recurring-schedules", body), channel_id, platform)
    assert alice.get("/v1/recurring-schedules").json["items"] == []


def test_series_edit_adding_media_for_a_network_channel_is_422_and_keeps_it(
    m1: str, alice: ApiClient, aws: AwsResources
) -> None:
    channel_id = network_channel(aws, "textonly")
    created = alice.post("/v1/recurring-schedules", {**SERIES, "channel_ids": [channel_id]})
    assert created.status == 201, created.json
    path = f"/v1/recurring-schedules/{created.json['series_id']}"
    assert_media_refused(alice.patch(path, {"media_ids": [m1]}), channel_id, "textonly")
    got = alice.get(path).json
    assert (got["media_ids"], got["version"]) == ([], 1)


def test_series_edit_adding_a_network_channel_to_media_is_422(
    m1: str, alice: ApiClient, aws: AwsResources
) -> None:
    channel_id = network_channel(aws, "textonly")
    webhook = alice.create_channel()
    body = {**SERIES, "media_ids": [m1], "channel_ids": [webhook]}
    created = alice.post("/v1/recurring-schedules", body)
    assert created.status == 201, created.json
    path = f"/v1/recurring-schedules/{created.json['series_id']}"
    answer = alice.patch(path, {"channel_ids": [webhook, channel_id]})
    assert_media_refused(answer, channel_id, "textonly")


def test_edit_of_channel_ids_alone_checks_the_kept_media_against_the_new_channels_rules(
    alice: ApiClient, aws: AwsResources
) -> None:
    # Given a webhook post with 5 images (Bluesky takes at most 4 per post)
    images = [ready_media(aws.settings, data=f"png{i}".encode()) for i in range(5)]
    webhook = alice.create_channel()
    created = alice.post(
        "/v1/scheduled-posts",
        {"content": "x", "media_ids": images, "publish_at": PUBLISH_AT, "channel_ids": [webhook]},
    )
    assert created.status == 201, created.json
    path = f"/v1/scheduled-posts/{created.json['schedule_id']}"
    bluesky = network_channel(aws, "bluesky")

    # When a PATCH adds the Bluesky channel and leaves media_ids alone
    answer = alice.patch(path, {"channel_ids": [webhook, bluesky]})

    # Then it is refused at media_ids, naming the channel and the rule, and nothing changes
    assert answer.status == 422, answer.json
    [error] = answer.json["errors"]
    assert error["loc"] == ["body", "media_ids"] and error["type"].startswith("media_")
    assert bluesky in error["msg"]
    got = alice.get(path).json
    assert (got["channel_ids"], got["version"]) == ([webhook], 1)
