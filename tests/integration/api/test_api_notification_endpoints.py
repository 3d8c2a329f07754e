"""Notification endpoints (issue 14): create (secret once), list, delete, rotate, URL policy,
known event types, the per-user cap, isolation; every error is problem+json."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from scheduled_posts.data.notification_endpoints import NotificationEndpointRepository
from scheduled_posts.settings import Settings
from tests.support.api import ApiClient, install_api
from tests.support.fixtures import AwsResources

PATH = "/v1/notification-endpoints"
ENDPOINT = {"url": "https://hooks.example.com/notify", "event_types": ["post.published"]}


def _create(client: ApiClient, **overrides: object) -> dict:
    answer = client.post(PATH, {**ENDPOINT, **overrides})
    assert answer.status == 201, answer.json
    return dict(answer.json)


def _problem(answer) -> dict:  # type: ignore[no-untyped-def]
    assert answer.headers["Content-Type"] == "application/problem+json"
    return dict(answer.json)


def test_create_endpoint_valid_returns_201_with_secret_once(alice: ApiClient) -> None:
    created = _create(alice, event_types=["post.published", "post.cancelled"])
    assert re.fullmatch(r"whsec_[A-Za-z0-9+/]{43}=", created["signing_secret"])
    assert created["event_types"] == ["post.cancelled", "post.published"]
    assert created["created_at"] == "2026-11-29T12:00:00.000Z"
    listed = alice.get(PATH)
    assert listed.status == 200
    assert [e["endpoint_id"] for e in listed.json["items"]] == [created["endpoint_id"]]
    assert "signing_secret" not in listed.json["items"][0]


def test_create_endpoint_unknown_event_type_422_problem(alice: ApiClient) -> None:
    answer = alice.post(PATH, {**ENDPOINT, "event_types": ["post.exploded"]})
    assert answer.status == 422
    problem = _problem(answer)
    assert problem["errors"][0]["loc"][:3] == ["body", "event_types", 0]


@pytest.mark.parametrize(
    "body",
    [
        {**ENDPOINT, "event_types": []},
        {**ENDPOINT, "event_types": ["post.published", "post.published"]},
        {"url": ENDPOINT["url"]},
        {**ENDPOINT, "secret": "mine"},
        {**ENDPOINT, "url": 7},
    ],
)
def test_create_endpoint_invalid_body_422_problem(alice: ApiClient, body: dict) -> None:
    answer = alice.post(PATH, body)
    assert answer.status == 422
    assert _problem(answer)["status"] == 422


@pytest.mark.parametrize(
    "url",
    [
        "http://hooks.example.com/notify",  # http to a public origin not allowed
        "https://internal.example.com/notify",  # resolves to a private address
        "https://127.0.0.1/notify",
        "ftp://hooks.example.com/notify",
    ],
)
def test_create_endpoint_unsafe_url_422_unsafe_destination(alice: ApiClient, url: str) -> None:
    answer = alice.post(PATH, {**ENDPOINT, "url": url})
    assert answer.status == 422
    problem = _problem(answer)
    assert problem["errors"][0]["loc"] == ["body", "url"]
    assert problem["errors"][0]["type"] == "unsafe_destination"


def test_delete_other_users_endpoint_404_and_kept(alice: ApiClient, bob: ApiClient) -> None:
    created = _create(alice)
    answer = bob.delete(f"{PATH}/{created['endpoint_id']}")
    assert answer.status == 404
    assert _problem(answer)["status"] == 404
    assert len(alice.get(PATH).json["items"]) == 1
    assert bob.get(PATH).json["items"] == []


def test_rotate_other_users_endpoint_404(alice: ApiClient, bob: ApiClient) -> None:
    created = _create(alice)
    answer = bob.post(f"{PATH}/{created['endpoint_id']}/rotate-secret")
    assert answer.status == 404
    assert _problem(answer)["status"] == 404


def test_delete_endpoint_204_then_404(alice: ApiClient) -> None:
    created = _create(alice)
    assert alice.delete(f"{PATH}/{created['endpoint_id']}").status == 204
    assert alice.get(PATH).json["items"] == []
    assert alice.delete(f"{PATH}/{created['endpoint_id']}").status == 404


def test_rotate_endpoint_secret_keeps_old_for_overlap(
    alice: ApiClient, aws: AwsResources, clock
) -> None:  # type: ignore[no-untyped-def]
    created = _create(alice)
    answer = alice.post(f"{PATH}/{created['endpoint_id']}/rotate-secret")
    assert answer.status == 200
    new_secret = answer.json["signing_secret"]
    assert new_secret != created["signing_secret"]
    stored = NotificationEndpointRepository(posts_table_name=aws.settings.POSTS_TABLE_NAME).get(
        "alice", created["endpoint_id"]
    )
    assert stored is not None
    now = clock.now()
    assert stored.signing_secrets(now) == [new_secret, created["signing_secret"]]
    later = now + timedelta(seconds=aws.settings.SECRET_OVERLAP_SECONDS + 1)
    assert stored.signing_secrets(later) == [new_secret]


def test_rotate_endpoint_revoke_previous_only_new(
    alice: ApiClient, aws: AwsResources, clock
) -> None:  # type: ignore[no-untyped-def]
    created = _create(alice)
    answer = alice.post(f"{PATH}/{created['endpoint_id']}/rotate-secret", {"revoke_previous": True})
    stored = NotificationEndpointRepository(posts_table_name=aws.settings.POSTS_TABLE_NAME).get(
        "alice", created["endpoint_id"]
    )
    assert stored is not None
    assert stored.signing_secrets(clock.now()) == [answer.json["signing_secret"]]


def test_create_endpoint_over_cap_429_then_delete_frees_a_slot(aws: AwsResources, clock) -> None:  # type: ignore[no-untyped-def]
    settings = Settings(**{**aws.settings.model_dump(), "MAX_NOTIFICATION_ENDPOINTS_PER_USER": 2})
    install_api(settings, clock)
    alice = ApiClient("alice")
    first = _create(alice)
    _create(alice)
    refused = alice.post(PATH, ENDPOINT)
    assert refused.status == 429
    assert "MAX_NOTIFICATION_ENDPOINTS_PER_USER" in _problem(refused)["detail"]
    assert ApiClient("bob").post(PATH, ENDPOINT).status == 201  # the cap is per user
    assert alice.delete(f"{PATH}/{first['endpoint_id']}").status == 204
    assert alice.post(PATH, ENDPOINT).status == 201


def test_endpoint_id_with_bad_characters_422(alice: ApiClient) -> None:
    answer = alice.delete(f"{PATH}/not%20an%20id")
    assert answer.status in (404, 422)
    assert answer.headers["Content-Type"] == "application/problem+json"
