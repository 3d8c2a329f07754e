"""What a destination's answer may put on a post (``platforms/answers.py``): ids and URLs
bounded and checked, errors cut, and a post of 10 channels holding the longest of each still
far below DynamoDB's 400 KB item limit. Pure: no moto."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from scheduled_posts.lifecycle.states import DeliveryStatus, PostStatus
from scheduled_posts.models.api import MAX_CHANNELS_PER_POST, MAX_CONTENT_CODE_POINTS
from scheduled_posts.models.post import Delivery, Post
from scheduled_posts.platforms.answers import (
    MAX_ERROR_CHARS,
    MAX_REMOTE_ID_CHARS,
    MAX_REMOTE_URL_CHARS,
    bounded_error,
    bounded_result,
    receipt_from,
    safe_remote_id,
    safe_remote_url,
)
from scheduled_posts.platforms.base import DeliveryResult

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
LOCAL = ("http://127.0.0.1",)
#: DynamoDB's item size limit, bytes (ServiceQuotas: "Item size").
ITEM_LIMIT_BYTES = 400 * 1024


@pytest.mark.parametrize(
    ("value", "kept"),
    [
        ("110532471923456789", "110532471923456789"),
        (110, "110"),
        (
            "at://did:plc:abc/app.bsky.feed.post/3l4xyz",
            "at://did:plc:abc/app.bsky.feed.post/3l4xyz",
        ),
        ("x" * MAX_REMOTE_ID_CHARS, "x" * MAX_REMOTE_ID_CHARS),
        ("x" * (MAX_REMOTE_ID_CHARS + 1), None),
        ("", None),
        ("1 2", None),
        ("id\n", None),
        ("caf\u00e9", None),
        (True, None),
        (None, None),
        ({"id": 1}, None),
    ],
)
def test_safe_remote_id_keeps_only_short_visible_ascii(value: object, kept: str | None) -> None:
    assert safe_remote_id(value) == kept


@pytest.mark.parametrize(
    ("value", "kept"),
    [
        ("https://mastodon.example/@alice/110", True),
        ("https://bsky.app/profile/did:plc:abc/post/3l4xyz", True),
        ("http://127.0.0.1:9300/@alice/1", True),  # an allowed local origin
        ("http://mastodon.example/@alice/110", False),  # plain http elsewhere
        ("javascript:alert(1)", False),
        ("JaVaScRiPt:alert(1)", False),
        ("data:text/html,<script>alert(1)</script>", False),
        ("https:///no-host", False),
        ("https://ok.example/" + "x" * MAX_REMOTE_URL_CHARS, False),
        ("https://ok.example/a b", False),
        ("https://ok.example/\u202e", False),
        ("//ok.example/x", False),
        ("https://[::1/x", False),
        (42, False),
    ],
)
def test_safe_remote_url_keeps_https_or_allowed_origins_only(value: object, kept: bool) -> None:
    assert safe_remote_url(value, allowed_origins=LOCAL) == (value if kept else None)


def test_bounded_error_cuts_long_errors_and_keeps_short_ones() -> None:
    assert bounded_error("http_503: short") == "http_503: short"
    cut = bounded_error("e" * 60_000)
    assert cut is not None and len(cut) == MAX_ERROR_CHARS and cut.endswith("\u2026")


def test_bounded_result_drops_bad_values_and_keeps_the_outcome() -> None:
    hostile = DeliveryResult(
        outcome="published",
        http_status=200,
        remote_id="9" * 3000,
        remote_url="https://h.example/" + "x" * 60_000,
    )
    assert bounded_result(hostile, allowed_origins=()) == DeliveryResult(
        outcome="published", http_status=200
    )


def _item_bytes(item: Any) -> int:
    """An upper bound of DynamoDB's item size: the UTF-8 JSON of names and values (DynamoDB
    counts name and value bytes, and numbers at most 21 bytes)."""
    text = json.dumps(item, ensure_ascii=False, default=str)
    return len(text.encode("utf-8"))


def test_post_with_every_channel_at_its_longest_answer_stays_far_below_the_item_limit() -> None:
    # Given a post of the most channels, the longest content (4-byte characters), and every
    # channel holding the longest id, URL and error an answer may leave
    longest = Delivery(
        channel_id="c",
        status=DeliveryStatus.FAILED,
        attempts=6,
        remote_id="i" * MAX_REMOTE_ID_CHARS,
        remote_url="https://h.example/" + "u" * (MAX_REMOTE_URL_CHARS - 18),
        published_at=T0,
        last_error="\U0001f4a5" * MAX_ERROR_CHARS,
        next_attempt_at=T0,
        lag_seconds=1.5,
        first_attempt_at=T0,
        started_at=T0,
        http_status=503,
    )
    ids = [f"ch-{i:02d}-{'x' * 90}" for i in range(MAX_CHANNELS_PER_POST)]
    post = Post(
        schedule_id="068e8264-498d-4785-a217-b3bc08c5646d",
        owner="0f8e4a52-7c1d-4d0e-9b7f-2a6c3e5d9f10",
        status=PostStatus.PUBLISHING,
        content="\U0001f600" * MAX_CONTENT_CODE_POINTS,
        publish_at=T0,
        channel_ids=ids,
        created_at=T0,
        updated_at=T0,
        deliveries={cid: longest.model_copy(update={"channel_id": cid}) for cid in ids},
        status_reason="r" * MAX_ERROR_CHARS,
    )
    # Then its item is under a quarter of DynamoDB's limit
    assert _item_bytes(post.to_item()) < ITEM_LIMIT_BYTES // 4


# -- receipts (decision "Receipts") -------------------------------------------------------------


def test_receipt_from_keeps_well_formed_values_and_normalises_created_at_to_utc() -> None:
    receipt = receipt_from(
        cid="bafyreib2rxk3ryblouj3fxza5jvx6psmwewwessc4m6g6e7pqhhkwqomfi",
        rev="3lbcdefghijkl",
        created_at="2026-12-02T14:00:00.123+01:00",
        http_status=202,
        body_sha256="a" * 64,
    )
    assert receipt is not None
    assert receipt.created_at == "2026-12-02T13:00:00.123Z"
    assert receipt.http_status == 202 and receipt.rev == "3lbcdefghijkl"


@pytest.mark.parametrize(
    "hostile",
    [
        {"cid": "x" * 129},
        {"cid": {"$link": "b"}},
        {"rev": "has space"},
        {"created_at": "2026-12-02T13:00:00"},  # no offset
        {"created_at": "yesterday"},
        {"http_status": 99},
        {"http_status": True},
        {"body_sha256": "A" * 64},
        {"body_sha256": "a" * 63},
    ],
)
def test_receipt_from_drops_hostile_values(hostile: dict[str, object]) -> None:
    assert receipt_from(**hostile) is None  # type: ignore[arg-type]
