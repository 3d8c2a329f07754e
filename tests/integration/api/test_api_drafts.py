"""Drafts: a post without ``publish_at`` is a draft, listed, edited, never dispatched, counted
against ``MAX_DRAFTS`` (not ``MAX_PENDING_POSTS``), scheduled by ``PATCH`` with a
``publish_at`` through the create's path (decision "Drafts")."""

from __future__ import annotations

import pytest

from scheduled_posts.logic.sweep import Sweeper
from tests.support.api import ApiClient, install_api

# START is Sunday 2026-11-29 12:00Z.
SOON = "2026-11-29T12:30:00.000Z"
FAR = "2026-12-05T10:00:00.000Z"
LIMIT = 2


def _draft(client: ApiClient, channel: str, text: str = "idea") -> dict:
    answer = client.post("/v1/scheduled-posts", {"content": text, "channel_ids": [channel]})
    assert answer.status == 201, answer.json
    return dict(answer.json)


@pytest.fixture
def channel(alice: ApiClient) -> str:
    return alice.create_channel()


@pytest.fixture
def limited(aws, clock, promoted) -> ApiClient:
    settings = aws.settings.model_copy(update={"MAX_DRAFTS": LIMIT, "MAX_PENDING_POSTS": LIMIT})
    install_api(settings, clock)
    return ApiClient("alice")


def test_a_post_without_publish_at_is_a_draft_with_no_due_entry(
    alice: ApiClient, channel: str, tables
) -> None:
    draft = _draft(alice, channel)
    assert draft["status"] == "draft"
    assert draft["publish_at"] is None
    assert draft["version"] == 1
    assert tables.due_items() == []
    read = alice.get(f"/v1/scheduled-posts/{draft['schedule_id']}")
    assert read.status == 200
    assert read.json["status"] == "draft"


def test_drafts_are_listed_only_with_the_draft_filter(alice: ApiClient, channel: str) -> None:
    draft = _draft(alice, channel)
    scheduled = alice.schedule(FAR, [channel])
    drafts = alice.get("/v1/scheduled-posts", query={"status": "draft"}).json["items"]
    assert [d["schedule_id"] for d in drafts] == [draft["schedule_id"]]
    every = alice.get("/v1/scheduled-posts").json["items"]
    assert [p["schedule_id"] for p in every] == [scheduled["schedule_id"]]


def test_a_draft_is_edited_and_stays_a_draft(alice: ApiClient, channel: str, tables) -> None:
    draft = _draft(alice, channel)
    edited = alice.patch(f"/v1/scheduled-posts/{draft['schedule_id']}", {"content": "better"})
    assert edited.status == 200, edited.json
    assert (edited.json["status"], edited.json["content"]) == ("draft", "better")
    assert edited.json["version"] == 2
    assert tables.due_items() == []


def test_a_draft_is_never_dispatched_even_when_the_sweeper_passes_its_time(
    alice: ApiClient, channel: str, clock, aws
) -> None:
    draft = _draft(alice, channel)
    alice.schedule(SOON, [channel])  # the control: the sweeper does send this one
    clock.advance(3600)
    result = Sweeper(aws.settings, clock=clock).sweep()
    assert result.enqueued == 1
    read = alice.get(f"/v1/scheduled-posts/{draft['schedule_id']}").json
    assert read["status"] == "draft"


@pytest.mark.parametrize("publish_at", [FAR, "2026-12-05T11:00:00+01:00"])
def test_patch_with_an_instant_schedules_the_draft(
    alice: ApiClient, channel: str, tables, publish_at: str
) -> None:
    draft = _draft(alice, channel)
    answer = alice.patch(f"/v1/scheduled-posts/{draft['schedule_id']}", {"publish_at": publish_at})
    assert answer.status == 200, answer.json
    assert (answer.json["status"], answer.json["publish_at"]) == ("scheduled", FAR)
    assert answer.json["version"] == 2
    assert [i["schedule_id"] for i in tables.due_items()] == [draft["schedule_id"]]
    pending = tables.posts.get_item(Key={"pk": "OWNER#alice", "sk": "PENDING"})["Item"]
    drafts = tables.posts.get_item(Key={"pk": "OWNER#alice", "sk": "DRAFTS"})["Item"]
    assert (pending["pending"], drafts["drafts"]) == (1, 0)


