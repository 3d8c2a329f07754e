"""Materialization on a simulated clock (issue 13): occurrences become ordinary posts ahead of
time, with the DST rule, bounds, the horizon, and exactly once under crashes and races."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest

from functions.materializer.handler import materialize_deps
from scheduled_posts.data.posts import PostRepository
from scheduled_posts.data.series import OccurrencesExhaustedError, SeriesRepository
from scheduled_posts.logic.materialize import MaterializeResult, occurrence_post
from scheduled_posts.models.post import Post
from scheduled_posts.recurrence import Occurrence
from tests.integration.recurring.conftest import World


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


# ------------------------------------------------------------------ DST examples


@pytest.mark.parametrize(
    ("start", "cron", "timezone", "days", "ahead", "expected"),
    [
        pytest.param(
            "2026-03-07T08:00:00Z",
            "30 2 * * *",
            "America/Los_Angeles",
            1,
            2,
            ["2026-03-07T10:30:00.000Z", "2026-03-08T10:00:00.000Z", "2026-03-09T09:30:00.000Z"],
            id="los_angeles_spring_forward_skipped_time_runs_at_the_gap_end",
        ),
        pytest.param(
            "2026-10-31T04:00:00Z",
            "30 1 * * *",
            "America/New_York",
            1,
            2,
            ["2026-10-31T05:30:00.000Z", "2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z"],
            id="new_york_fall_back_repeated_time_runs_once",
        ),
        pytest.param(
            "2026-10-18T12:00:00Z",
            "0 8 * * 1",
            "Europe/Amsterdam",
            7,
            1,
            ["2026-10-19T06:00:00.000Z", "2026-10-26T07:00:00.000Z"],
            id="amsterdam_monday_keeps_local_time",
        ),
    ],
)
def test_materialize_across_dst_keeps_the_local_wall_time(
    world: World,
    start: str,
    cron: str,
    timezone: str,
    days: int,
    ahead: int,
    expected: list[str],
) -> None:
    world.clock.travel_to(at(start))
    series = world.create(cron=cron, timezone=timezone)
    first = world.publish_times(series["series_id"])

    world.clock.advance(days * 86_400)
    world.materialize()

    assert first == expected[:ahead]  # materialized at once, on create
    assert world.publish_times(series["series_id"]) == expected


def test_materialize_feb_29_waits_for_the_leap_year(world: World) -> None:
    series = world.create(cron="0 9 29 2 *")

    assert world.publish_times(series["series_id"]) == []
    assert series["next_occurrences"][0]["occurrence_at"] == "2028-02-29T09:00:00.000Z"

    world.clock.travel_to(at("2028-02-27T09:00:00Z"))
    world.materialize()

    assert world.publish_times(series["series_id"]) == ["2028-02-29T09:00:00.000Z"]


# ------------------------------------------------------------------ rules and bounds


def test_materialize_weekday_slots(world: World) -> None:
    # 2026-11-29 12:00Z is a Sunday; Friday 2026-12-04 to Monday 2026-12-07 skips the weekend.
    series = world.create(
        slots=[{"days": ["mon", "tue", "wed", "thu", "fri"], "times": ["09:30"]}],
        timezone="America/New_York",
    )

    for _ in range(7):
        world.clock.advance(86_400)
        world.materialize()

    assert world.publish_times(series["series_id"]) == [
        "2026-11-30T14:30:00.000Z",
        "2026-12-01T14:30:00.000Z",
        "2026-12-02T14:30:00.000Z",
        "2026-12-03T14:30:00.000Z",
        "2026-12-04T14:30:00.000Z",
        "2026-12-07T14:30:00.000Z",
    ]


def test_materialize_max_occurrences_ends_the_series(world: World) -> None:
    series = world.create(cron="0 9 * * *", max_occurrences=3)

    for _ in range(4):
        world.clock.advance(86_400)
        world.materialize()

    times = [p["publish_at"] for p in world.posts(series["series_id"])]
    answer = world.alice.get(f"/v1/recurring-schedules/{series['series_id']}")
    assert times == [
        "2026-11-30T09:00:00.000Z",
        "2026-12-01T09:00:00.000Z",
        "2026-12-02T09:00:00.000Z",
    ]
    assert answer.json["status"] == "ended"


def test_series_with_every_occurrence_written_stays_active_until_the_last_is_due(
    make_world,  # type: ignore[no-untyped-def]
) -> None:
    # All three occurrences fit the horizon, so the create writes them all.
    world = make_world(RECURRENCE_HORIZON_HOURS=96)
    series = world.create(cron="0 9 * * *", max_occurrences=3)
    path = f"/v1/recurring-schedules/{series['series_id']}"
    times = ["2026-11-30T09:00:00.000Z", "2026-12-01T09:00:00.000Z", "2026-12-02T09:00:00.000Z"]
    assert world.publish_times(series["series_id"]) == times
    for answer in (series, world.alice.get(path).json):
        assert answer["status"] == "active"
        assert [o["occurrence_at"] for o in answer["next_occurrences"]] == times
    world.clock.advance(86_400)  # 2026-11-30T12:00Z: the first is due, two still ahead
    world.materialize()
    answer = world.alice.get(path).json
    assert answer["status"] == "active"
    assert [o["occurrence_at"] for o in answer["next_occurrences"]] == times[1:]
    world.clock.advance(2 * 86_400)  # past the last one
    world.materialize()
    answer = world.alice.get(path).json
    assert (answer["status"], answer["next_occurrences"]) == ("ended", [])


def test_materialize_ends_at_stops_at_the_bound(world: World) -> None:
    series = world.create(cron="0 9 * * *", ends_at="2026-12-02T09:00:00Z")

    for _ in range(4):
        world.clock.advance(86_400)
        world.materialize()

    times = [p["publish_at"] for p in world.posts(series["series_id"])]
    assert times[-1] == "2026-12-02T09:00:00.000Z"
    assert len(times) == 3


def test_materialize_count_limit_keeps_at_most_max_ahead(make_world) -> None:  # type: ignore[no-untyped-def]
    world = make_world(RECURRENCE_MAX_AHEAD=4)

    series = world.create(cron="*/5 * * * *")

    assert world.publish_times(series["series_id"]) == [
        "2026-11-29T12:00:00.000Z",
        "2026-11-29T12:05:00.000Z",
        "2026-11-29T12:10:00.000Z",
        "2026-11-29T12:15:00.000Z",
    ]


def test_materialize_refills_when_half_the_buffer_fired(make_world) -> None:  # type: ignore[no-untyped-def]
    world = make_world(RECURRENCE_MAX_AHEAD=4)
    series = world.create(cron="*/5 * * * *")

    world.clock.advance(5 * 60)  # one of four fired: not yet due
    early = world.materialize()
    world.clock.advance(5 * 60)  # two of four: due
    due = world.materialize()

    assert (early.series_read, due.series_extended) == (0, 1)
    times = [p["publish_at"] for p in world.posts(series["series_id"])]
    assert times[-1] == "2026-11-29T12:25:00.000Z"
    assert len(times) == 6


def test_materializer_reads_only_series_due_for_extension(world: World) -> None:
    for _ in range(3):
        world.create(cron="0 9 * * *")

    world.clock.advance(3600)  # nothing enters the 48 h horizon before 09:00 + 1 day - 48 h
    result = world.materialize()

    assert result.series_read == 0


def test_materialize_never_back_fills_after_an_outage(world: World) -> None:
    series = world.create(cron="0 9 * * *")

    world.clock.advance(5 * 86_400)  # the materializer was down for five days
    world.materialize()

    scheduled = world.publish_times(series["series_id"])
    assert scheduled == [
        "2026-11-30T09:00:00.000Z",  # written at create
        "2026-12-01T09:00:00.000Z",
        "2026-12-05T09:00:00.000Z",  # written after the outage: 12-02 to 12-04 never
        "2026-12-06T09:00:00.000Z",
    ]


# ------------------------------------------------------------------ exactly once


def materialize_crashing_before_second_write(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> MaterializeResult:
    """One materializer run that dies (an exception) at its second occurrence write."""
    original = SeriesRepository.create_occurrence
    calls = {"n": 0}

    def crash_on_second(self, post, **kwargs):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("crash (test)")
        return original(self, post, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(SeriesRepository, "create_occurrence", crash_on_second)
        return world.materialize()


def assert_each_occurrence_once(world: World, series_id: str) -> None:
    """The daily 09:00 series of these tests, materialized four days on: each of its four
    publish times once, and alice's pending counter counting exactly those."""
    times = world.publish_times(series_id)
    assert times == [
        "2026-11-30T09:00:00.000Z",
        "2026-12-01T09:00:00.000Z",
        "2026-12-04T09:00:00.000Z",
        "2026-12-05T09:00:00.000Z",
    ]
    assert PostRepository(
        posts_table_name=world.settings.POSTS_TABLE_NAME,
        due_table_name=world.settings.DUE_INDEX_TABLE_NAME,
    ).pending_count("alice") == len(times)


