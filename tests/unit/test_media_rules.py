"""Per-network media rules (platforms/media_rules.py): counts, kinds, mixing, sizes, alt text;
the Mastodon instance's limits read by the credential check; the channel's shown limits."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import SecretStr

from scheduled_posts.models.network import ChannelLimits
from scheduled_posts.platforms.base import PublishedMedia
from scheduled_posts.platforms.http import HttpAnswer
from scheduled_posts.platforms.mastodon import MastodonClient
from scheduled_posts.platforms.media_rules import (
    BLUESKY_MEDIA_RULES,
    MASTODON_MEDIA_RULES,
    WEBHOOK_MEDIA_RULES,
    mastodon_instance_limits,
    media_rule_errors,
)
from scheduled_posts.platforms.registry import channel_limits, media_rules_of, spec_of


def _media(
    n: int = 0, *, kind: str = "image/png", size: int = 1000, alt: str | None = "alt"
) -> PublishedMedia:
    return PublishedMedia(
        media_id=f"m{n}",
        content_type=kind,
        size=size,
        sha256="0" * 64,
        alt_text=alt,
        object_key=f"media/m{n}",
    )


def _rules(errors: list[Any]) -> list[tuple[str, Any, Any]]:
    return [(e.rule, e.value, e.limit) for e in errors]


def test_media_rule_errors_four_images_fit_bluesky() -> None:
    assert media_rule_errors(BLUESKY_MEDIA_RULES, [_media(i) for i in range(4)]) == []


def test_media_rule_errors_fifth_image_for_bluesky_breaks_the_counts() -> None:
    errors = media_rule_errors(BLUESKY_MEDIA_RULES, [_media(i) for i in range(5)])
    assert _rules(errors) == [("count", 5, 4)]
    assert errors[0].message("bsky") == ("channel bsky: attachments in one post: 5, the limit is 4")


def test_media_rule_errors_bluesky_image_over_two_million_bytes_is_refused() -> None:
    ok = _media(1, size=2_000_000)
    big = _media(2, size=2_000_001)
    errors = media_rule_errors(BLUESKY_MEDIA_RULES, [ok, big])
    assert _rules(errors) == [("size", 2_000_001, 2_000_000)]
    assert errors[0].media_id == "m2"


def test_media_rule_errors_bluesky_images_and_a_video_do_not_mix() -> None:
    errors = media_rule_errors(BLUESKY_MEDIA_RULES, [_media(1), _media(2, kind="video/mp4")])
    assert [e.rule for e in errors] == ["mixing"]


def test_media_rule_errors_mastodon_two_videos_are_refused() -> None:
    videos = [_media(i, kind="video/mp4") for i in range(2)]
    assert _rules(media_rule_errors(MASTODON_MEDIA_RULES, videos)) == [("count", 2, 1)]


def test_media_rule_errors_alt_text_over_the_description_limit_is_refused() -> None:
    fits = _media(1, alt="a" * 1500)
    long = _media(2, alt="a" * 1501)
    errors = media_rule_errors(MASTODON_MEDIA_RULES, [fits, long])
    assert _rules(errors) == [("alt_text", 1501, 1500)]


def test_media_rule_errors_kind_the_network_does_not_take_is_refused() -> None:
    rules = MASTODON_MEDIA_RULES.with_limits(
        ChannelLimits(supported_mime_types=("image/jpeg", "image/png"))
    )
    errors = media_rule_errors(rules, [_media(1, kind="image/webp")])
    assert _rules(errors) == [("kind", "image/webp", "image/jpeg or image/png")]


def test_media_rule_errors_webhook_takes_ten_of_any_kind_mixed_not_eleven() -> None:
    mixed = [_media(i, kind="video/mp4" if i % 2 else "image/gif", size=10**9) for i in range(10)]
    assert media_rule_errors(WEBHOOK_MEDIA_RULES, mixed) == []
    assert _rules(media_rule_errors(WEBHOOK_MEDIA_RULES, [*mixed, _media(11)]))[0] == (
        "count",
        11,
        10,
    )


def test_mastodon_instance_limits_read_the_instances_media_configuration() -> None:
    limits = mastodon_instance_limits(
        {
            "statuses": {"max_characters": 1000, "max_media_attachments": 6},
            "media_attachments": {
                "supported_mime_types": ["image/jpeg", "image/png", "audio/mpeg", "video/mp4"],
                "image_size_limit": 10_485_760,
                "video_size_limit": 41_943_040,
                "description_limit": 3000,
            },
        }
    )
    assert (limits.max_characters, limits.max_media_attachments) == (1000, 6)
    assert (limits.image_size_limit, limits.video_size_limit) == (10_485_760, 41_943_040)
    assert limits.description_limit == 3000
    assert limits.supported_mime_types == ("image/jpeg", "image/png", "video/mp4")


def test_mastodon_instance_limits_absent_or_nonsense_take_the_documented_defaults() -> None:
    limits = mastodon_instance_limits(
        {
            "statuses": {"max_media_attachments": "four"},
            "media_attachments": {"image_size_limit": -1},
        }
    )
    assert (limits.max_media_attachments, limits.image_size_limit) == (4, 16_777_216)
    assert (limits.video_size_limit, limits.description_limit) == (103_809_024, 1500)
    assert limits.supported_mime_types is None


class _InstanceHttp:
    """verify_credentials and /api/v2/instance answered from memory (no network)."""

    allowed_origins = ("https://masto.example",)

    def __init__(self, instance: dict[str, Any]) -> None:
        self.instance = instance

    def request(self, method: str, url: str, **_: Any) -> HttpAnswer:
        body = self.instance if url.endswith("/api/v2/instance") else {"id": "1", "acct": "al"}
        return HttpAnswer(status=200, headers={}, body=json.dumps(body).encode())


def test_mastodon_verify_keeps_the_instances_media_limits() -> None:
    http = _InstanceHttp(
        {
            "configuration": {
                "statuses": {"max_media_attachments": 2},
                "media_attachments": {"description_limit": 500},
            }
        }
    )
    found = MastodonClient(http).verify("https://masto.example", SecretStr("t"))  # type: ignore[arg-type]
    assert (found.limits.max_media_attachments, found.limits.description_limit) == (2, 500)
    assert found.limits.image_size_limit == 16_777_216


def test_channel_limits_mastodon_channel_shows_its_instances_media_limits() -> None:
    stored = ChannelLimits(max_characters=500, max_media_attachments=2, image_size_limit=1000)
    shown = channel_limits("mastodon", stored)
    assert shown is not None
    assert (shown.max_characters, shown.max_media_attachments) == (500, 2)
    assert (shown.image_size_limit, shown.video_size_limit) == (1000, 103_809_024)
    rules = media_rules_of("mastodon", stored)
    assert rules is not None
    assert _rules(media_rule_errors(rules, [_media(i) for i in range(3)]))[0] == ("count", 3, 2)


@pytest.mark.parametrize("platform", ["mastodon", "bluesky", "webhook"])
def test_every_builtin_spec_has_media_rules(platform: str) -> None:
    assert spec_of(platform).media_rules is not None


def test_media_rules_of_an_instance_with_six_attachments_takes_six_images() -> None:
    rules = media_rules_of("mastodon", ChannelLimits(max_media_attachments=6))
    assert rules is not None
    assert media_rule_errors(rules, [_media(i) for i in range(6)]) == []