def test_patch_with_now_schedules_the_draft_and_promotes_it(
    alice: ApiClient, channel: str, promoted
) -> None:
    draft = _draft(alice, channel)
    answer = alice.patch(f"/v1/scheduled-posts/{draft['schedule_id']}", {"publish_at": "now"})
    assert answer.status == 200, answer.json
    assert answer.json["status"] == "scheduled"
    assert answer.json["publish_at"] == "2026-11-29T12:00:00.000Z"
    assert [e.schedule_id for e in promoted.entries] == [draft["schedule_id"]]


def test_patch_with_next_free_slot_takes_the_queue_slot(alice: ApiClient, channel: str) -> None:
    schedule = {"timezone": "Europe/Berlin", "slots": [{"days": ["tue"], "times": ["09:00"]}]}
    assert alice.request("PUT", f"/v1/channels/{channel}/posting-schedule", schedule).status == 200
    draft = _draft(alice, channel)
    answer = alice.patch(
        f"/v1/scheduled-posts/{draft['schedule_id']}", {"publish_at": "next_free_slot"}
    )
    assert answer.status == 200, answer.json
    assert answer.json["publish_at"] == answer.json["queue_slot"] == "2026-12-01T08:00:00.000Z"
    queue = alice.get(f"/v1/channels/{channel}/queue?count=1").json["slots"]
    assert queue[0]["schedule_id"] == draft["schedule_id"]


def _thread_draft(client: ApiClient, channel: str) -> dict:
    answer = client.post(
        "/v1/scheduled-posts",
        {
            "content": "one",
            "channel_ids": [channel],
            "parts": [{"content": "two"}, {"content": "three"}],
            "first_comment": {"content": "comment", "delay_seconds": 90},
        },
    )
    assert answer.status == 201, answer.json
    return dict(answer.json)


def test_a_draft_edit_replaces_its_thread_and_removes_its_first_comment(
    alice: ApiClient, channel: str
) -> None:
    draft = _thread_draft(alice, channel)
    path = f"/v1/scheduled-posts/{draft['schedule_id']}"
    edited = alice.patch(path, {"parts": [{"content": "three"}], "first_comment": None})
    assert edited.status == 200, edited.json
    read = alice.get(path).json
    assert (read["parts"], read["first_comment"]) == ([{"content": "three", "media_ids": []}], None)
    assert read["status"] == "draft"


def test_scheduling_a_draft_takes_the_thread_the_patch_gives_after_its_rules(
    alice: ApiClient, channel: str
) -> None:
    draft = _thread_draft(alice, channel)
    path = f"/v1/scheduled-posts/{draft['schedule_id']}"
    blank = alice.patch(path, {"publish_at": FAR, "parts": [{"content": "two"}, {"content": " "}]})
    assert blank.status == 422, blank.json
    assert [e["loc"] for e in blank.json["errors"]] == [["body", "parts", 1, "content"]]
    answer = alice.patch(
        path, {"publish_at": FAR, "parts": [{"content": "2"}], "first_comment": {"content": "c"}}
    )
    assert answer.status == 200, answer.json
    read = alice.get(path).json
    assert read["status"] == "scheduled"
    assert read["parts"] == [{"content": "2", "media_ids": []}]
    assert read["first_comment"] == {"content": "c", "delay_seconds": 0}


def test_the_draft_limit_is_a_429_problem(limited: ApiClient) -> None:
    channel = limited.create_channel()
    for _ in range(LIMIT):
        _draft(limited, channel)
    answer = limited.post("/v1/scheduled-posts", {"content": "x", "channel_ids": [channel]})
    assert answer.status == 429
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert "MAX_DRAFTS" in answer.json["detail"]


