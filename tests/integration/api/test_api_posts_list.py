"""Listing: order, bounds, filters, pagination with ties and across hour buckets, cursors."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.support.api import ApiClient
from tests.support.fixtures import START


@pytest.fixture
def channel(alice: ApiClient) -> str:
    return alice.create_channel()


def _walk(client: ApiClient, limit: int, **query: str) -> tuple[list[str], int]:
    """Every schedule id over all pages, and the number of pages."""
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        params = {"limit": str(limit), **query}
        if cursor:
            params["cursor"] = cursor
        answer = client.get("/v1/scheduled-posts", query=params)
        assert answer.status == 200, answer.json
        assert len(answer.json["items"]) <= limit
        seen += [p["schedule_id"] for p in answer.json["items"]]
        pages += 1
        cursor = answer.json["next_cursor"]
        if cursor is None:
            return seen, pages


def test_list_posts_ties_are_never_repeated_or_skipped(alice: ApiClient, channel: str) -> None:
    ids = [alice.schedule("2026-11-30T09:00:00Z", [channel])["schedule_id"] for _ in range(13)]
    seen, pages = _walk(alice, limit=4)
    assert seen == sorted(ids)
    assert pages >= 4


def test_list_posts_across_hour_buckets_in_order(alice: ApiClient, channel: str) -> None:
    created = []
    for hours in (5, 1, 3, 1, 2, 30, 4):
        at = (START + timedelta(hours=hours, minutes=59)).strftime("%Y-%m-%dT%H:%M:%SZ")
        created.append((at.replace("Z", ".000Z"), alice.schedule(at, [channel])["schedule_id"]))
    seen, _ = _walk(alice, limit=3)
    assert seen == [sid for _, sid in sorted(created)]


def test_list_posts_default_page_and_null_cursor_at_end(alice: ApiClient, channel: str) -> None:
    alice.schedule("2026-11-30T09:00:00Z", [channel])
    answer = alice.get("/v1/scheduled-posts")
    assert len(answer.json["items"]) == 1
    assert answer.json["next_cursor"] is None


def test_list_posts_from_inclusive_to_exclusive(alice: ApiClient, channel: str) -> None:
    at = {
        h: alice.schedule(f"2026-11-30T{h:02d}:00:00Z", [channel])["schedule_id"] for h in (1, 2, 3)
    }
    seen, _ = _walk(alice, 10, **{"from": "2026-11-30T02:00:00Z", "to": "2026-11-30T03:00:00Z"})
    assert seen == [at[2]]


def test_list_posts_empty_range_is_empty(alice: ApiClient, channel: str) -> None:
    alice.schedule("2026-11-30T02:00:00Z", [channel])
    seen, _ = _walk(alice, 10, **{"from": "2026-11-30T02:00:00Z", "to": "2026-11-30T02:00:00Z"})
    assert seen == []


def test_list_posts_from_after_to_is_422_naming_both(alice: ApiClient) -> None:
    answer = alice.get(
        "/v1/scheduled-posts",
        query={"from": "2026-11-30T03:00:00Z", "to": "2026-11-30T01:00:00Z"},
    )

    assert answer.status == 422
    assert [e["loc"] for e in answer.json["errors"]] == [["query", "from"], ["query", "to"]]


def test_list_posts_status_filter(alice: ApiClient, channel: str) -> None:
    keep = alice.schedule("2026-11-30T02:00:00Z", [channel])["schedule_id"]
    gone = alice.schedule("2026-11-30T03:00:00Z", [channel])["schedule_id"]
    alice.delete(f"/v1/scheduled-posts/{gone}")
    assert _walk(alice, 1, status="scheduled")[0] == [keep]
    assert _walk(alice, 1, status="cancelled")[0] == [gone]


def test_list_posts_hides_expired(alice: ApiClient, channel: str, tables) -> None:
    sid = alice.schedule("2026-11-30T02:00:00Z", [channel])["schedule_id"]
    tables.set_post(sid, status="published", expires_at=int(START.timestamp()) - 1)
    assert _walk(alice, 5)[0] == []


def test_list_posts_only_the_callers(alice: ApiClient, bob: ApiClient, channel: str) -> None:
    alice.schedule("2026-11-30T02:00:00Z", [channel])
    assert _walk(bob, 5)[0] == []


def test_list_posts_forged_cursor_is_400(bare: ApiClient) -> None:
    answer = bare.get("/v1/scheduled-posts", query={"cursor": "eyJ2IjoxfQ.AAAA"})
    assert answer.status == 400
    assert answer.headers["Content-Type"] == "application/problem+json"


def test_list_posts_other_users_cursor_is_400(
    alice: ApiClient, bob: ApiClient, channel: str
) -> None:
    for _ in range(3):
        alice.schedule("2026-11-30T02:00:00Z", [channel])
    cursor = alice.get("/v1/scheduled-posts", query={"limit": "1"}).json["next_cursor"]
    answer = bob.get("/v1/scheduled-posts", query={"limit": "1", "cursor": cursor})
    assert answer.status == 400
    assert "items" not in answer.json


def test_list_posts_cursor_with_other_filters_is_400(alice: ApiClient, channel: str) -> None:
    for _ in range(3):
        alice.schedule("2026-11-30T02:00:00Z", [channel])
    cursor = alice.get("/v1/scheduled-posts", query={"limit": "1"}).json["next_cursor"]
    answer = alice.get(
        "/v1/scheduled-posts",
        query={"limit": "1", "cursor": cursor, "from": "2026-12-01T00:00:00Z"},
    )
    assert answer.status == 400


@pytest.mark.parametrize(
    "query",
    [
        {"limit": "0"},
        {"limit": "101"},
        {"limit": "ten"},
        {"limit": "9" * 40},
        {"status": "done"},
        {"from": "2026-11-30T02:00:00"},
        {"to": "yesterday"},
    ],
)
def test_list_posts_bad_query_is_422(bare: ApiClient, query: dict[str, str]) -> None:
    answer = bare.get("/v1/scheduled-posts", query=query)
    assert answer.status == 422
    assert answer.json["errors"][0]["loc"][0] == "query"
