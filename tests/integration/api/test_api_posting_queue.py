"""Posting schedules and the queue: ``next_free_slot`` takes the earliest free slot, once."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest
from moto.dynamodb.responses import DynamoHandler

from tests.support.api import ApiClient

# START is Sunday 2026-11-29 12:00Z. Berlin is UTC+1 in winter: 09:00 local is 08:00Z.
TUE_THU_0900 = {
    "timezone": "Europe/Berlin",
    "slots": [{"days": ["tue", "thu"], "times": ["09:00"]}],
}
WEEK = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
NEXT_FIVE = [
    "2026-12-01T08:00:00.000Z",
    "2026-12-03T08:00:00.000Z",
    "2026-12-08T08:00:00.000Z",
    "2026-12-10T08:00:00.000Z",
    "2026-12-15T08:00:00.000Z",
]


def _queued(client: ApiClient, channels: list[str], text: str = "q") -> dict:
    answer = client.post(
        "/v1/scheduled-posts",
        {"content": text, "publish_at": "next_free_slot", "channel_ids": channels},
    )
    return {**answer.json, "http": answer.status}


@pytest.fixture
def channel(alice: ApiClient) -> str:
    cid = alice.create_channel()
    assert alice.request("PUT", f"/v1/channels/{cid}/posting-schedule", TUE_THU_0900).status == 200
    return cid


def test_a_posting_schedule_is_stored_and_previews_its_next_slots(
    alice: ApiClient, channel: str
) -> None:
    answer = alice.get(f"/v1/channels/{channel}/posting-schedule")
    assert answer.status == 200
    assert answer.json["timezone"] == "Europe/Berlin"
    assert answer.json["slots"] == [{"days": ["tue", "thu"], "times": ["09:00"]}]
    assert answer.json["next_slots"] == NEXT_FIVE


def test_five_queued_posts_fill_the_next_five_slots_in_order(
    alice: ApiClient, channel: str
) -> None:
    taken = [_queued(alice, [channel], f"q{i}") for i in range(5)]
    assert [t["http"] for t in taken] == [201] * 5
    assert [t["publish_at"] for t in taken] == NEXT_FIVE
    assert [t["queue_slot"] for t in taken] == NEXT_FIVE

    queue = alice.get(f"/v1/channels/{channel}/queue?count=6").json["slots"]
    assert [s["at"] for s in queue][:5] == NEXT_FIVE
    assert [s["schedule_id"] for s in queue] == [t["schedule_id"] for t in taken] + [None]
    assert queue[0]["local_time"] == "2026-12-01T09:00:00+01:00"


def test_the_queue_lists_only_slots_within_the_30_day_horizon(
    alice: ApiClient, channel: str
) -> None:
    # START + 30 days is 2026-12-29 12:00Z: the Tuesday/Thursday slots up to then are 9; the
    # 10th (Dec 31) cannot be taken yet, so it is not listed as free
    queue = alice.get(f"/v1/channels/{channel}/queue?count=20").json["slots"]
    assert [s["at"] for s in queue][-1] == "2026-12-29T08:00:00.000Z"
    assert len(queue) == 9
    assert [_queued(alice, [channel])["http"] for _ in range(10)] == [201] * 9 + [409]


def test_cancelling_a_queued_post_frees_its_slot_for_the_next(
    alice: ApiClient, channel: str
) -> None:
    first, second = _queued(alice, [channel]), _queued(alice, [channel])
    assert alice.delete(f"/v1/scheduled-posts/{first['schedule_id']}").status == 200
    queue = alice.get(f"/v1/channels/{channel}/queue?count=2").json["slots"]
    assert [s["schedule_id"] for s in queue] == [None, second["schedule_id"]]
    assert _queued(alice, [channel])["publish_at"] == NEXT_FIVE[0]


def test_rescheduling_a_queued_post_leaves_the_queue_and_frees_its_slot(
    alice: ApiClient, channel: str
) -> None:
    post = _queued(alice, [channel])
    moved = alice.patch(
        f"/v1/scheduled-posts/{post['schedule_id']}", {"publish_at": "2026-12-02T10:00:00Z"}
    )
    assert moved.status == 200
    assert moved.json["queue_slot"] is None
    assert _queued(alice, [channel])["publish_at"] == NEXT_FIVE[0]


def test_a_slot_left_by_a_lost_release_is_taken_over(
    alice: ApiClient, channel: str, tables
) -> None:
    """A cancelled post whose slot was never released (the release is best effort) does not
    keep the slot: the next reservation finds it stale."""
    post = _queued(alice, [channel])
    tables.set_post(post["schedule_id"], status="cancelled")  # cancelled, slot still reserved
    assert _queued(alice, [channel])["publish_at"] == NEXT_FIVE[0]


def test_a_post_with_two_channels_takes_the_earliest_slot_free_in_both(alice: ApiClient) -> None:
    a, b = alice.create_channel("a"), alice.create_channel("b")
    alice.request("PUT", f"/v1/channels/{a}/posting-schedule", TUE_THU_0900)
    thursdays = {"timezone": "Europe/Berlin", "slots": [{"days": ["thu"], "times": ["09:00"]}]}
    alice.request("PUT", f"/v1/channels/{b}/posting-schedule", thursdays)
    assert _queued(alice, [a])["publish_at"] == NEXT_FIVE[0]  # a's Tuesday, b has none
    both = _queued(alice, [a, b])
    assert both["publish_at"] == NEXT_FIVE[1]  # the first Thursday
    assert _queued(alice, [b])["publish_at"] == NEXT_FIVE[3]  # b's next Thursday


def test_twenty_concurrent_queued_posts_take_twenty_distinct_slots(
    alice: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each DynamoDB request is atomic, as in AWS (moto's handling is serialised, only that)."""
    channel = alice.create_channel()
    daily = {"timezone": "Europe/Berlin", "slots": [{"days": list(WEEK), "times": ["09:00"]}]}
    alice.request("PUT", f"/v1/channels/{channel}/posting-schedule", daily)
    lock = threading.Lock()
    original = DynamoHandler.call_action

    def atomic(self):  # type: ignore[no-untyped-def]
        with lock:
            return original(self)

    monkeypatch.setattr(DynamoHandler, "call_action", atomic)
    start = threading.Barrier(20)

    def one(i: int) -> dict:
        start.wait()
        return _queued(alice, [channel], f"c{i}")

    with ThreadPoolExecutor(max_workers=20) as pool:
        taken = list(pool.map(one, range(20)))
    assert [t["http"] for t in taken] == [201] * 20, [t.get("detail") for t in taken]
    slots = [t["publish_at"] for t in taken]
    assert len(set(slots)) == 20
    queue = alice.get(f"/v1/channels/{channel}/queue?count=20").json["slots"]
    assert sorted(slots) == [s["at"] for s in queue]
    assert {s["schedule_id"] for s in queue} == {t["schedule_id"] for t in taken}