def test_a_deleted_draft_frees_its_place_under_the_limit(limited: ApiClient) -> None:
    channel = limited.create_channel()
    first = _draft(limited, channel)
    _draft(limited, channel)
    gone = limited.delete(f"/v1/scheduled-posts/{first['schedule_id']}")
    assert gone.status == 204, gone.json.get("errors")
    assert limited.get(f"/v1/scheduled-posts/{first['schedule_id']}").status == 404
    _draft(limited, channel)


def test_drafts_do_not_count_against_max_pending_posts(limited: ApiClient) -> None:
    channel = limited.create_channel()
    for _ in range(LIMIT):
        _draft(limited, channel)
    for _ in range(LIMIT):
        limited.schedule(FAR, [channel])


def test_scheduling_a_draft_over_max_pending_posts_is_429_and_keeps_the_draft(
    limited: ApiClient, tables
) -> None:
    channel = limited.create_channel()
    draft = _draft(limited, channel)
    for _ in range(LIMIT):
        limited.schedule(FAR, [channel])
    answer = limited.patch(f"/v1/scheduled-posts/{draft['schedule_id']}", {"publish_at": FAR})
    assert answer.status == 429
    assert "MAX_PENDING_POSTS" in answer.json["detail"]
    assert limited.get(f"/v1/scheduled-posts/{draft['schedule_id']}").json["status"] == "draft"
    assert len(tables.due_items()) == LIMIT


def test_another_users_draft_is_404(alice: ApiClient, bob: ApiClient, channel: str) -> None:
    draft = _draft(alice, channel)
    path = f"/v1/scheduled-posts/{draft['schedule_id']}"
    assert bob.get(path).status == 404
    assert bob.patch(path, {"content": "mine"}).status == 404
    assert bob.delete(path).status == 404
    assert alice.get(path).json["content"] == "idea"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"publish_at": "2026-11-28T10:00:00Z"}, "publish_at"),
        ({"publish_at": "2026-12-05T10:00:00"}, "publish_at"),
        ({"content": "x" * 5001}, "content"),
        ({"channel_ids": ["not-mine"]}, "channel_ids"),
    ],
)
def test_patch_of_a_draft_with_a_bad_field_is_422_and_changes_nothing(
    alice: ApiClient, channel: str, tables, body: dict, field: str
) -> None:
    draft = _draft(alice, channel)
    path = f"/v1/scheduled-posts/{draft['schedule_id']}"
    answer = alice.patch(path, body)
    assert answer.status == 422, answer.json
    assert field in str(answer.json)
    after = alice.get(path).json
    assert (after["status"], after["version"], after["content"]) == ("draft", 1, "idea")
    assert tables.due_items() == []


def test_scheduling_a_draft_whose_channel_was_deleted_is_422(
    alice: ApiClient, channel: str, tables
) -> None:
    draft = _draft(alice, channel)
    assert alice.delete(f"/v1/channels/{channel}").status == 204
    path = f"/v1/scheduled-posts/{draft['schedule_id']}"
    answer = alice.patch(path, {"publish_at": FAR})
    assert answer.status == 422, answer.json
    assert "channel_ids" in str(answer.json)
    assert alice.get(path).json["status"] == "draft"
    assert tables.due_items() == []


def test_a_drafts_etag_is_its_version_so_if_match_edits_and_deletes_it(
    alice: ApiClient, channel: str
) -> None:
    # Every change of a draft raises its version, as for a scheduled post: the ETag is the
    # version, so a client sends back the version it read (the page does).
    draft = _draft(alice, channel)
    path = f"/v1/scheduled-posts/{draft['schedule_id']}"
    assert alice.get(path).headers["ETag"] == '"1"'
    edited = alice.patch(path, {"content": "better"}, headers={"If-Match": '"1"'})
    assert edited.status == 200, edited.json
    assert edited.headers["ETag"] == '"2"'
    stale = alice.patch(path, {"content": "worse"}, headers={"If-Match": '"1"'})
    assert stale.status == 412
    assert alice.delete(path, headers={"If-Match": '"2"'}).status == 204
