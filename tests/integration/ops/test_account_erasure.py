"""Account export and erasure (issue 17 item 15), on the fire path's moto tables: after
``DELETE /v1/me`` a scan of every table finds nothing of the user, and a dispatch message
already in the queue publishes nothing; with the outbox relay running, the event feed is empty
after ``done`` and stays empty, and nothing of the user reaches the bus once the erasure
started."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import boto3

from functions.materializer.handler import materialize_deps
from scheduled_posts.logic.materialize import materialize_due
from scheduled_posts.models.post import PostStatus
from tests.integration.dispatch.conftest import FirePath
from tests.integration.ops.conftest import set_rate_limit
from tests.support.api import ApiClient
from tests.support.outbox import RelayRig, build_relay

FAR = "2026-11-30T09:30:00Z"


def _scan_all(fire: FirePath) -> list[dict[str, Any]]:
    dynamodb = boto3.resource("dynamodb", region_name="us-east-1")
    names = (
        fire.settings.POSTS_TABLE_NAME,
        fire.settings.DUE_INDEX_TABLE_NAME,
        fire.settings.IDEMPOTENCY_TABLE_NAME,
    )
    items: list[dict[str, Any]] = []
    for name in names:
        items += dynamodb.Table(name).scan()["Items"]
    return items


def _alice_world(fire: FirePath) -> dict[str, Any]:
    """Alice: two channels (one rate-limited), a published post (attempts, delivery record,
    rate item), a post created with an Idempotency-Key, a far scheduled post, a cancelled one,
    an active recurring schedule created with an Idempotency-Key (occurrences, index entry,
    open-series counter, idempotency record), a notification endpoint.
    Bob: a channel and a post, which must survive."""
    fire.channel("ach-one")
    fire.channel("ach-two")
    set_rate_limit(fire, "ach-one", 100)
    published = fire.post(fire.clock.now() + timedelta(seconds=5), ["ach-one", "ach-two"])
    fire.driver.run_for(15)
    assert fire.read(published).status == PostStatus.PUBLISHED
    alice = ApiClient("alice")
    keyed = alice.post(
        "/v1/scheduled-posts",
        {"content": "secret plans", "publish_at": FAR, "channel_ids": ["ach-one"]},
        headers={"Idempotency-Key": "k-1"},
    ).json["schedule_id"]
    far = alice.schedule(FAR, ["ach-two"])["schedule_id"]
    gone = alice.schedule(FAR, ["ach-two"])["schedule_id"]
    alice.delete(f"/v1/scheduled-posts/{gone}")
    series = alice.post(
        "/v1/recurring-schedules",
        {
            "content": "daily plans",
            "channel_ids": ["ach-one"],
            "timezone": "UTC",
            "cron": "0 9 * * *",
        },
        headers={"Idempotency-Key": "k-2"},
    ).json["series_id"]
    endpoint = alice.post(
        "/v1/notification-endpoints",
        {"url": "https://hooks.example.com/alice-notify", "event_types": ["post.published"]},
    ).json["endpoint_id"]
    fire.channel("bch-one", owner="bob")
    bobs = fire.post(fire.clock.now() + timedelta(days=1), ["bch-one"], owner="bob")
    return {
        "ids": [published.schedule_id, keyed, far, gone, "ach-one", "ach-two", series, endpoint],
        "bob": bobs.schedule_id,
        "series": series,
        "endpoint": endpoint,
    }


def _mentions(items: list[dict[str, Any]], needles: list[str]) -> list[dict[str, Any]]:
    return [i for i in items if any(n in repr(i) for n in needles)]


class _RecordingBus:
    """Stands in for the bus (and the notification fan-out): the owners of what was sent."""

    def __init__(self) -> None:
        self.owners: list[str] = []

    def put(self, events: list[Any]) -> None:
        self.owners += [e.owner for e in events]


def _relay(fire: FirePath) -> tuple[RelayRig, _RecordingBus, _RecordingBus]:
    bus, notified = _RecordingBus(), _RecordingBus()
    rig = build_relay(fire.settings, fire.clock, bus=bus)
    rig.relay.notify = notified.put
    return rig, bus, notified


def _feed(client: ApiClient) -> list[dict[str, Any]]:
    answer = client.get("/v1/events", query={"limit": "100"})
    assert answer.status == 200
    return [item["event"] for item in answer.json["items"]]


def test_erase_account_with_the_relay_empties_the_feed_and_it_stays_empty(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    rig, bus, notified = _relay(fire)
    world = _alice_world(fire)
    rig.poller.drain()
    alice = ApiClient("alice")
    assert len(_feed(alice)) > 5 and alice.get(f"/v1/scheduled-posts/{world['ids'][0]}/events")
    # Committed before the erasure, relayed only after its last sweep of the feed.
    assert alice.delete(f"/v1/scheduled-posts/{world['ids'][2]}").status == 200
    bus.owners.clear()
    notified.owners.clear()

    assert alice.delete("/v1/me").json == {"status": "done"}
    rig.poller.drain()
    fire.clock.advance(60)
    fire.driver.run_for(60)
    rig.poller.drain()

    assert _feed(alice) == []
    assert _mentions(_scan_all(fire), ["alice", *world["ids"]]) == []
    assert "alice" not in bus.owners + notified.owners
    assert [e["schedule_id"] for e in _feed(ApiClient("bob"))] == [world["bob"]]


def test_erase_account_relay_overtaken_by_the_erasure_takes_its_items_back(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    rig, bus, _ = _relay(fire)
    fire.channel("ach-one")
    alice = ApiClient("alice")
    alice.schedule(FAR, ["ach-one"])
    put = rig.feed.put

    def erase_then_put(*args: Any, **kwargs: Any) -> None:
        # The relay took its position; the whole erasure (and its sweep) runs before the put.
        rig.feed.put = put  # type: ignore[method-assign]
        assert alice.delete("/v1/me").json == {"status": "done"}
        put(*args, **kwargs)

    rig.feed.put = erase_then_put  # type: ignore[method-assign]
    rig.poller.drain()

    assert _feed(alice) == []
    assert _mentions(_scan_all(fire), ["alice"]) == []
    assert bus.owners == []


def test_erase_account_then_new_posts_reach_the_feed_again(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    rig, _, _ = _relay(fire)
    fire.channel("ach-one")
    alice = ApiClient("alice")
    alice.schedule(FAR, ["ach-one"])
    rig.poller.drain()
    cursor = alice.get("/v1/events").json["next_cursor"]
    assert cursor is not None
    assert alice.delete("/v1/me").json == {"status": "done"}
    rig.poller.drain()
    fire.clock.advance(1)

    fire.channel("ach-two")
    again = alice.schedule(FAR, ["ach-two"])["schedule_id"]
    rig.poller.drain()

    assert [(e["type"], e["schedule_id"]) for e in _feed(alice)] == [("post.scheduled", again)]
    fire.clock.advance(300)  # the old cursor's gap settles
    after = alice.get("/v1/events", query={"after": cursor}).json["items"]
    assert [i["event"]["schedule_id"] for i in after] == [again]


def test_erase_account_leaves_nothing_of_the_user_in_any_table(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    world = _alice_world(fire)
    needles = ["alice", *world["ids"]]
    assert len(_mentions(_scan_all(fire), needles)) > 10  # the scan does see alice's items

    answer = ApiClient("alice").delete("/v1/me")

    assert (answer.status, answer.json) == (202, {"status": "done"})
    assert ApiClient("alice").get("/v1/me/erasure").json == {"status": "done"}
    assert _mentions(_scan_all(fire), needles) == []
    assert _mentions(_scan_all(fire), ["bob", world["bob"]]) != []


def test_erase_account_ends_series_so_the_materializer_writes_nothing(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    world = _alice_world(fire)
    alice = ApiClient("alice")
    assert alice.get("/v1/scheduled-posts", query={"series_id": world["series"]}).json["items"]

    assert alice.delete("/v1/me").json == {"status": "done"}
    fire.clock.advance(3 * 86400)
    materialize_due(deps=materialize_deps(fire.settings, fire.clock))

    assert _mentions(_scan_all(fire), ["alice", *world["ids"]]) == []


def test_erase_account_queued_message_publishes_nothing(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    fire.channel("ach-one")
    due = fire.post(fire.clock.now() + timedelta(seconds=30), ["ach-one"])
    fire.driver.run_for(1)  # swept: its dispatch message waits in the delay queue

    assert ApiClient("alice").delete("/v1/me").status == 202
    fire.driver.run_for(60)

    assert fire.receiver.requests_for(f"{due.schedule_id}:ach-one") == []


def test_erase_account_interrupted_is_pending_then_resumed(api_fire, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    world = _alice_world(fire)
    from scheduled_posts.data.account import AccountStore

    original = AccountStore.delete_owner_items

    def fail(self: AccountStore, owner: str) -> None:
        raise RuntimeError("throttled (test)")

    monkeypatch.setattr(AccountStore, "delete_owner_items", fail)
    assert ApiClient("alice").delete("/v1/me").status == 500
    assert ApiClient("alice").get("/v1/me/erasure").json == {"status": "pending"}

    monkeypatch.setattr(AccountStore, "delete_owner_items", original)
    assert ApiClient("alice").delete("/v1/me").json == {"status": "done"}
    assert _mentions(_scan_all(fire), ["alice", *world["ids"]]) == []


def test_export_account_has_posts_attempts_and_channels_without_secrets(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    world = _alice_world(fire)

    answer = ApiClient("alice").get("/v1/me/export")

    document = answer.json
    assert answer.status == 200 and document["subject"] == "alice"
    series = [p for p in document["posts"] if p["series_id"] == world["series"]]
    assert series and all(p["status"] == "scheduled" for p in series)  # its occurrences
    assert sorted(p["schedule_id"] for p in document["posts"] if p not in series) == sorted(
        world["ids"][:4]
    )
    assert [s["series_id"] for s in document["recurring_schedules"]] == [world["series"]]
    assert document["recurring_schedules"][0]["status"] == "active"
    assert document["recurring_schedules"][0]["next_occurrences"]
    published = next(p for p in document["posts"] if p["schedule_id"] == world["ids"][0])
    assert {a["channel_id"] for a in published["attempts"]} == {"ach-one", "ach-two"}
    assert sorted(c["channel_id"] for c in document["channels"]) == ["ach-one", "ach-two"]
    assert [e["endpoint_id"] for e in document["notification_endpoints"]] == [world["endpoint"]]
    assert document["notification_endpoints"][0]["url"] == "https://hooks.example.com/alice-notify"
    assert "whsec_" not in answer.raw["body"] and "signing_secret" not in answer.raw["body"]
    assert world["bob"] not in answer.raw["body"]
