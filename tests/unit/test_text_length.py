"""Each network's length rule, at its limits (issue 12)."""

from __future__ import annotations

import pytest

from scheduled_posts.platforms.registry import check_length
from scheduled_posts.platforms.text_length import (
    bluesky_limits,
    grapheme_count,
    mastodon_length,
    mastodon_limits,
)

# "e" + COMBINING ACUTE ACCENT + COMBINING DOT BELOW: one grapheme, three code points.
COMBINING = "e\u0301\u0323"
# Family: MAN ZWJ WOMAN ZWJ GIRL ZWJ BOY: one grapheme, seven code points, 25 UTF-8 bytes.
ZWJ_FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"


def test_grapheme_count_combining_sequence_is_one_cluster() -> None:
    assert grapheme_count(COMBINING * 3) == 3
    assert len(COMBINING * 3) == 9


def test_bluesky_300_combining_graphemes_fit() -> None:
    assert check_length("bluesky", COMBINING * 300, bluesky_limits()) == []


def test_bluesky_301_combining_graphemes_refused_with_count_and_limit() -> None:
    [violation] = check_length("bluesky", COMBINING * 301, bluesky_limits())
    assert (violation.rule, violation.count, violation.limit) == ("graphemes", 301, 300)
    assert "channel news: Bluesky allows at most 300 graphemes" in violation.message("news")


def test_bluesky_301_zwj_emoji_refused_on_graphemes_and_bytes() -> None:
    broken = check_length("bluesky", ZWJ_FAMILY * 301, bluesky_limits())
    assert [(v.rule, v.count, v.limit) for v in broken] == [
        ("graphemes", 301, 300),
        ("bytes", 301 * 25, 3000),
    ]


def test_bluesky_120_zwj_emoji_fit_at_3000_bytes() -> None:
    text = ZWJ_FAMILY * 120  # 120 graphemes, exactly 3,000 bytes
    assert len(text.encode()) == 3000
    assert check_length("bluesky", text, bluesky_limits()) == []


def test_bluesky_3001_bytes_under_300_graphemes_refused_on_bytes() -> None:
    text = ZWJ_FAMILY * 120 + "a"
    [violation] = check_length("bluesky", text, bluesky_limits())
    assert (violation.rule, violation.count, violation.limit) == ("bytes", 3001, 3000)


def test_mastodon_url_counts_as_characters_reserved_per_url() -> None:
    url = "https://example.com/" + "a" * 200
    assert mastodon_length(f"see {url}", 23) == 4 + 23
    assert mastodon_length(f"see {url}.", 23) == 4 + 23 + 1  # trailing dot is text


def test_mastodon_mention_with_domain_counts_as_local_part() -> None:
    assert mastodon_length("hi @alice@example.social", 23) == len("hi @alice")


def test_mastodon_at_limit_fits_and_one_more_refused() -> None:
    limits = mastodon_limits(max_characters=30, characters_reserved_per_url=23)
    over = "1234567 https://example.com/" + "x" * 500  # 8 + 23 = 31 > 30
    assert [v.count for v in check_length("mastodon", over, limits)] == [31]
    assert check_length("mastodon", "123456 https://example.com/long", limits) == []


def test_mastodon_defaults_when_instance_gives_none() -> None:
    limits = mastodon_limits(None, None)
    assert (limits.max_characters, limits.characters_reserved_per_url) == (500, 23)
    [violation] = check_length("mastodon", "x" * 501, limits)
    assert (violation.rule, violation.count, violation.limit) == ("characters", 501, 500)


def test_mastodon_counts_graphemes_not_code_points() -> None:
    limits = mastodon_limits(max_characters=10)
    assert check_length("mastodon", ZWJ_FAMILY * 10, limits) == []
    assert len(check_length("mastodon", ZWJ_FAMILY * 11, limits)) == 1


@pytest.mark.parametrize("value", [0, -5, True, "500"])
def test_mastodon_limits_nonsense_takes_default(value: object) -> None:
    assert mastodon_limits(value, value).max_characters == 500


def test_webhook_has_no_length_rule() -> None:
    assert check_length("webhook", "x" * 100_000, None) == []
