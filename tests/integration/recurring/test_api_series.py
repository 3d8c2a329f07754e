"""The recurring-schedule API (issue 13): create, read, list, edit, pause, resume, delete, and
occurrences that are ordinary posts (detached when edited or cancelled by hand)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from scheduled_posts.data.posts import PostRepository
from scheduled_posts.logic import occurrences
from tests.integration.recurring.conftest import World

SERIES = "/v1/recurring-schedules"


def test_create_series_returns_201_shape_etag_and_next_five(world: World) -> None:
    answer = world.alice.post(
        SERIES,
        {
            "content": "hi",
            "channel_ids": [world.channel],
            "timezone": "America/Los_Angeles",
            "cron": "0 3 * * *",
        },
    )

    body = answer.json
    assert answer.status == 201
    assert answer.headers["ETag"] == '"1"'
    assert (body["status"], body["version"], body["stopped_reason"]) == ("active", 1, None)
    assert body["materialized_through"] == "2026-12-01T12:00:00.000Z"
    assert [o["local_time"] for o in body["next_occurrences"]] == [
        "2026-11-30T03:00:00-08:00",
        "2026-12-01T03:00:00-08:00",
        "2026-12-02T03:00:00-08:00",
        "2026-12-03T03:00:00-08:00",
        "2026-12-04T03:00:00-08:00",
    ]


def test_create_series_first_occurrence_two_minutes_away_exists_at_once(world: World) -> None:
    series = world.create(cron="2 12 * * *")

    posts = world.posts(series["series_id"])

    assert posts[0]["publish_at"] == "2026-11-29T12:02:00.000Z"
    assert posts[0]["series_id"] == series["series_id"]
    assert posts[0]["occurrence_at"] == "2026-11-29T12:02:00.000Z"
    assert posts[0]["detached"] is False


def test_occurrence_is_an_ordinary_post(world: World) -> None:
    series = world.create()
    first = world.posts(series["series_id"])[0]

    answer = world.alice.get(f"/v1/scheduled-posts/{first['schedule_id']}")

    assert answer.status == 200
    assert answer.json["content"] == "hello"


def test_get_list_and_occurrences(world: World) -> None:
    series = world.create()
    sid = series["series_id"]

    got = world.alice.get(f"{SERIES}/{sid}")
    listed = world.alice.get(SERIES)
    occurrences = world.alice.get(f"{SERIES}/{sid}/occurrences", query={"limit": "3"})

    assert got.json == series
    assert [s["series_id"] for s in listed.json["items"]] == [sid]
    items = occurrences.json["items"]
    assert [i["status"] for i in items] == ["scheduled", "scheduled", None]
    assert items[2]["schedule_id"] is None
    assert items[0]["schedule_id"] == world.posts(sid)[0]["schedule_id"]


def test_another_users_series_is_404(world: World) -> None:
    sid = world.create()["series_id"]

    answers = [
        world.bob.get(f"{SERIES}/{sid}"),
        world.bob.patch(f"{SERIES}/{sid}", {"content": "x"}),
        world.bob.post(f"{SERIES}/{sid}/pause"),
        world.bob.delete(f"{SERIES}/{sid}"),
        world.bob.get(f"{SERIES}/{sid}/occurrences"),
    ]

    assert [a.status for a in answers] == [404] * 5
    assert world.bob.get("/v1/scheduled-posts", query={"series_id": sid}).json["items"] == []


def test_create_with_another_users_channel_is_422(world: World) -> None:
    answer = world.bob.post(SERIES, world.series_body())

    assert answer.status == 422
    assert answer.json["errors"][0]["type"] == "channel_not_found"


def test_create_over_max_series_per_user_is_422(make_world: Callable[..., World]) -> None:
    world = make_world(MAX_SERIES_PER_USER=2)
    world.create()
    world.create()

    answer = world.alice.post(SERIES, world.series_body())

    assert answer.status == 422
    assert answer.json["errors"][0]["type"] == "series_limit"


def test_deleted_series_frees_a_slot(make_world: Callable[..., World]) -> None:
    world = make_world(MAX_SERIES_PER_USER=1)
    sid = world.create()["series_id"]

    world.alice.delete(f"{SERIES}/{sid}")

    assert world.create()["status"] == "active"


def test_create_with_idempotency_key_twice_creates_one(world: World) -> None:
    body = world.series_body()
    headers = {"Idempotency-Key": "k1"}

    first = world.alice.post(SERIES, body, headers=headers)
    second = world.alice.post(SERIES, body, headers=headers)

    assert (first.status, second.status) == (201, 201)
    assert first.json["series_id"] == second.json["series_id"]
    assert len(world.alice.get(SERIES).json["items"]) == 1


def test_create_invalid_rule_is_422_like_preview(world: World) -> None:
    answer = world.alice.post(
        SERIES,
        {"content": "x", "channel_ids": [world.channel], "timezone": "EST", "cron": "0 9 31 2 *"},
    )

    assert answer.status == 422
    assert answer.json["errors"][0]["type"] == "timezone_not_iana"


def test_create_in_etc_utc_is_stored_and_shown_as_utc(world: World) -> None:
    created = world.create(timezone="Etc/UTC")
    assert created["timezone"] == "UTC"
    path = f"{SERIES}/{created['series_id']}"
    patched = world.alice.patch(path, {"timezone": "Etc/Zulu"})
    assert (patched.status, patched.json["timezone"]) == (200, "UTC")


# ------------------------------------------------------------------ edits


def test_patch_content_applies_to_not_yet_claimed_occurrences(world: World) -> None:
    sid = world.create()["series_id"]

    answer = world.alice.patch(f"{SERIES}/{sid}", {"content": "new"}, headers={"If-Match": '"1"'})

    assert answer.status == 200
    assert answer.headers["ETag"] == '"2"'
    assert {p["content"] for p in world.posts(sid, "scheduled")} == {"new"}


def test_patch_stale_if_match_is_412(world: World) -> None:
    sid = world.create()["series_id"]

    answer = world.alice.patch(f"{SERIES}/{sid}", {"content": "new"}, headers={"If-Match": '"7"'})

    assert answer.status == 412


def test_patch_rule_cancels_old_occurrences_and_materializes_new(world: World) -> None:
    sid = world.create(cron="0 9 * * *")["series_id"]

    answer = world.alice.patch(f"{SERIES}/{sid}", {"cron": "30 18 * * *"})

    assert answer.status == 200
    assert world.publish_times(sid) == [
        "2026-11-29T18:30:00.000Z",
        "2026-11-30T18:30:00.000Z",
    ]
    cancelled = world.posts(sid, "cancelled")
    assert [p["publish_at"] for p in cancelled] == [
        "2026-11-30T09:00:00.000Z",
        "2026-12-01T09:00:00.000Z",
    ]


def test_patch_rule_keeps_occurrences_the_new_rule_still_has(world: World) -> None:
    sid = world.create(cron="0 9 * * *")["series_id"]
    before = {p["schedule_id"] for p in world.posts(sid, "scheduled")}

    world.alice.patch(f"{SERIES}/{sid}", {"cron": "0 9,21 * * *", "content": "both"})

    after = world.posts(sid, "scheduled")
    assert before <= {p["schedule_id"] for p in after}
    assert {p["content"] for p in after} == {"both"}
    assert world.posts(sid, "cancelled") == []


def test_edited_occurrence_is_detached_and_left_alone(world: World) -> None:
    sid = world.create()["series_id"]
    first = world.posts(sid)[0]

    edited = world.alice.patch(f"/v1/scheduled-posts/{first['schedule_id']}", {"content": "mine"})
    world.alice.patch(f"{SERIES}/{sid}", {"content": "series"})

    mine = world.alice.get(f"/v1/scheduled-posts/{first['schedule_id']}").json
    assert edited.json["detached"] is True
    assert mine["content"] == "mine"


def test_cancelled_occurrence_is_never_created_again(world: World) -> None:
    sid = world.create()["series_id"]
    first = world.posts(sid)[0]

    world.alice.delete(f"/v1/scheduled-posts/{first['schedule_id']}")
    world.alice.patch(f"{SERIES}/{sid}", {"cron": "0 9 * * *", "content": "again"})
    world.clock.advance(3600)
    world.materialize()

    post = world.alice.get(f"/v1/scheduled-posts/{first['schedule_id']}").json
    assert (post["status"], post["detached"]) == ("cancelled", True)


def test_pause_cancels_and_resume_materializes_from_now(world: World) -> None:
    sid = world.create()["series_id"]

    paused = world.alice.post(f"{SERIES}/{sid}/pause")
    scheduled_while_paused = world.posts(sid, "scheduled")
    world.clock.advance(86_400)  # 2026-11-30T12:00Z: the 09:00 occurrence passed while paused
    resumed = world.alice.post(f"{SERIES}/{sid}/resume")

    assert (paused.json["status"], paused.json["next_occurrences"]) == ("paused", [])
    assert scheduled_while_paused == []
    assert resumed.json["status"] == "active"
    assert world.publish_times(sid) == ["2026-12-01T09:00:00.000Z", "2026-12-02T09:00:00.000Z"]


def test_delete_cancels_not_yet_claimed_and_ends_the_series(world: World) -> None:
    sid = world.create()["series_id"]

    answer = world.alice.delete(f"{SERIES}/{sid}")
    world.clock.advance(3 * 86_400)
    world.materialize()

    assert answer.json["status"] == "cancelled"
    assert world.posts(sid, "scheduled") == []
    assert world.alice.patch(f"{SERIES}/{sid}", {"content": "x"}).status == 409


def test_patch_that_stops_halfway_is_finished_by_the_materializer(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = world.create(cron="0 9 * * *")["series_id"]
    original = occurrences.apply_change

    def crash(*args: object, **kwargs: object) -> int:
        raise RuntimeError("the request stopped here (test)")

    monkeypatch.setattr(occurrences, "apply_change", crash)
    answer = world.alice.patch(f"{SERIES}/{sid}", {"cron": "30 18 * * *"})
    monkeypatch.setattr(occurrences, "apply_change", original)
    world.clock.advance(120)  # past the watermark margin
    world.materialize()

    assert answer.status == 500
    assert world.publish_times(sid) == [
        "2026-11-29T18:30:00.000Z",
        "2026-11-30T18:30:00.000Z",
    ]
    assert len(world.posts(sid, "cancelled")) == 2


def test_patch_reads_only_occurrences_a_run_could_have_written(
    make_world: Callable[..., World], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a five-minute series with three occurrences materialized ahead
    world = make_world(RECURRENCE_MAX_AHEAD=3)
    sid = world.create(cron="*/5 * * * *")["series_id"]
    written = {p["schedule_id"] for p in world.posts(sid, "scheduled")}
    read: list[str] = []
    original = PostRepository.get

    def get(self: PostRepository, schedule_id: str) -> Any:
        read.append(schedule_id)
        return original(self, schedule_id)

    monkeypatch.setattr(PostRepository, "get", get)
    # When its content is edited
    answer = world.alice.patch(f"{SERIES}/{sid}", {"content": "new"})
    # Then the edit looked up the three written occurrences, the one within the slack after
    # them (a racing run's clock) and the one in the last five minutes (a GSI could miss it),
    # not every occurrence of the 48 h horizon
    assert answer.status == 200
    assert written <= set(read)
    assert len(set(read) - written) <= 2
    assert {p["content"] for p in world.posts(sid, "scheduled")} == {"new"}


def test_patch_content_reaches_occurrences_due_but_not_yet_claimed(world: World) -> None:
    # Given a five-minute series whose first occurrences fell due with nobody claiming them
    sid = world.create(cron="*/5 * * * *")["series_id"]
    world.clock.advance(12 * 60)
    overdue = [
        p for p in world.posts(sid, "scheduled") if p["publish_at"] < "2026-11-29T12:12:00.000Z"
    ]
    # When its content is edited
    answer = world.alice.patch(f"{SERIES}/{sid}", {"content": "new"})
    # Then those still scheduled get it too (an edit reaches every not-yet-claimed occurrence):
    # the one due within the last five minutes and those due longer ago
    assert answer.status == 200
    assert len(overdue) == 3
    assert {p["content"] for p in world.posts(sid, "scheduled")} == {"new"}


def test_patch_after_one_that_stopped_halfway_finishes_the_first_change(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a PATCH of the rule and content that saved the series but stopped before it
    # cancelled the old rule's occurrences (its client sees a 500 and sends it again)
    sid = world.create(cron="0 9 * * *")["series_id"]
    original = occurrences.apply_change

    def crash(*args: object, **kwargs: object) -> int:
        raise RuntimeError("the request stopped here (test)")

    monkeypatch.setattr(occurrences, "apply_change", crash)
    body = {"cron": "30 18 * * *", "content": "evenings"}
    first = world.alice.patch(f"{SERIES}/{sid}", body)
    monkeypatch.setattr(occurrences, "apply_change", original)
    # When the same PATCH is sent again before any materializer run
    again = world.alice.patch(f"{SERIES}/{sid}", body)
    # Then the second one finished the first change too: nothing of the 09:00 rule is still
    # scheduled, and every scheduled occurrence has the new content
    assert (first.status, again.status) == (500, 200)
    assert world.publish_times(sid) == [
        "2026-11-29T18:30:00.000Z",
        "2026-11-30T18:30:00.000Z",
    ]
    assert {p["content"] for p in world.posts(sid, "scheduled")} == {"evenings"}
    assert len(world.posts(sid, "cancelled")) == 2
