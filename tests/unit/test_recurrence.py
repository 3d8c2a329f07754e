"""The pure recurrence rules (issue 13): cron and weekly slots in an IANA zone, the DST rule,
bounds, the minimum interval, never-matching rules and deterministic occurrence ids."""

from __future__ import annotations

from datetime import UTC, datetime
from itertools import islice

import pytest

from scheduled_posts.clock import format_instant
from scheduled_posts.recurrence import (
    Bounds,
    Rule,
    RuleError,
    WeeklySlot,
    canonical_zone_name,
    check_cron,
    check_rule,
    iter_occurrences,
    nominal_interval_minutes,
    occurrence_schedule_id,
    occurrences,
    resolve_wall_time,
    zone_for,
)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def utc_texts(rule: Rule, starts_at: str, count: int, **bounds: object) -> list[str]:
    found = occurrences(rule, Bounds(at(starts_at), **bounds), count=count)  # type: ignore[arg-type]
    return [format_instant(o.occurrence_at) for o in found]


# ------------------------------------------------------------------ DST rule (issue examples)


def test_occurrences_spring_forward_gap_fires_once_at_first_valid_instant() -> None:
    rule = Rule("America/Los_Angeles", cron="30 2 * * *")

    found = occurrences(rule, Bounds(at("2026-03-07T08:00:00Z")), count=3)

    assert [format_instant(o.occurrence_at) for o in found] == [
        "2026-03-07T10:30:00.000Z",
        "2026-03-08T10:00:00.000Z",
        "2026-03-09T09:30:00.000Z",
    ]
    assert found[1].local_time_text == "2026-03-08T03:00:00-07:00"


def test_occurrences_fall_back_repeat_fires_once_at_earlier_instant() -> None:
    rule = Rule("America/New_York", cron="30 1 * * *")

    found = occurrences(rule, Bounds(at("2026-10-31T04:00:00Z")), count=3)

    assert [format_instant(o.occurrence_at) for o in found] == [
        "2026-10-31T05:30:00.000Z",
        "2026-11-01T05:30:00.000Z",
        "2026-11-02T06:30:00.000Z",
    ]
    assert found[1].local_time_text == "2026-11-01T01:30:00-04:00"


def test_occurrences_amsterdam_monday_keeps_local_time_across_fall_back() -> None:
    rule = Rule("Europe/Amsterdam", cron="0 8 * * 1")

    found = occurrences(rule, Bounds(at("2026-10-19T00:00:00Z")), count=2)

    assert [format_instant(o.occurrence_at) for o in found] == [
        "2026-10-19T06:00:00.000Z",
        "2026-10-26T07:00:00.000Z",
    ]
    assert [o.local_time_text for o in found] == [
        "2026-10-19T08:00:00+02:00",
        "2026-10-26T08:00:00+01:00",
    ]


def test_occurrences_several_wall_times_in_one_gap_fire_once() -> None:
    rule = Rule("America/Los_Angeles", cron="*/15 2 * * *")

    texts = utc_texts(rule, "2026-03-08T08:00:00Z", 2)

    assert texts == ["2026-03-08T10:00:00.000Z", "2026-03-09T09:00:00.000Z"]


def test_occurrences_start_inside_repeated_hour_skips_the_earlier_instance() -> None:
    # 06:10Z is 01:10 EST, the second 01:xx of 2026-11-01: 01:30 fired at 05:30Z already.
    rule = Rule("America/New_York", cron="30 1 * * *")

    assert utc_texts(rule, "2026-11-01T06:10:00Z", 1) == ["2026-11-02T06:30:00.000Z"]


def test_occurrences_start_exactly_at_transition_includes_gap_occurrence() -> None:
    rule = Rule("America/Los_Angeles", cron="30 2 * * *")

    assert utc_texts(rule, "2026-03-08T10:00:00Z", 1) == ["2026-03-08T10:00:00.000Z"]


def test_resolve_wall_time_valid_time_is_its_own_instant() -> None:
    wall = datetime(2026, 7, 1, 9, 30)

    assert resolve_wall_time(wall, zone_for("Europe/Berlin")) == at("2026-07-01T07:30:00Z")


# ------------------------------------------------------------------ rules and bounds


def test_occurrences_feb_29_fires_only_in_leap_years() -> None:
    rule = Rule("UTC", cron="0 12 29 2 *")

    texts = utc_texts(rule, "2026-01-01T00:00:00Z", 3)

    assert texts == [
        "2028-02-29T12:00:00.000Z",
        "2032-02-29T12:00:00.000Z",
        "2036-02-29T12:00:00.000Z",
    ]


def test_occurrences_feb_29_across_2100_skips_the_non_leap_century() -> None:
    rule = Rule("UTC", cron="0 12 29 2 *")

    assert utc_texts(rule, "2097-01-01T00:00:00Z", 1) == ["2104-02-29T12:00:00.000Z"]


