"""GET /v1/events and GET /v1/scheduled-posts/{id}/events: what the relay stored, per caller,
in order, with an opaque cursor."""

from __future__ import annotations

from typing import Any

import boto3
import pytest

from scheduled_posts.feed_order import SETTLE_SECONDS
from scheduled_posts.logic.cursor import codec_for
from scheduled_posts.logic.relay import StreamChange
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


def _post_change(aws: AwsResources, schedule_id: str, sequence: str) -> StreamChange:
    """The insert record of a stored post (as the stream gives it, a made-up sequence)."""
    table = boto3.resource("dynamodb", region_name="us-east-1").Table(aws.settings.POSTS_TABLE_NAME)
    item = table.get_item(Key={"pk": f"POST#{schedule_id}", "sk": "POST"})["Item"]
    return StreamChange(sequence_number=sequence, trace_id=f"t-{sequence}", old=None, new=item)


def _follow(client: ApiClient, cursor: str | None) -> tuple[list[str], str | None]:
    """One poll of the feed after ``cursor``: the event ids and the next cursor."""
    query = {"after": cursor} if cursor else {}
    answer = client.get("/v1/events", query=query)
    assert answer.status == 200
    return [i["event"]["event_id"] for i in answer.json["items"]], answer.json["next_cursor"]


def test_events_poller_following_the_cursor_sees_events_relayed_out_of_time_order(
    alice: ApiClient, relay: RelayRig, aws: AwsResources, clock: Any
) -> None:
    # Given two posts created a second apart, whose records the relay handles newest first
    # (two stream shards; the earlier one's relay is late).
    channel = alice.create_channel()
    early = alice.schedule(LATER, [channel])["schedule_id"]
    clock.advance(1)
    late = alice.schedule(LATER, [channel])["schedule_id"]
    seen: list[str] = []
    (late_event,) = relay.relay.relay(_post_change(aws, late, "200"))
    ids, cursor = _follow(alice, None)
    seen += ids
    # When the earlier-stamped event is stored after the poller read past the later one
    (early_event,) = relay.relay.relay(_post_change(aws, early, "100"))
    ids, cursor = _follow(alice, cursor)
    seen += ids
    # Then the poller sees both, each once
    assert seen == [late_event.event_id, early_event.event_id]
    assert _follow(alice, cursor) == ([], cursor)


def test_events_poller_waits_at_a_position_taken_but_not_yet_stored(
    alice: ApiClient, relay: RelayRig, aws: AwsResources
) -> None:
    channel = alice.create_channel()
    ids = [alice.schedule(LATER, [channel])["schedule_id"] for _ in range(3)]
    (first,) = relay.relay.relay(_post_change(aws, ids[0], "100"))
    seen, cursor = _follow(alice, None)
    put = relay.feed.put
    middle: list[list[str]] = []

    def overtaken(*args: Any, **kwargs: Any) -> None:
        # Another shard's relay takes the next position and stores it first.
        relay.feed.put = put  # type: ignore[method-assign]
        relay.relay.relay(_post_change(aws, ids[2], "300"))
        middle.append(_follow(alice, cursor)[0])
        put(*args, **kwargs)

    relay.feed.put = overtaken  # type: ignore[method-assign]
    (second,) = relay.relay.relay(_post_change(aws, ids[1], "200"))
    after, _ = _follow(alice, cursor)

    assert seen == [first.event_id] and middle == [[]]
    assert len(after) == 2 and after[0] == second.event_id


def test_events_poller_passes_a_position_never_stored_once_it_settled(
    alice: ApiClient, relay: RelayRig, aws: AwsResources, clock: Any
) -> None:
    channel = alice.create_channel()
    ids = [alice.schedule(LATER, [channel])["schedule_id"] for _ in range(2)]
    relay.relay.relay(_post_change(aws, ids[0], "100"))
    _, cursor = _follow(alice, None)
    put = relay.feed.put

    def crash(*args: Any, **kwargs: Any) -> None:
        relay.feed.put = put  # type: ignore[method-assign]
        raise ConnectionError("relay died after taking its position")

    relay.feed.put = crash  # type: ignore[method-assign]
    change = _post_change(aws, ids[1], "200")
    with pytest.raises(ConnectionError):
        relay.relay.relay(change)
    (event,) = relay.relay.relay(change)  # the stream's retry takes a new position
    assert _follow(alice, cursor) == ([], cursor)
    clock.advance(SETTLE_SECONDS)
    assert _follow(alice, cursor)[0] == [event.event_id]


def test_events_repeated_record_stores_one_feed_item(
    alice: ApiClient, relay: RelayRig, aws: AwsResources
) -> None:
    sid = alice.schedule(LATER, [alice.create_channel()])["schedule_id"]
    change = _post_change(aws, sid, "100")
    relay.relay.relay(change)
    relay.relay.relay(change)
    assert len(_follow(alice, None)[0]) == 1
    assert len(alice.get(f"/v1/scheduled-posts/{sid}/events").json["items"]) == 1


def test_events_cursor_of_the_earlier_feed_order_is_a_clear_400(
    alice: ApiClient, aws: AwsResources
) -> None:
    old = codec_for(aws.settings).encode(
        owner=alice.sub, last_key="2026-11-29T12:00:00.000Z#0000000100", query="events"
    )
    answer = alice.get("/v1/events", query={"after": old})
    assert answer.status == 400
    assert "earlier order" in answer.json["detail"]