def test_a_full_queue_answers_409_queue_full_and_creates_nothing(alice: ApiClient) -> None:
    cid = alice.create_channel()
    weekly = {"timezone": "UTC", "slots": [{"days": ["mon"], "times": ["10:00"]}]}
    alice.request("PUT", f"/v1/channels/{cid}/posting-schedule", weekly)
    taken = [_queued(alice, [cid]) for _ in range(6)]  # Mondays within 30 days of Nov 29: 5
    assert [t["http"] for t in taken] == [201] * 5 + [409]
    assert taken[-1]["type"] == "/problems/queue-full"
    assert "MAX_SCHEDULE_AHEAD_DAYS" in taken[-1]["detail"]
    assert len(alice.get("/v1/scheduled-posts").json["items"]) == 5


def test_next_free_slot_without_a_posting_schedule_is_422_naming_the_channel(
    alice: ApiClient,
) -> None:
    cid = alice.create_channel()
    answer = alice.post(
        "/v1/scheduled-posts",
        {"content": "q", "publish_at": "next_free_slot", "channel_ids": [cid]},
    )
    assert answer.status == 422
    assert answer.json["errors"][0]["loc"] == ["body", "channel_ids", 0]
    assert answer.json["errors"][0]["type"] == "no_posting_schedule"


def test_post_now_schedules_at_the_current_instant(alice: ApiClient, clock) -> None:
    cid = alice.create_channel()
    answer = alice.post(
        "/v1/scheduled-posts", {"content": "now", "publish_at": "now", "channel_ids": [cid]}
    )
    assert answer.status == 201
    assert answer.json["publish_at"] == "2026-11-29T12:00:00.000Z"
    assert answer.json["queue_slot"] is None


def test_another_users_channel_is_404_for_its_schedule_and_queue(
    alice: ApiClient, bob: ApiClient, channel: str
) -> None:
    for method, path in (
        ("GET", f"/v1/channels/{channel}/posting-schedule"),
        ("PUT", f"/v1/channels/{channel}/posting-schedule"),
        ("DELETE", f"/v1/channels/{channel}/posting-schedule"),
        ("GET", f"/v1/channels/{channel}/queue"),
    ):
        body = TUE_THU_0900 if method == "PUT" else None
        assert bob.request(method, path, body).status == 404, (method, path)


def test_bad_posting_schedules_are_422_naming_the_field(alice: ApiClient) -> None:
    cid = alice.create_channel()
    path = f"/v1/channels/{cid}/posting-schedule"
    bad_zone = alice.request("PUT", path, {**TUE_THU_0900, "timezone": "Mars/Base"})
    assert bad_zone.status == 422
    assert bad_zone.json["errors"][0]["loc"] == ["body", "timezone"]
    bad_time = alice.request(
        "PUT", path, {"timezone": "UTC", "slots": [{"days": ["mon"], "times": ["25:00"]}]}
    )
    assert bad_time.status == 422
    assert alice.get(path).status == 404  # nothing stored
    assert alice.get(f"/v1/channels/{cid}/queue?count=51").status == 422


def test_a_slot_in_the_spring_forward_gap_is_at_the_first_valid_instant(
    alice: ApiClient, clock
) -> None:
    """DST rule: 02:30 Europe/Berlin does not exist on 2027-03-28; the slot is 03:00 CEST."""
    clock.travel_to(datetime(2027, 3, 27, 12, 0, tzinfo=UTC))
    cid = alice.create_channel()
    nightly = {"timezone": "Europe/Berlin", "slots": [{"days": ["sun"], "times": ["02:30"]}]}
    alice.request("PUT", f"/v1/channels/{cid}/posting-schedule", nightly)
    first = alice.get(f"/v1/channels/{cid}/queue?count=2").json["slots"]
    assert [s["at"] for s in first] == ["2027-03-28T01:00:00.000Z", "2027-04-04T00:30:00.000Z"]
    assert first[0]["local_time"] == "2027-03-28T03:00:00+02:00"