def test_occurrences_weekday_slots_in_new_york() -> None:
    rule = Rule(
        "America/New_York",
        slots=(WeeklySlot(days=("mon", "tue", "wed", "thu", "fri"), times=("09:30",)),),
    )

    # 2026-12-04 is a Friday: the next are Friday, Monday, Tuesday.
    texts = utc_texts(rule, "2026-12-04T00:00:00Z", 3)

    assert texts == [
        "2026-12-04T14:30:00.000Z",
        "2026-12-07T14:30:00.000Z",
        "2026-12-08T14:30:00.000Z",
    ]


def test_occurrences_two_slot_entries_merge_in_time_order() -> None:
    rule = Rule(
        "Europe/Berlin",
        slots=(
            WeeklySlot(days=("thu",), times=("18:00",)),
            WeeklySlot(days=("mon", "thu"), times=("09:30",)),
        ),
    )

    # 2026-12-07 is a Monday (CET, +01:00).
    texts = utc_texts(rule, "2026-12-07T00:00:00Z", 3)

    assert texts == [
        "2026-12-07T08:30:00.000Z",
        "2026-12-10T08:30:00.000Z",
        "2026-12-10T17:00:00.000Z",
    ]


def test_occurrences_ends_at_is_inclusive_and_stops_the_series() -> None:
    rule = Rule("UTC", cron="0 9 * * *")

    texts = utc_texts(rule, "2026-12-01T00:00:00Z", 10, ends_at=at("2026-12-03T09:00:00Z"))

    assert texts == [
        "2026-12-01T09:00:00.000Z",
        "2026-12-02T09:00:00.000Z",
        "2026-12-03T09:00:00.000Z",
    ]


def test_occurrences_max_occurrences_counts_from_starts_at() -> None:
    rule = Rule("UTC", cron="0 9 * * *")
    bounds = Bounds(at("2026-12-01T00:00:00Z"), max_occurrences=3)

    first_two = occurrences(rule, bounds, count=2)
    rest = occurrences(rule, bounds, count=10, not_before=at("2026-12-02T09:00:01Z"), already=2)

    assert len(first_two) == 2
    assert [format_instant(o.occurrence_at) for o in rest] == ["2026-12-03T09:00:00.000Z"]


def test_occurrences_starts_at_is_inclusive() -> None:
    rule = Rule("UTC", cron="0 9 * * *")

    assert utc_texts(rule, "2026-12-01T09:00:00Z", 1) == ["2026-12-01T09:00:00.000Z"]


def test_occurrences_vixie_day_or_when_both_day_fields_restricted() -> None:
    # The 1st of the month OR a Monday: 2026-06-01 (Mon), 06-08 (Mon), ..., 07-01 (Wed).
    rule = Rule("UTC", cron="0 9 1 * mon")

    texts = utc_texts(rule, "2026-06-23T00:00:00Z", 2)

    assert texts == ["2026-06-29T09:00:00.000Z", "2026-07-01T09:00:00.000Z"]


def test_occurrences_vixie_day_and_when_a_day_field_starts_with_star() -> None:
    # Vixie cron: */2 in day-of-month counts as "*": odd days AND Mondays.
    rule = Rule("UTC", cron="0 9 */2 * mon")

    texts = utc_texts(rule, "2026-06-02T00:00:00Z", 2)

    assert texts == ["2026-06-15T09:00:00.000Z", "2026-06-29T09:00:00.000Z"]


def test_iter_occurrences_never_matching_rule_yields_nothing() -> None:
    rule = Rule("UTC", cron="0 0 31 2 *")

    assert list(iter_occurrences(rule, not_before=at("2026-01-01T00:00:00Z"))) == []


def test_iter_occurrences_near_year_9999_ends_without_error() -> None:
    rule = Rule("Pacific/Kiritimati", cron="59 23 31 12 *")

    found = list(islice(iter_occurrences(rule, not_before=at("9999-12-30T00:00:00Z")), 5))

    assert len(found) <= 1


# ------------------------------------------------------------------ checks


@pytest.mark.parametrize(
    "name",
    [
        "EST",
        "CET",
        "EST5EDT",
        "US/Eastern",
        "Etc/GMT-2",
        "+02:00",
        "UTC+2",
        "GMT",
        "utc",
        "America/Nowhere",
        "../etc/passwd",
        "America/",
        "",
    ],
)
def test_zone_for_non_iana_name_is_refused(name: str) -> None:
    with pytest.raises(RuleError) as caught:
        zone_for(name)

    assert caught.value.kind == "timezone_not_iana"
    assert "EST" in caught.value.message


