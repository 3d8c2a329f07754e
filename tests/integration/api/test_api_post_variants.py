"""A text per channel through the API (decision "A text per channel: variants"): a long
Mastodon text with a short Bluesky variant is accepted and each delivery shows what its channel
publishes; length rules apply to each channel's effective text; a variant for a channel the
post does not target, too many langs or tags, a bad visibility and options of another network
are 422s naming the variant's field; PATCH re-validates and refuses to drop a channel that has a
variant; a recurring schedule's occurrences carry its variants."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.models.network import ChannelAccount
from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.text_length import bluesky_limits, mastodon_limits
from tests.support.api import ApiClient
from tests.support.fixtures import AwsResources

PUBLISH_AT = "2026-11-29T13:00:00Z"
LONG = " ".join(["word"] * 84) + "!"  # 420 graphemes: over Bluesky's 300, within Mastodon's 500
SHORT = "x" * 280


def network_channel(aws: AwsResources, platform: str) -> str:
    """Store a checked network channel of alice's as the API would (no network needed)."""
    limits = bluesky_limits() if platform == "bluesky" else mastodon_limits(500, 23)
    channel = Channel(
        channel_id=f"ch-{platform}",
        owner="alice",
        platform=platform,
        name=f"my {platform}",
        url="https://network.example",
        signing_secret="unused",
        created_at=datetime(2026, 11, 29, tzinfo=UTC),
        account=ChannelAccount(id="101", acct="alice"),
        limits=limits,
    )
    ChannelRepository(posts_table_name=aws.settings.POSTS_TABLE_NAME).put_new(
        channel, max_channels=50
    )
    return channel.channel_id


@pytest.fixture
def masto(aws: AwsResources) -> str:
    return network_channel(aws, "mastodon")


@pytest.fixture
def sky(aws: AwsResources) -> str:
    return network_channel(aws, "bluesky")


def create(alice: ApiClient, channel_ids: list[str], **fields: Any) -> Any:
    body = {"content": LONG, "publish_at": PUBLISH_AT, "channel_ids": channel_ids, **fields}
    return alice.post("/v1/scheduled-posts", body)


def only_error(answer: Any) -> dict[str, Any]:
    assert answer.status == 422, answer.json
    [error] = answer.json["errors"]
    return dict(error)


def test_long_mastodon_text_with_short_bluesky_variant_is_201_with_each_channel_content(
    alice: ApiClient, masto: str, sky: str
) -> None:
    answer = create(
        alice,
        [masto, sky],
        language="en",
        variants={
            sky: {"content": SHORT, "tags": ["release"], "langs": ["en", "de"]},
            masto: {"visibility": "unlisted", "spoiler_text": "launch", "sensitive": True},
        },
    )
    assert answer.status == 201, answer.json
    deliveries = {d["channel_id"]: d for d in answer.json["deliveries"]}
    assert deliveries[masto]["content"] == LONG
    assert deliveries[masto]["options"]["visibility"] == "unlisted"
    assert deliveries[masto]["options"]["spoiler_text"] == "launch"
    assert deliveries[sky]["content"] == SHORT
    assert deliveries[sky]["language"] == "en"
    assert deliveries[sky]["options"]["tags"] == ["release"]
    assert answer.json["variants"][sky]["content"] == SHORT
    got = alice.get(f"/v1/scheduled-posts/{answer.json['schedule_id']}")
    assert got.json == answer.json


def test_long_text_without_a_bluesky_variant_is_422_naming_the_content(
    alice: ApiClient, masto: str, sky: str
) -> None:
    error = only_error(create(alice, [masto, sky]))
    assert error["loc"] == ["body", "content"]
    assert sky in error["msg"] and "300 graphemes" in error["msg"]


def test_bluesky_variant_over_the_limit_is_422_naming_the_variant(
    alice: ApiClient, masto: str, sky: str
) -> None:
    error = only_error(create(alice, [masto, sky], variants={sky: {"content": "y" * 301}}))
    assert error["loc"] == ["body", "variants", sky, "content"]
    assert error["type"] == "too_long"
    assert "the text has 301, the limit is 300" in error["msg"]


def test_spoiler_text_counts_toward_the_mastodon_limit(alice: ApiClient, masto: str) -> None:
    spoiler = "z" * 81  # 420 + 81 = 501 > 500
    error = only_error(create(alice, [masto], variants={masto: {"spoiler_text": spoiler}}))
    assert error["loc"] == ["body", "content"]
    assert "spoiler_text included" in error["msg"] and "501" in error["msg"]


def test_variant_for_a_channel_the_post_does_not_target_is_422_and_nothing_is_stored(
    alice: ApiClient, masto: str, sky: str
) -> None:
    answer = create(alice, [masto], variants={sky: {"content": SHORT}})
    error = only_error(answer)
    assert error["loc"] == ["body", "variants", sky]
    assert error["type"] == "variant_channel_not_targeted"
    assert alice.get("/v1/scheduled-posts").json["items"] == []


@pytest.mark.parametrize(
    ("variant", "field", "words"),
    [
        ({"langs": ["en", "de", "fr", "it"]}, "langs", "at most 3 items"),
        ({"tags": [f"t{i}" for i in range(9)]}, "tags", "at most 8 items"),
        ({"visibility": "everyone"}, "visibility", "'public', 'unlisted', 'private' or 'direct'"),
    ],
)
def test_option_over_its_limit_is_422_naming_the_field_and_limit(
    alice: ApiClient, masto: str, sky: str, variant: dict[str, Any], field: str, words: str
) -> None:
    target = masto if field == "visibility" else sky
    error = only_error(create(alice, [masto, sky], variants={target: variant}))
    assert error["loc"][:4] == ["body", "variants", target, field]
    assert words in error["msg"]


