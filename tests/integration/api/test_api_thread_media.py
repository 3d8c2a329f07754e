"""A PATCH of a thread's ``parts`` alone checks the parts' media exactly as a create does
(``logic/network_rules.py``, ``patched_channel_errors``): another user's upload, one not ready
and more images than Bluesky takes in one part are each a 422 naming the part, and the post is
left as it was (decision "Threads and first comments"); a PATCH removing the first comment
is checked without it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from scheduled_posts.data.media import MediaRepository
from scheduled_posts.models.media import Media, MediaCreate
from tests.integration.api.test_api_network_media import network_channel
from tests.support.api import ApiClient
from tests.support.fixtures import AwsResources
from tests.support.media import ready_media

PUBLISH_AT = "2026-11-29T13:00:00Z"


def pending_media(aws: AwsResources, owner: str = "alice") -> str:
    """An upload of ``owner`` created but not yet probed (``pending``)."""
    media = Media.new(owner, MediaCreate(content_type="image/png", size=3), datetime.now(UTC))
    MediaRepository(posts_table_name=aws.settings.POSTS_TABLE_NAME).put_new(media)
    return media.media_id


@pytest.fixture
def thread(alice: ApiClient, aws: AwsResources) -> tuple[str, str]:
    """A 2-part thread of alice to a Bluesky channel: ``(path, channel_id)``."""
    sky = network_channel(aws, "bluesky")
    body = {
        "content": "one",
        "parts": [{"content": "two"}],
        "publish_at": PUBLISH_AT,
        "channel_ids": [sky],
    }
    created = alice.post("/v1/scheduled-posts", body)
    assert created.status == 201, created.json
    return f"/v1/scheduled-posts/{created.json['schedule_id']}", sky


def assert_unchanged(alice: ApiClient, path: str) -> None:
    got = alice.get(path).json
    assert (got["version"], got["parts"]) == (1, [{"content": "two", "media_ids": []}])


@pytest.mark.parametrize("whose", ["bob's", "pending"])
def test_patch_parts_naming_media_not_a_ready_upload_of_yours_is_422_naming_the_part(
    alice: ApiClient, aws: AwsResources, thread: tuple[str, str], whose: str
) -> None:
    path, _ = thread
    media_id = ready_media(aws.settings, "bob") if whose == "bob's" else pending_media(aws)
    answer = alice.patch(path, {"parts": [{"content": "two", "media_ids": [media_id]}]})
    assert answer.status == 422, answer.json
    [error] = answer.json["errors"]
    assert (error["loc"], error["type"]) == (["body", "parts", 0, "media_ids"], "media_not_ready")
    assert "part 2 of 2" in error["msg"] and media_id in error["msg"]
    assert_unchanged(alice, path)


def test_patch_parts_with_more_images_than_bluesky_takes_is_422_naming_the_part(
    alice: ApiClient, aws: AwsResources, thread: tuple[str, str]
) -> None:
    path, sky = thread
    five = [ready_media(aws.settings, data=bytes([i])) for i in range(5)]
    answer = alice.patch(path, {"parts": [{"content": "two", "media_ids": five}]})
    assert answer.status == 422, answer.json
    [error] = answer.json["errors"]
    assert (error["loc"], error["type"]) == (["body", "parts", 0, "media_ids"], "media_count")
    assert "part 2 of 2" in error["msg"] and sky in error["msg"]
    assert_unchanged(alice, path)


def test_patch_parts_with_ready_uploads_of_yours_within_the_rules_is_applied(
    alice: ApiClient, aws: AwsResources, thread: tuple[str, str]
) -> None:
    path, _ = thread
    media_id = ready_media(aws.settings)
    answer = alice.patch(path, {"parts": [{"content": "two", "media_ids": [media_id]}]})
    assert answer.status == 200, answer.json
    assert answer.json["parts"] == [{"content": "two", "media_ids": [media_id]}]


def test_patch_removing_the_first_comment_checks_the_new_channels_without_it(
    alice: ApiClient, aws: AwsResources
) -> None:
    """A comment too long for a channel the PATCH adds, removed by the same PATCH, refuses
    nothing: the checks read the patch's ``first_comment: null``, not the stored comment."""
    webhook, toots = alice.create_channel(), network_channel(aws, "mastodon")
    body = {
        "content": "one",
        "first_comment": {"content": "c" * 600},
        "publish_at": PUBLISH_AT,
        "channel_ids": [webhook],
    }
    created = alice.post("/v1/scheduled-posts", body)
    assert created.status == 201, created.json
    path = f"/v1/scheduled-posts/{created.json['schedule_id']}"
    answer = alice.patch(path, {"channel_ids": [webhook, toots], "first_comment": None})
    assert answer.status == 200, answer.json
    assert answer.json["first_comment"] is None
    refused = alice.patch(path, {"first_comment": {"content": "c" * 600}})
    assert refused.status == 422, refused.json
    assert refused.json["errors"][0]["loc"] == ["body", "first_comment", "content"]
