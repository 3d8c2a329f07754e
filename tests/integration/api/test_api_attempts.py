"""GET /v1/scheduled-posts/{id}/attempts: the attempt rows the worker writes, in start order."""

from __future__ import annotations

from tests.support.api import ApiClient
from tests.support.fixtures import START


def _attempt(schedule_id: str, started: str, channel: str, n: int, **extra) -> dict:
    item = {
        "pk": f"POST#{schedule_id}",
        "sk": f"ATTEMPT#{started}#{channel}#{n:03d}",
        "channel_id": channel,
        "attempt": n,
        "started_at": started,
        "finished_at": started,
        "outcome": "retryable",
        "http_status": 503,
        "error": "HTTP 503",
    }
    item.update(extra)
    return item


def test_list_attempts_returns_rows_in_start_order(alice: ApiClient, tables) -> None:
    channel = alice.create_channel()
    sid = alice.schedule("2026-11-30T09:30:00Z", [channel])["schedule_id"]
    tables.posts.put_item(
        Item=_attempt(
            sid,
            "2026-11-30T09:31:00.000Z",
            channel,
            2,
            outcome="published",
            http_status=200,
            error=None,
        )
    )
    tables.posts.put_item(Item=_attempt(sid, "2026-11-30T09:30:00.010Z", channel, 1))
    answer = alice.get(f"/v1/scheduled-posts/{sid}/attempts")
    assert answer.status == 200
    assert [(a["attempt"], a["outcome"], a["http_status"]) for a in answer.json["items"]] == [
        (1, "retryable", 503),
        (2, "published", 200),
    ]
    assert set(answer.json["items"][0]) == {
        "channel_id",
        "attempt",
        "started_at",
        "finished_at",
        "outcome",
        "http_status",
        "error",
        "remote_id",
        "remote_url",
    }


def test_list_attempts_hides_expired_rows(alice: ApiClient, tables) -> None:
    channel = alice.create_channel()
    sid = alice.schedule("2026-11-30T09:30:00Z", [channel])["schedule_id"]
    expired = int(START.timestamp()) - 1
    tables.posts.put_item(
        Item=_attempt(sid, "2026-11-30T09:30:00.010Z", channel, 1, expires_at=expired)
    )
    assert alice.get(f"/v1/scheduled-posts/{sid}/attempts").json == {"items": []}
