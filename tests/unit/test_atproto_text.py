"""Deterministic TIDs and rich-text facets with UTF-8 byte offsets (issue 12)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from scheduled_posts.platforms.atproto_text import detect_facets, is_tid, tid

AT = datetime(2026, 12, 1, 9, 30, 0, 123456, tzinfo=UTC)
_B32 = "234567abcdefghijklmnopqrstuvwxyz"


def _decode(key: str) -> int:
    value = 0
    for char in key:
        value = value * 32 + _B32.index(char)
    return value


def test_tid_same_delivery_same_key() -> None:
    assert tid(AT, schedule_id="s1", channel_id="c1") == tid(AT, schedule_id="s1", channel_id="c1")


def test_tid_encodes_publish_at_microseconds_and_a_10_bit_clock_id() -> None:
    key = tid(AT, schedule_id="s1", channel_id="c1")
    value = _decode(key)
    assert value >> 63 == 0
    assert value >> 10 == int(AT.timestamp()) * 1_000_000 + 123456
    assert is_tid(key) and len(key) == 13


def test_tid_other_channel_differs_in_clock_id_only() -> None:
    a = _decode(tid(AT, schedule_id="s1", channel_id="c1"))
    b = _decode(tid(AT, schedule_id="s1", channel_id="c2"))
    assert a >> 10 == b >> 10 and a != b


def test_tid_sorts_by_publish_at() -> None:
    earlier = tid(AT, schedule_id="s9", channel_id="c9")
    later = tid(AT + timedelta(microseconds=1), schedule_id="s1", channel_id="c1")
    assert earlier < later


def test_tid_naive_publish_at_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        tid(datetime(2026, 12, 1), schedule_id="s", channel_id="c")


def test_facets_link_mention_tag_byte_offsets_after_multibyte_text() -> None:
    text = "héllo @alice.test see https://example.com/x). #tag"
    facets = detect_facets(text, {"alice.test": "did:plc:alice"}.get)
    raw = text.encode()
    spans = [raw[f["index"]["byteStart"] : f["index"]["byteEnd"]].decode() for f in facets]
    assert spans == ["@alice.test", "https://example.com/x", "#tag"]
    assert [f["features"][0] for f in facets] == [
        {"$type": "app.bsky.richtext.facet#mention", "did": "did:plc:alice"},
        {"$type": "app.bsky.richtext.facet#link", "uri": "https://example.com/x"},
        {"$type": "app.bsky.richtext.facet#tag", "tag": "tag"},
    ]


def test_facets_unresolved_mention_stays_plain_text() -> None:
    assert detect_facets("hi @nobody.test", lambda handle: None) == []


def test_facets_numeric_hashtag_is_not_a_tag() -> None:
    assert detect_facets("item #123", lambda handle: None) == []


def test_facets_emoji_before_link_counts_four_bytes() -> None:
    [facet] = detect_facets("\U0001f600 https://a.example", lambda handle: None)
    assert facet["index"] == {"byteStart": 5, "byteEnd": 5 + len("https://a.example")}
