"""Another user's post is indistinguishable from a missing one, for every verb."""

from __future__ import annotations

import pytest

from tests.support.api import ApiClient

MISSING = "00000000-0000-4000-8000-000000000000"


@pytest.fixture
def alice_post(alice: ApiClient) -> dict:
    return alice.schedule("2026-11-30T09:30:00Z", [alice.create_channel()])


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("GET", "", None),
        ("GET", "/attempts", None),
        ("PATCH", "", {"content": "mine now"}),
        ("DELETE", "", None),
    ],
)
def test_other_users_post_is_404_like_a_missing_one(
    alice: ApiClient, bob: ApiClient, alice_post: dict, tables, method: str, suffix: str, body
) -> None:
    theirs = bob.request(method, f"/v1/scheduled-posts/{alice_post['schedule_id']}{suffix}", body)
    missing = bob.request(method, f"/v1/scheduled-posts/{MISSING}{suffix}", body)
    assert theirs.status == missing.status == 404
    assert theirs.json == missing.json
    item = tables.post_item(alice_post["schedule_id"])
    assert (item["status"], item["version"], item["content"]) == ("scheduled", 1, "hello")


def test_event_without_sub_is_401_problem(alice_post: dict) -> None:
    answer = ApiClient(None).get(f"/v1/scheduled-posts/{alice_post['schedule_id']}")
    assert answer.status == 401
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert answer.json["status"] == 401
