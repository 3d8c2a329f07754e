"""The per-user pending-post limit (MAX_PENDING_POSTS): atomic, released, folded."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from moto.dynamodb.responses import DynamoHandler

from tests.support.api import ApiClient, install_api

FAR = "2026-11-30T09:30:00Z"
LIMIT = 3


@pytest.fixture
def limited(aws, clock, promoted) -> ApiClient:
    install_api(aws.settings.model_copy(update={"MAX_PENDING_POSTS": LIMIT}), clock)
    return ApiClient("alice")


def _create(client: ApiClient, channel: str):
    body = {"content": "x", "publish_at": FAR, "channel_ids": [channel]}
    return client.post("/v1/scheduled-posts", body)


def test_create_over_the_limit_is_429_problem(limited: ApiClient, tables) -> None:
    channel = limited.create_channel()
    assert [_create(limited, channel).status for _ in range(LIMIT)] == [201] * LIMIT
    answer = _create(limited, channel)
    assert answer.status == 429
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert "MAX_PENDING_POSTS" in answer.json["detail"]
    assert len(tables.due_items()) == LIMIT


def test_create_after_a_cancel_folds_the_release(limited: ApiClient, tables) -> None:
    channel = limited.create_channel()
    first = _create(limited, channel).json
    for _ in range(LIMIT - 1):
        _create(limited, channel)
    limited.delete(f"/v1/scheduled-posts/{first['schedule_id']}")
    assert _create(limited, channel).status == 201
    pending = tables.posts.get_item(Key={"pk": "OWNER#alice", "sk": "PENDING"})["Item"]
    assert pending["pending"] == LIMIT


def test_create_limit_is_per_user(limited: ApiClient) -> None:
    channel = limited.create_channel()
    for _ in range(LIMIT):
        _create(limited, channel)
    bob = ApiClient("bob")
    assert _create(bob, bob.create_channel()).status == 201


def test_create_concurrent_never_exceeds_the_limit(
    limited: ApiClient, tables, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Eight threads create at once; each DynamoDB request is atomic, as in AWS (moto is not
    thread-safe on its own, so its request handling is serialised here, and only there)."""
    lock = threading.Lock()
    original = DynamoHandler.call_action

    def atomic(self):  # type: ignore[no-untyped-def]
        with lock:
            return original(self)

    monkeypatch.setattr(DynamoHandler, "call_action", atomic)
    channel = limited.create_channel()
    start = threading.Barrier(8)

    def one(_: int) -> int:
        start.wait()
        return _create(limited, channel).status

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(one, range(8)))
    assert sorted(statuses) == [201] * LIMIT + [429] * (8 - LIMIT)
    scheduled = [i for i in tables.posts.scan()["Items"] if i["sk"] == "POST"]
    assert len(scheduled) == LIMIT
