"""A text per channel (decision "A text per channel: variants"): the effective post of each
channel, the variant's value rules (Bluesky's lexicon limits, Mastodon's visibilities), which
options each platform takes, Mastodon's spoiler text in the status length, and storage."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from scheduled_posts.logic.variant_rules import Draft, field_loc, variant_errors
from scheduled_posts.models.api import PostCreate
from scheduled_posts.models.network import ChannelLimits
from scheduled_posts.models.post import Channel, Post, PostStatus
from scheduled_posts.models.variants import NetworkOptions, Variant, effective_for
from scheduled_posts.platforms.registry import check_length

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)


def channel(channel_id: str, platform: str) -> Channel:
    return Channel(
        channel_id=channel_id,
        owner="alice",
        platform=platform,
        name=f"my {platform}",
        url="https://network.example",
        signing_secret="unused",
        created_at=NOW,
    )


def post(**fields: Any) -> Post:
    base: dict[str, Any] = {
        "schedule_id": "p1",
        "owner": "alice",
        "status": PostStatus.SCHEDULED,
        "content": "the long text",
        "media_ids": ["m1"],
        "language": "en",
        "publish_at": NOW,
        "channel_ids": ["masto", "sky"],
        "created_at": NOW,
        "updated_at": NOW,
    }
    return Post(**{**base, **fields})


def test_effective_for_a_channel_without_variant_is_the_post() -> None:
    found = effective_for(post(variants={"sky": Variant(content="short")}), "masto")
    assert (found.content, found.media_ids, found.language) == ("the long text", ("m1",), "en")
    assert found.options == NetworkOptions()
    assert found.overrides == frozenset()


def test_effective_for_a_variant_overrides_only_what_it_sets() -> None:
    variant = Variant(content="short", tags=["release"], langs=["en", "de"])
    found = effective_for(post(variants={"sky": variant}), "sky")
    assert found.content == "short"
    assert found.media_ids == ("m1",)  # kept from the post
    assert found.language == "en"
    assert found.options == NetworkOptions(tags=["release"], langs=["en", "de"])
    assert found.overrides == frozenset({"content"})


def test_effective_for_empty_media_ids_in_a_variant_removes_the_media() -> None:
    found = effective_for(post(variants={"sky": Variant(media_ids=[], language="pt-BR")}), "sky")
    assert found.media_ids == ()
    assert found.language == "pt-BR"
    assert found.overrides == frozenset({"media_ids", "language"})


def test_field_loc_points_at_the_variant_only_when_it_sets_the_field() -> None:
    found = effective_for(post(variants={"sky": Variant(content="short")}), "sky")
    assert field_loc(found, "sky", "content") == ["body", "variants", "sky", "content"]
    assert field_loc(found, "sky", "media_ids") == ["body", "media_ids"]


def body(variants: dict[str, Any]) -> dict[str, Any]:
    return {
        "content": "x",
        "publish_at": "2030-01-01T00:00:00Z",
        "channel_ids": ["sky"],
        "variants": variants,
    }


def errors_of(variants: dict[str, Any]) -> list[dict[str, Any]]:
    with pytest.raises(ValidationError) as caught:
        PostCreate.model_validate(body(variants))
    return [
        {"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]}
        for e in caught.value.errors(include_url=False)
    ]


def test_variant_with_four_langs_is_refused_naming_the_limit() -> None:
    [error] = errors_of({"sky": {"langs": ["en", "de", "fr", "it"]}})
    assert error["loc"] == ["variants", "sky", "langs"]
    assert "at most 3 items" in error["msg"]


def test_variant_with_nine_tags_is_refused_naming_the_limit() -> None:
    [error] = errors_of({"sky": {"tags": [f"t{i}" for i in range(9)]}})
    assert error["loc"] == ["variants", "sky", "tags"]
    assert "at most 8 items" in error["msg"]


def test_variant_tag_over_64_graphemes_is_refused() -> None:
    [error] = errors_of({"sky": {"tags": ["a" * 65]}})
    assert error["loc"] == ["variants", "sky", "tags", 0]
    assert "64 graphemes" in error["msg"]


def test_variant_tag_of_64_emoji_graphemes_over_640_bytes_is_refused() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # 1 grapheme, 25 bytes
    [error] = errors_of({"sky": {"tags": [family * 30]}})
    assert "640 UTF-8 bytes" in error["msg"]


def test_variant_with_an_unknown_visibility_is_refused() -> None:
    [error] = errors_of({"sky": {"visibility": "followers"}})
    assert error["loc"] == ["variants", "sky", "visibility"]
    assert "'public', 'unlisted', 'private' or 'direct'" in error["msg"]


def test_empty_variant_is_refused() -> None:
    [error] = errors_of({"sky": {}})
    assert error["loc"] == ["variants", "sky"]
    assert "at least one field" in error["msg"]


def test_variant_errors_name_an_untargeted_channel_and_options_of_another_network() -> None:
    channels = {c.channel_id: c for c in (channel("sky", "bluesky"), channel("hook", "webhook"))}
    variants = {
        "sky": Variant(visibility="unlisted", tags=["ok"]),
        "hook": Variant(content="fine", sensitive=True),
        "gone": Variant(content="nobody"),
    }
    errors = variant_errors(variants, ["sky", "hook"], channels)
    assert [(e["loc"], e["type"]) for e in errors] == [
        (["body", "variants", "sky", "visibility"], "option_unsupported"),
        (["body", "variants", "hook", "sensitive"], "option_unsupported"),
        (["body", "variants", "gone"], "variant_channel_not_targeted"),
    ]
    assert "it takes: langs, tags" in errors[0]["msg"]
    assert "it takes: none" in errors[1]["msg"]


def test_mastodon_options_are_accepted_on_a_mastodon_channel() -> None:
    variant = Variant(visibility="private", spoiler_text="cw", sensitive=False)
    assert variant_errors({"m": variant}, ["m"], {"m": channel("m", "mastodon")}) == []


def test_mastodon_length_counts_the_spoiler_text() -> None:
    limits = ChannelLimits(max_characters=500, characters_reserved_per_url=23)
    text = "a" * 490
    assert check_length("mastodon", text, limits) == []
    [violation] = check_length("mastodon", text, limits, NetworkOptions(spoiler_text="b" * 11))
    assert (violation.count, violation.limit) == (501, 500)
    assert "spoiler_text included" in violation.description
    # a URL in the spoiler counts as it is, not as characters_reserved_per_url
    spoiler = "https://example.com/" + "x" * 20
    found = check_length("mastodon", "a" * 460, limits, NetworkOptions(spoiler_text=spoiler))
    assert found == []  # 40 + 460
    [over] = check_length("mastodon", "a" * 461, limits, NetworkOptions(spoiler_text=spoiler))
    assert over.count == 501


def test_bluesky_length_ignores_options() -> None:
    options = NetworkOptions(tags=["x"], langs=["en"])
    assert check_length("bluesky", "a" * 300, None, options) == []
    assert check_length("bluesky", "a" * 301, None, options)


def test_post_item_round_trips_its_variants_without_nulls() -> None:
    variants = {"sky": Variant(content="short", tags=["a"], sensitive=False)}
    item = post(variants=variants).to_item()
    assert item["variants"] == {"sky": {"content": "short", "tags": ["a"], "sensitive": False}}
    assert Post.from_item(item).variants == variants
    assert "variants" not in post().to_item()  # none: left out (the 1 KB write unit)


def test_draft_reads_like_a_post() -> None:
    draft = Draft("text", ["m1"], {"sky": Variant(content="short")})
    assert effective_for(draft, "sky").content == "short"
    assert effective_for(draft, "sky").language is None
