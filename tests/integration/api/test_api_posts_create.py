"""Create and read posts: shape, due entry, late marker, promotion, time rules."""

from __future__ import annotations

import os
import time
from datetime import timedelta

import pytest

from tests.support.api import ApiClient, RecordingPromoter, install_api
from tests.support.fixtures import START, AwsResources
from tests.support.media import ready_media

NEAR = "2026-11-29T12:05:00Z"  # within LOOKAHEAD_SECONDS (600) of START
FAR = "2026-11-30T09:30:00Z"


@pytest.fixture
def m1(aws: AwsResources, alice: ApiClient) -> str:
    """A ready upload of alice's: a post's media_ids name ready uploads."""
    return ready_media(aws.settings)


@pytest.fixture
def channel(alice: ApiClient) -> str:
    return alice.create_channel()


def test_create_post_valid_returns_201_shape_and_etag(
    m1: str, alice: ApiClient, channel: str
) -> None:
    answer = alice.post(
        "/v1/scheduled-posts",
        {"content": "hi", "media_ids": [m1], "publish_at": FAR, "channel_ids": [channel]},
    )
    assert answer.status == 201
    assert answer.headers["ETag"] == '"1"'
    body = answer.json
    assert body["status"] == "scheduled"
    assert body["version"] == 1
    assert body["publish_at"] == "2026-11-30T09:30:00.000Z"
    assert body["deliveries"] == [
        {
            "channel_id": channel,
            "status": "pending",
            "attempts": 0,
            "remote_id": None,
            "remote_url": None,
            "published_at": None,
            "last_error": None,
            "next_attempt_at": None,
            "receipt": None,  # what the network returned, once published
            "verified_at": None,  # read back on the network
            "verification": None,
            "planned_remote_url": None,  # a webhook's address is not known in advance
            "content": "hi",  # what this channel publishes: no variant, the post's
            "media_ids": [m1],
            "language": None,
            "options": dict.fromkeys(("visibility", "spoiler_text", "sensitive", "langs", "tags")),
            "parts": [],  # a single post: no thread parts
            "parts_published": None,
            "published_parts": [],
            "first_comment": None,  # the comment's own outcome, when the post has one
        }
    ]
    assert set(body) == {
        "schedule_id",
        "status",
        "content",
        "media_ids",
        "publish_at",
        "channel_ids",
        "deliveries",
        "version",
        "created_at",
        "updated_at",
        "published_at",
        "publish_lag_seconds",
        "series_id",
        "occurrence_at",
        "detached",
        "queue_slot",
        "language",
        "variants",
        "link_card",
        "warnings",
        "parts",
        "first_comment",
    }
    assert (body["parts"], body["first_comment"]) == ([], None)  # a single post
    assert body["language"] is None
    assert body["variants"] == {}
    assert (body["link_card"], body["warnings"]) == (None, [])


def test_get_post_returns_what_create_returned(alice: ApiClient, channel: str) -> None:
    created = alice.schedule(FAR, [channel])
    answer = alice.get(f"/v1/scheduled-posts/{created['schedule_id']}")
    assert answer.status == 200
    assert answer.json == created
    assert answer.headers["ETag"] == '"1"'


def test_create_post_far_writes_due_entry_without_marker(
    alice: ApiClient, channel: str, tables
) -> None:
    created = alice.schedule(FAR, [channel])
    [entry] = tables.due_items()
    item = tables.post_item(created["schedule_id"])
    assert entry["bucket"] == f"2026-11-30T09#{item['shard']}"
    assert entry["due"] == f"2026-11-30T09:30:00.000Z#{created['schedule_id']}"
    assert entry["version"] == 1
    assert "content" not in entry
    assert "due_bucket" not in item  # derived from publish_at and the shard (issue 16, W1)


def test_create_post_near_writes_late_marker_and_promotes(
    alice: ApiClient, channel: str, tables, promoted: RecordingPromoter
) -> None:
    created = alice.schedule(NEAR, [channel])
    buckets = sorted(e["bucket"] for e in tables.due_items())
    shard = tables.post_item(created["schedule_id"])["shard"]
    assert buckets == [f"2026-11-29T12#{shard}", f"LATE#{shard}"]
    assert [e.schedule_id for e in promoted.entries] == [created["schedule_id"]]
    assert promoted.entries[0].version == 1


def test_create_post_just_past_lookahead_gets_marker_but_no_promotion(
    alice: ApiClient, channel: str, tables, promoted: RecordingPromoter
) -> None:
    alice.schedule("2026-11-29T12:10:30Z", [channel])  # lookahead 600 s < 630 s <= 660 s
    assert any(e["bucket"].startswith("LATE#") for e in tables.due_items())
    assert promoted.entries == []