@pytest.mark.parametrize(
    "name", ["UTC", "America/New_York", "Europe/Amsterdam", "America/Argentina/Buenos_Aires"]
)
def test_zone_for_iana_name_is_accepted(name: str) -> None:
    assert zone_for(name).key == name


@pytest.mark.parametrize("name", ["UTC", "Etc/UTC", "Etc/UCT", "Etc/Universal", "Etc/Zulu"])
def test_zone_for_a_name_of_utc_is_utc(name: str) -> None:
    assert zone_for(name).key == "UTC"
    assert canonical_zone_name(name) == "UTC"


@pytest.mark.parametrize(
    "name", ["Etc/GMT", "Etc/GMT+5", "Etc/GMT-14", "Etc/GMT0", "Etc/Greenwich"]
)
def test_zone_for_fixed_offset_etc_names_stay_refused(name: str) -> None:
    with pytest.raises(RuleError) as caught:
        zone_for(name)
    assert caught.value.kind == "timezone_not_iana"


@pytest.mark.parametrize(
    "expression",
    [
        "* * * *",
        "* * * * * *",
        "@daily",
        "0 9 L * *",
        "0 9 * * 1#2",
        "H * * * *",
        "0 9 ? * *",
        "61 * * * *",
        "0 24 * * *",
        "0 9 * * jan",
        "0 9 0 * *",
        "0 9 * 13 *",
    ],
)
def test_check_cron_non_standard_or_out_of_range_is_refused(expression: str) -> None:
    with pytest.raises(RuleError) as caught:
        check_cron(expression)

    assert caught.value.kind == "cron_invalid"


def test_check_cron_names_ranges_steps_lists_are_accepted() -> None:
    assert check_cron(" */15  9-17 1,15 JAN-jun mon-FRI ") == "*/15 9-17 1,15 JAN-jun mon-FRI"


def test_check_rule_interval_under_minimum_is_refused() -> None:
    rule = Rule("UTC", cron="*/2 * * * *")

    with pytest.raises(RuleError) as caught:
        check_rule(rule, Bounds(at("2026-12-01T00:00:00Z")), min_interval_seconds=300)

    assert caught.value.kind == "interval_too_short"


def test_check_rule_interval_at_minimum_is_accepted() -> None:
    rule = Rule("UTC", cron="*/5 * * * *")

    first = check_rule(rule, Bounds(at("2026-12-01T00:01:00Z")), min_interval_seconds=300)

    assert format_instant(first.occurrence_at) == "2026-12-01T00:05:00.000Z"


def test_check_rule_short_gap_across_midnight_of_consecutive_days_is_refused() -> None:
    rule = Rule("UTC", cron="0,58 0,23 * * *")  # 23:58 then 00:00 the next day

    with pytest.raises(RuleError) as caught:
        check_rule(rule, Bounds(at("2026-12-01T00:00:00Z")), min_interval_seconds=300)

    assert caught.value.kind == "interval_too_short"


def test_nominal_interval_midnight_gap_ignored_when_days_never_consecutive() -> None:
    assert nominal_interval_minutes(Rule("UTC", cron="0,58 0,23 * * 1")) == 58


def test_nominal_interval_slots_wrap_around_the_week() -> None:
    rule = Rule(
        "UTC",
        slots=(
            WeeklySlot(days=("sun",), times=("23:58",)),
            WeeklySlot(days=("mon",), times=("00:01",)),
        ),
    )

    assert nominal_interval_minutes(rule) == 3


def test_check_rule_feb_31_never_matches() -> None:
    with pytest.raises(RuleError) as caught:
        check_rule(
            Rule("UTC", cron="0 9 31 2 *"),
            Bounds(at("2026-01-01T00:00:00Z")),
            min_interval_seconds=300,
        )

    assert caught.value.kind == "rule_never_matches"


def test_check_rule_first_occurrence_after_ends_at_is_refused() -> None:
    bounds = Bounds(at("2026-01-01T00:00:00Z"), ends_at=at("2027-01-01T00:00:00Z"))

    with pytest.raises(RuleError) as caught:
        check_rule(Rule("UTC", cron="0 9 29 2 *"), bounds, min_interval_seconds=300)

    assert (caught.value.kind, caught.value.field) == ("no_occurrence_in_bounds", "ends_at")


# ------------------------------------------------------------------ occurrence ids


def test_occurrence_schedule_id_same_inputs_same_id() -> None:
    instant = at("2026-03-08T10:00:00Z")

    assert occurrence_schedule_id("s1", instant) == occurrence_schedule_id("s1", instant)


def test_occurrence_schedule_id_differs_by_series_and_instant() -> None:
    instant = at("2026-03-08T10:00:00Z")

    ids = {
        occurrence_schedule_id("s1", instant),
        occurrence_schedule_id("s2", instant),
        occurrence_schedule_id("s1", at("2026-03-08T10:00:00.001Z")),
    }

    assert len(ids) == 3
