"""Retention: finished posts, attempts and idempotency records carry a TTL (``RETENTION_DAYS``),
and the API hides a record whose TTL passed (DynamoDB TTL deletes late, moto never)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta

import boto3
import pytest
from moto import mock_aws

from scheduled_posts.clock import epoch_seconds
from tests.integration.dispatch.conftest import FirePath, build_fire_path
from tests.support.api import ApiClient, install_api, uninstall_api
from tests.support.clock import SimClock


@pytest.fixture
def published(clock: SimClock) -> Iterator[Callable[[], tuple[FirePath, str]]]:
    """A post of alice published through the fire path, with the API on the same tables."""
    with mock_aws():

        def build() -> tuple[FirePath, str]:
            fire = build_fire_path(clock, RETENTION_DAYS=3)
            install_api(fire.settings, clock)
            fire.channel("c1")
            post = fire.post(clock.now() + timedelta(seconds=5), ["c1"])
            fire.driver.run_for(10)
            return fire, post.schedule_id

        yield build
        uninstall_api()


def _table(fire: FirePath, name: str) -> object:
    return boto3.resource("dynamodb", region_name="us-east-1").Table(name)


def test_retention_published_post_and_attempts_carry_ttl(published) -> None:  # type: ignore[no-untyped-def]
    fire, sid = published()
    post = fire.store.get_post(sid)
    assert post is not None and post.published_at is not None
    horizon = epoch_seconds(post.published_at + timedelta(days=3))
    assert post.expires_at is not None and abs(post.expires_at - horizon) <= 60
    attempts = fire.attempts(post)
    assert attempts and all(int(a["expires_at"]) >= horizon for a in attempts)


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
    fire, sid = published()
    table = _table(fire, fire.settings.POSTS_TABLE_NAME)
    post = fire.store.get_post(sid)
    assert post is not None
    first = fire.attempts(post)[0]
    table.update_item(  # type: ignore[attr-defined]
        Key={"pk": first["pk"], "sk": first["sk"]},
        UpdateExpression="SET expires_at = :past",
        ExpressionAttributeValues={":past": epoch_seconds(fire.clock.now()) - 1},
    )
    answer = ApiClient("alice").get(f"/v1/scheduled-posts/{sid}/attempts")
    assert answer.status == 200
    assert answer.json["items"] == []
