"""Idempotent create: same key and body replays the 201, different body 422, in flight 409."""

from __future__ import annotations

import pytest

from tests.support.api import ApiClient, RecordingPromoter, install_api

FAR = "2026-11-30T09:30:00Z"


@pytest.fixture
def body(alice: ApiClient) -> dict:
    return {"content": "once", "publish_at": FAR, "channel_ids": [alice.create_channel()]}


def _create(client: ApiClient, body: dict, key: str | None = "key-1"):
    headers = {"Idempotency-Key": key} if key else {}
    return client.post("/v1/scheduled-posts", body, headers=headers)


def _count(client: ApiClient) -> int:
    return len(client.get("/v1/scheduled-posts", query={"limit": "100"}).json["items"])


def test_create_same_key_same_body_replays_first_answer(alice: ApiClient, body: dict) -> None:
    first = _create(alice, body)
    again = _create(alice, dict(reversed(list(body.items()))))  # same parsed body
    assert (first.status, again.status) == (201, 201)
    assert again.json == first.json
    assert again.headers["ETag"] == '"1"'
    assert _count(alice) == 1


def test_create_same_key_other_body_is_422(alice: ApiClient, body: dict) -> None:
    _create(alice, body)
    answer = _create(alice, {**body, "content": "different"})
    assert answer.status == 422
    assert answer.json["errors"][0]["loc"] == ["header", "Idempotency-Key"]
    assert _count(alice) == 1


def test_create_without_key_creates_each_time(alice: ApiClient, body: dict) -> None:
    _create(alice, body, key=None)
    _create(alice, body, key=None)
    assert _count(alice) == 2


def test_create_key_is_scoped_to_the_caller(alice: ApiClient, bob: ApiClient, body: dict) -> None:
    _create(alice, body)
    bobs = {**body, "channel_ids": [bob.create_channel()]}
    answer = _create(bob, bobs)
    assert answer.status == 201
    assert _count(bob) == 1


def test_create_error_is_not_remembered(alice: ApiClient, body: dict) -> None:
    failed = _create(alice, {**body, "publish_at": "2026-11-29T11:00:00Z"})
    assert failed.status == 422
    assert _create(alice, {**body, "publish_at": "2026-11-29T11:00:00Z"}).status == 422
    assert _create(alice, body).status == 201


def test_create_same_key_in_flight_is_409(aws, clock, promoted) -> None:
    """A duplicate arrives while the first request is inside the create (at its promotion)."""
    nested: list[int] = []
    alice = ApiClient("alice")

    def promote_and_race(entry) -> None:  # type: ignore[no-untyped-def]
        nested.append(_create(alice, near).status)

    install_api(aws.settings, clock, promoter=promote_and_race)
    near = {"content": "x", "publish_at": "2026-11-29T12:01:00Z", "channel_ids": []}
    near["channel_ids"] = [alice.create_channel()]
    first = _create(alice, near)
    assert first.status == 201
    assert nested == [409]
    assert _count(alice) == 1


def test_create_idempotent_replay_does_not_promote_again(
    alice: ApiClient, body: dict, promoted: RecordingPromoter
) -> None:
    near = {**body, "publish_at": "2026-11-29T12:01:00Z"}
    _create(alice, near)
    _create(alice, near)
    assert len(promoted.entries) == 1


def test_create_idempotency_record_lost_after_commit_retry_finds_the_post(
    alice: ApiClient, body: dict, aws
) -> None:
    # Given a create that committed, whose idempotency record was then lost (a crash or a
    # failed record write after the post's transaction)
    first = _create(alice, body)
    table = aws.settings.IDEMPOTENCY_TABLE_NAME
    for item in aws.dynamodb.scan(TableName=table)["Items"]:
        aws.dynamodb.delete_item(TableName=table, Key={"id": item["id"]})
    # When the client retries with the same key and body
    again = _create(alice, body)
    # Then it gets the same post, and there is still only one
    assert (first.status, again.status) == (201, 201)
    assert again.json["schedule_id"] == first.json["schedule_id"]
    assert _count(alice) == 1