def test_materialize_crash_halfway_then_rerun_writes_each_once(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    series = world.create(cron="0 9 * * *")
    world.clock.advance(4 * 86_400 + 3600)
    crashed = materialize_crashing_before_second_write(world, monkeypatch)
    world.materialize()

    assert crashed.failures == 1
    assert_each_occurrence_once(world, series["series_id"])


def test_materialize_crash_halfway_never_passes_max_occurrences(  # type: ignore[no-untyped-def]
    make_world, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Fault seed 84: a run crashed after writing 12:02, the next run (at 12:02:30) planned
    # from its own now and did not count 12:02, so the series wrote six of five.
    world = make_world(RECURRENCE_MAX_AHEAD=2, MIN_RECURRENCE_INTERVAL_SECONDS=60)
    series = world.create(cron="* * * * *", max_occurrences=5)  # writes 12:00 and 12:01
    world.clock.advance(90)
    crashed = materialize_crashing_before_second_write(world, monkeypatch)  # 12:02 written
    for _ in range(6):
        world.clock.advance(60)
        world.materialize()

    times = [p["publish_at"] for p in world.posts(series["series_id"])]
    answer = world.alice.get(f"/v1/recurring-schedules/{series['series_id']}")
    assert crashed.failures == 1
    assert times == [f"2026-11-29T12:0{m}:00.000Z" for m in range(5)]
    assert answer.json["status"] == "ended"


def test_occurrence_write_refuses_the_one_past_max_occurrences(world: World) -> None:
    # Two runs at once each saw room for one more: the series item's count decides.
    series_id = world.create(cron="0 9 * * *", max_occurrences=3)["series_id"]
    repository = materialize_deps(world.settings, world.clock).series
    series = repository.get(series_id)
    assert series is not None and series.occurrence_count == 2
    world.clock.advance(3 * 86_400)
    times = [datetime(2026, 12, day, 9, tzinfo=UTC) for day in (3, 4)]
    posts = [
        occurrence_post(series, Occurrence(at, at), world.clock.now(), world.settings)
        for at in times
    ]

    def write(post: Post) -> bool:
        return repository.create_occurrence(
            post, series_version=series.version, max_occurrences=3, late=False, max_pending=100
        )

    assert write(posts[0]) is True
    with pytest.raises(OccurrencesExhaustedError):
        write(posts[1])
    stored = repository.get(series_id)
    assert stored is not None and stored.occurrence_count == 3
    assert [p["publish_at"] for p in world.posts(series_id)][-1] == "2026-12-03T09:00:00.000Z"


def test_materialize_twice_at_once_writes_each_once(world: World) -> None:
    series = world.create(cron="0 9 * * *")
    world.clock.advance(4 * 86_400 + 3600)
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            barrier.wait()
            world.materialize()
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert_each_occurrence_once(world, series["series_id"])


def test_materialize_pending_limit_stops_the_series_visibly(make_world) -> None:  # type: ignore[no-untyped-def]
    world = make_world(MAX_PENDING_POSTS=3)

    series = world.create(cron="*/5 * * * *")
    answer = world.alice.get(f"/v1/recurring-schedules/{series['series_id']}")

    assert len(world.posts(series["series_id"])) == 3
    assert answer.json["status"] == "active"
    assert answer.json["stopped_reason"] == "pending_limit"


def test_materialize_refills_up_to_the_pending_limit_when_a_slot_frees(make_world) -> None:  # type: ignore[no-untyped-def]
    world = make_world(MAX_PENDING_POSTS=3)
    series = world.create(cron="*/5 * * * *")
    first = world.posts(series["series_id"])[0]

    world.alice.delete(f"/v1/scheduled-posts/{first['schedule_id']}")
    world.clock.advance(world.settings.MATERIALIZE_INTERVAL_SECONDS)
    world.materialize()

    answer = world.alice.get(f"/v1/recurring-schedules/{series['series_id']}")
    assert len(world.posts(series["series_id"], "scheduled")) == 3
    assert answer.json["stopped_reason"] == "pending_limit"


@pytest.mark.parametrize("round_", range(3))
def test_rule_edit_racing_the_materializer_leaves_nothing_under_the_old_rule(
    world: World, round_: int
) -> None:
    series = world.create(cron="0 9 * * *")
    sid = series["series_id"]
    world.clock.advance(2 * 86_400 + 3600)  # the materializer has occurrences to write
    barrier = threading.Barrier(2)
    answers: list[int] = []
    errors: list[BaseException] = []

    def materialize() -> None:
        try:
            barrier.wait()
            for _ in range(1 + round_):
                world.materialize()
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    def edit() -> None:
        barrier.wait()
        answers.append(
            world.alice.patch(f"/v1/recurring-schedules/{sid}", {"cron": "30 18 * * *"}).status
        )

    threads = [threading.Thread(target=materialize), threading.Thread(target=edit)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    world.materialize()

    now = world.clock.now()
    upcoming = [p for p in world.posts(sid, "scheduled") if at(p["publish_at"]) >= now]
    assert (answers, errors) == ([200], [])
    assert upcoming
    assert {p["publish_at"][11:] for p in upcoming} == {"18:30:00.000Z"}
