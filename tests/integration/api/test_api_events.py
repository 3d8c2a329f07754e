"""GET /v1/events and GET /v1/scheduled-posts/{id}/events: what the relay stored, per caller,
in order, with an opaque cursor."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.api import ApiClient
from tests.support.fixtures import AwsResources
from tests.support.outbox import RelayRig, build_relay

LATER = "2026-11-30T09:30:00Z"


@pytest.fixture
def relay(aws: AwsResources, clock: Any, promoted: Any) -> RelayRig:
    return build_relay(aws.settings, clock)


def _types(answer: Any) -> list[str]:
    return [item["event"]["type"] for item in answer.json["items"]]


def test_events_cancelled_post_trail_is_scheduled_then_cancelled(
    alice: ApiClient, relay: RelayRig
) -> None:
    sid = alice.schedule(LATER, [alice.create_channel()])["schedule_id"]
    assert alice.delete(f"/v1/scheduled-posts/{sid}").status == 200
    relay.poller.drain()
    trail = alice.get(f"/v1/scheduled-posts/{sid}/events")
    assert trail.status == 200
    assert _types(trail) == ["post.scheduled", "post.cancelled"]
    assert all(item["trace_id"] for item in trail.json["items"])


def test_events_feed_pages_with_a_cursor_and_resumes_after_new_events(
    alice: ApiClient, relay: RelayRig
) -> None:
    channel = alice.create_channel()
    first = alice.schedule(LATER, [channel])["schedule_id"]
    relay.poller.drain()
    page = alice.get("/v1/events", query={"limit": "1"})
    assert page.status == 200
    assert [i["event"]["schedule_id"] for i in page.json["items"]] == [first]
    cursor = page.json["next_cursor"]
    assert alice.get("/v1/events", query={"after": cursor}).json == {
        "items": [],
        "next_cursor": cursor,
    }
    alice.delete(f"/v1/scheduled-posts/{first}")
    relay.poller.drain()
    after = alice.get("/v1/events", query={"after": cursor})
    assert _types(after) == ["post.cancelled"]


def test_events_of_another_user_are_invisible(
    alice: ApiClient, bob: ApiClient, relay: RelayRig
) -> None:
    sid = alice.schedule(LATER, [alice.create_channel()])["schedule_id"]
    relay.poller.drain()
    assert bob.get("/v1/events").json["items"] == []
    assert bob.get(f"/v1/scheduled-posts/{sid}/events").status == 404
    cursor = alice.get("/v1/events").json["next_cursor"]
    assert bob.get("/v1/events", query={"after": cursor}).status == 400


def test_events_feed_refuses_a_posts_list_cursor_and_a_bad_limit(alice: ApiClient) -> None:
    assert alice.get("/v1/events", query={"after": "abc.def"}).status == 400
    assert alice.get("/v1/events", query={"limit": "0"}).status == 422