def test_create_post_promotion_failure_still_succeeds(aws, clock, promoted, tables) -> None:
    failing = RecordingPromoter(fail=True)
    install_api(aws.settings, clock, promoter=failing)
    alice = ApiClient("alice")
    channel = alice.create_channel()
    created = alice.schedule(NEAR, [channel])
    assert len(failing.entries) == 1
    assert tables.post_item(created["schedule_id"])["status"] == "scheduled"


def test_create_post_counts_pending(alice: ApiClient, channel: str, tables) -> None:
    alice.schedule(FAR, [channel])
    alice.schedule(FAR, [channel])
    item = tables.posts.get_item(Key={"pk": "OWNER#alice", "sk": "PENDING"})["Item"]
    assert item["pending"] == 2


def test_create_post_in_the_past_is_422(alice: ApiClient, channel: str, tables) -> None:
    answer = alice.post(
        "/v1/scheduled-posts",
        {"content": "x", "publish_at": "2026-11-29T11:59:59.999Z", "channel_ids": [channel]},
    )
    assert answer.status == 422
    assert answer.json["errors"][0]["loc"] == ["body", "publish_at"]
    assert tables.due_items() == []


@pytest.mark.parametrize("replies", [24, 25])
def test_create_thread_of_25_parts_is_accepted_26_is_422_counting_parts(
    alice: ApiClient, channel: str, tables, replies: int
) -> None:
    body = {
        "content": "part 1",
        "parts": [{"content": f"part {i + 2}"} for i in range(replies)],
        "publish_at": "2026-11-29T13:00:00Z",
        "channel_ids": [channel],
    }
    answer = alice.post("/v1/scheduled-posts", body)
    if replies == 24:
        assert answer.status == 201, answer.json
        assert len(answer.json["parts"]) == 24
        return
    assert answer.status == 422
    error = answer.json["errors"][0]
    assert (error["loc"], error["type"]) == (["body", "parts"], "too_long")
    assert (
        error["msg"]
        == "a thread has at most 25 parts in all (content and up to 24 in parts), not 26"
    )
    assert tables.due_items() == []


def test_create_post_exactly_30_days_ahead_is_accepted(alice: ApiClient, channel: str) -> None:
    alice.schedule("2026-12-29T12:00:00Z", [channel])


def test_create_post_30_days_and_1_second_ahead_is_422(alice: ApiClient, channel: str) -> None:
    answer = alice.post(
        "/v1/scheduled-posts",
        {"content": "x", "publish_at": "2026-12-29T12:00:01Z", "channel_ids": [channel]},
    )
    assert answer.status == 422
    assert answer.json["errors"][0]["loc"] == ["body", "publish_at"]


def test_create_post_missing_channel_is_422(alice: ApiClient, channel: str) -> None:
    answer = alice.post(
        "/v1/scheduled-posts",
        {"content": "x", "publish_at": FAR, "channel_ids": [channel, "no-such-channel"]},
    )
    assert answer.status == 422
    assert answer.json["errors"] == [
        {
            "loc": ["body", "channel_ids", 1],
            "msg": "no channel 'no-such-channel' of yours (by id; an import also by name)",
            "type": "channel_not_found",
        }
    ]


def test_create_post_other_users_channel_is_422(alice: ApiClient, bob: ApiClient) -> None:
    bobs = bob.create_channel()
    answer = alice.post(
        "/v1/scheduled-posts", {"content": "x", "publish_at": FAR, "channel_ids": [bobs]}
    )
    assert answer.status == 422


def test_create_post_offset_is_stored_in_utc(alice: ApiClient, channel: str, tables) -> None:
    created = alice.schedule("2026-11-30T05:30:00.1234-04:00", [channel])
    assert created["publish_at"] == "2026-11-30T09:30:00.124Z"
    assert tables.due_items()[0]["bucket"].startswith("2026-11-30T09#")


@pytest.mark.parametrize("zone", ["America/Los_Angeles", "Asia/Kolkata", "Pacific/Kiritimati"])
def test_create_post_process_tz_changes_nothing(
    alice: ApiClient, channel: str, zone: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        created = alice.schedule("2026-11-30T09:30:00+02:00", [channel])
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    assert created["publish_at"] == "2026-11-30T07:30:00.000Z"
    assert created["created_at"] == "2026-11-29T12:00:00.000Z"
    assert os.environ.get("TZ") is None


def test_get_post_expired_is_404(alice: ApiClient, channel: str, tables) -> None:
    created = alice.schedule(FAR, [channel])
    past = int((START - timedelta(seconds=1)).timestamp())
    tables.set_post(created["schedule_id"], status="published", expires_at=past)
    assert alice.get(f"/v1/scheduled-posts/{created['schedule_id']}").status == 404


def test_get_post_missing_is_404_problem(alice: ApiClient) -> None:
    answer = alice.get("/v1/scheduled-posts/00000000-0000-4000-8000-000000000000")
    assert answer.status == 404
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert set(answer.json) == {"type", "title", "status", "detail"}