def test_options_of_another_network_are_422_naming_the_field(
    alice: ApiClient, masto: str, sky: str
) -> None:
    webhook = alice.create_channel()
    answer = create(
        alice,
        [masto, sky, webhook],
        variants={sky: {"content": SHORT, "visibility": "private"}, webhook: {"tags": ["a"]}},
    )
    assert answer.status == 422, answer.json
    assert [(e["loc"], e["type"]) for e in answer.json["errors"]] == [
        (["body", "variants", sky, "visibility"], "option_unsupported"),
        (["body", "variants", webhook, "tags"], "option_unsupported"),
    ]


def test_webhook_variant_text_is_accepted(alice: ApiClient, sky: str) -> None:
    webhook = alice.create_channel()
    answer = create(alice, [webhook, sky], content=SHORT, variants={webhook: {"content": LONG}})
    assert answer.status == 201, answer.json
    deliveries = {d["channel_id"]: d["content"] for d in answer.json["deliveries"]}
    assert deliveries == {webhook: LONG, sky: SHORT}


def test_patch_dropping_a_channel_with_a_variant_is_422_until_the_variant_goes(
    alice: ApiClient, masto: str, sky: str
) -> None:
    post = create(alice, [masto, sky], variants={sky: {"content": SHORT}}).json
    path = f"/v1/scheduled-posts/{post['schedule_id']}"
    error = only_error(alice.patch(path, {"channel_ids": [masto]}))
    assert error["loc"] == ["body", "variants", sky]
    assert alice.get(path).json["version"] == 1
    answer = alice.patch(path, {"channel_ids": [masto], "variants": {}})
    assert answer.status == 200, answer.json
    assert answer.json["variants"] == {}
    assert answer.json["version"] == 2
    assert alice.get(path).json["variants"] == {}  # gone from the stored item too


def test_patch_of_the_variant_is_validated_on_the_effective_text(
    alice: ApiClient, masto: str, sky: str
) -> None:
    post = create(alice, [masto, sky], variants={sky: {"content": SHORT}}).json
    path = f"/v1/scheduled-posts/{post['schedule_id']}"
    error = only_error(alice.patch(path, {"variants": {sky: {"content": "q" * 301}}}))
    assert error["loc"] == ["body", "variants", sky, "content"]
    error = only_error(alice.patch(path, {"variants": {}}))  # back to the 420-grapheme text
    assert error["loc"] == ["body", "content"]
    answer = alice.patch(path, {"content": "new long text " * 30})
    assert answer.status == 200, answer.json
    deliveries = {d["channel_id"]: d["content"] for d in answer.json["deliveries"]}
    assert deliveries == {masto: "new long text " * 30, sky: SHORT}


def test_series_occurrences_carry_the_template_variants(
    alice: ApiClient, masto: str, sky: str
) -> None:
    answer = alice.post(
        "/v1/recurring-schedules",
        {
            "content": LONG,
            "channel_ids": [masto, sky],
            "variants": {sky: {"content": SHORT, "tags": ["daily"]}},
            "timezone": "UTC",
            "cron": "0 9 * * *",
        },
    )
    assert answer.status == 201, answer.json
    assert answer.json["variants"][sky]["content"] == SHORT
    series_id = answer.json["series_id"]
    posts = alice.get(f"/v1/scheduled-posts?series_id={series_id}").json["items"]
    assert posts
    deliveries = {d["channel_id"]: d for d in posts[0]["deliveries"]}
    assert deliveries[sky]["content"] == SHORT
    assert deliveries[sky]["options"]["tags"] == ["daily"]
    assert deliveries[masto]["content"] == LONG


def test_series_variant_for_an_untargeted_channel_is_422(
    alice: ApiClient, masto: str, sky: str
) -> None:
    answer = alice.post(
        "/v1/recurring-schedules",
        {
            "content": SHORT,
            "channel_ids": [masto],
            "variants": {sky: {"content": SHORT}},
            "timezone": "UTC",
            "cron": "0 9 * * *",
        },
    )
    error = only_error(answer)
    assert error["loc"] == ["body", "variants", sky]


def test_series_patch_of_variants_reaches_its_scheduled_occurrences(
    alice: ApiClient, masto: str, sky: str
) -> None:
    series = alice.post(
        "/v1/recurring-schedules",
        {"content": SHORT, "channel_ids": [masto, sky], "timezone": "UTC", "cron": "0 9 * * *"},
    ).json
    path = f"/v1/recurring-schedules/{series['series_id']}"
    answer = alice.patch(path, {"variants": {masto: {"content": LONG, "visibility": "private"}}})
    assert answer.status == 200, answer.json
    posts = alice.get(f"/v1/scheduled-posts?series_id={series['series_id']}").json["items"]
    assert posts
    for post in posts:
        deliveries = {d["channel_id"]: d for d in post["deliveries"]}
        assert deliveries[masto]["content"] == LONG
        assert deliveries[masto]["options"]["visibility"] == "private"
        assert deliveries[sky]["content"] == SHORT
