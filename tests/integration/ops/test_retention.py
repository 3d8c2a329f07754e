"""Retention: finished posts, attempts and idempotency records carry a TTL (``RETENTION_DAYS``),
and the API hides a record whose TTL passed (DynamoDB TTL deletes late, moto never)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import boto3
import pytest
from boto3.dynamodb.conditions import Key
from moto import mock_aws

from scheduled_posts import keys
from scheduled_posts.clock import epoch_seconds
from scheduled_posts.lifecycle.states import PostStatus
from tests.integration.dispatch.conftest import FirePath, build_fire_path
from tests.support.api import ApiClient, install_api, uninstall_api
from tests.support.clock import SimClock
from tests.support.receiver import Answer


@pytest.fixture
def published(clock: SimClock) -> Iterator[Callable[[], tuple[FirePath, str]]]:
    """A post of alice published through the fire path, with the API on the same tables."""
    with mock_aws():

        def build(*answers: Answer) -> tuple[FirePath, str]:
            fire = build_fire_path(clock, RETENTION_DAYS=3)
            install_api(fire.settings, clock)
            fire.channel("c1")
            post = fire.post(clock.now() + timedelta(seconds=5), ["c1"])
            if answers:
                fire.receiver.script(*answers, url="https://hooks.example.com/c1")
            fire.driver.run_for(120 if answers else 10)  # the retry's backoff is drawn
            assert fire.read(post).status == PostStatus.PUBLISHED
            return fire, post.schedule_id

        yield build
        uninstall_api()


def _table(fire: FirePath, name: str) -> object:
    return boto3.resource("dynamodb", region_name="us-east-1").Table(name)


def _attempt_rows(fire: FirePath, sid: str) -> list[dict[str, Any]]:
    """The post's ``ATTEMPT#`` rows as stored."""
    table = _table(fire, fire.settings.POSTS_TABLE_NAME)
    key = Key("pk").eq(keys.post_pk(sid)) & Key("sk").begins_with("ATTEMPT#")
    return table.query(KeyConditionExpression=key)["Items"]  # type: ignore[attr-defined,no-any-return]


def test_retention_published_post_and_attempts_carry_ttl(published) -> None:  # type: ignore[no-untyped-def]
    # Given a post published on its second try: the failed try is an ATTEMPT# row, the
    # published one is folded into the post item (issue 16, W2)
    fire, sid = published(Answer.error(503))
    post = fire.store.get_post(sid)
    assert post is not None and post.published_at is not None
    horizon = epoch_seconds(post.published_at + timedelta(days=3))
    # Then the post item (with its folded attempt) and every attempt row carry the TTL
    assert post.expires_at is not None and abs(post.expires_at - horizon) <= 60
    assert [a["outcome"] for a in fire.attempts(post)] == ["retryable", "published"]
    rows = _attempt_rows(fire, sid)
    assert [r["outcome"] for r in rows] == ["retryable"]
    assert all(int(r["expires_at"]) >= horizon for r in rows)


def test_retention_delivery_idempotency_record_carries_expiration(published) -> None:  # type: ignore[no-untyped-def]
    fire, _ = published()
    records = _table(fire, fire.settings.IDEMPOTENCY_TABLE_NAME).scan()["Items"]  # type: ignore[attr-defined]
    assert records
    assert all(int(r["expiration"]) > fire.clock.now().timestamp() for r in records)


def test_retention_expired_post_hidden_from_get_and_list(published) -> None:  # type: ignore[no-untyped-def]
    fire, sid = published()
    alice = ApiClient("alice")
    assert alice.get(f"/v1/scheduled-posts/{sid}").status == 200
    fire.clock.advance(timedelta(days=3, minutes=5).total_seconds())
    assert alice.get(f"/v1/scheduled-posts/{sid}").status == 404
    listed = alice.get("/v1/scheduled-posts")
    assert listed.status == 200
    assert [p["schedule_id"] for p in listed.json["items"]] == []


def test_retention_expired_post_attempts_hidden(published) -> None:  # type: ignore[no-untyped-def]
    fire, sid = published()
    fire.clock.advance(timedelta(days=3, minutes=5).total_seconds())
    assert ApiClient("alice").get(f"/v1/scheduled-posts/{sid}/attempts").status == 404


def test_retention_expired_attempt_hidden_while_post_visible(published) -> None:  # type: ignore[no-untyped-def]
    # Given a post published on its second try: one ATTEMPT# row (the 503), the published
    # attempt folded into the post item (issue 16, W2)
    fire, sid = published(Answer.error(503))
    (row,) = _attempt_rows(fire, sid)
    # When the row's TTL passes (DynamoDB deletes late)
    _table(fire, fire.settings.POSTS_TABLE_NAME).update_item(  # type: ignore[attr-defined]
        Key={"pk": row["pk"], "sk": row["sk"]},
        UpdateExpression="SET expires_at = :past",
        ExpressionAttributeValues={":past": epoch_seconds(fire.clock.now()) - 1},
    )
    # Then the API hides it and still lists the attempt kept on the post item
    answer = ApiClient("alice").get(f"/v1/scheduled-posts/{sid}/attempts")
    assert answer.status == 200
    assert [a["outcome"] for a in answer.json["items"]] == ["published"]
