"""POST /v1/recurring-schedules/preview (issue 13): the occurrences of a rule, nothing stored.

The ``bare`` caller has no tables: a preview that touched DynamoDB would answer 500 and fail.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.api import ApiClient

PREVIEW = "/v1/recurring-schedules/preview"


def preview(client: ApiClient, **body: Any) -> list[str]:
    answer = client.post(PREVIEW, body)
    assert answer.status == 200, answer.json
    return [o["occurrence_at"] for o in answer.json["occurrences"]]


def problem_types(client: ApiClient, body: dict[str, Any]) -> list[tuple[list[Any], str]]:
    answer = client.post(PREVIEW, body)
    assert answer.status == 422, answer.json
    assert answer.headers["Content-Type"] == "application/problem+json"
    return [(e["loc"], e["type"]) for e in answer.json["errors"]]


def test_preview_los_angeles_spring_forward(bare: ApiClient) -> None:
    answer = bare.post(
        PREVIEW,
        {
            "cron": "30 2 * * *",
            "timezone": "America/Los_Angeles",
            "starts_at": "2026-03-07T00:00:00-08:00",
            "count": 3,
        },
    )

    assert answer.status == 200
    assert answer.json["occurrences"] == [
        {"occurrence_at": "2026-03-07T10:30:00.000Z", "local_time": "2026-03-07T02:30:00-08:00"},
        {"occurrence_at": "2026-03-08T10:00:00.000Z", "local_time": "2026-03-08T03:00:00-07:00"},
        {"occurrence_at": "2026-03-09T09:30:00.000Z", "local_time": "2026-03-09T02:30:00-07:00"},
    ]


def test_preview_new_york_fall_back(bare: ApiClient) -> None:
    found = preview(
        bare,
        cron="30 1 * * *",
        timezone="America/New_York",
        starts_at="2026-10-31T00:00:00-04:00",
        count=3,
    )

    assert found == [
        "2026-10-31T05:30:00.000Z",
        "2026-11-01T05:30:00.000Z",
        "2026-11-02T06:30:00.000Z",
    ]


def test_preview_amsterdam_monday_across_2026_10_25(bare: ApiClient) -> None:
    found = preview(
        bare,
        cron="0 8 * * 1",
        timezone="Europe/Amsterdam",
        starts_at="2026-10-18T00:00:00Z",
        count=2,
    )

    assert found == ["2026-10-19T06:00:00.000Z", "2026-10-26T07:00:00.000Z"]


def test_preview_feb_29_only_in_leap_years(bare: ApiClient) -> None:
    found = preview(
        bare, cron="0 9 29 FEB *", timezone="UTC", starts_at="2026-01-01T00:00:00Z", count=2
    )

    assert found == ["2028-02-29T09:00:00.000Z", "2032-02-29T09:00:00.000Z"]


def test_preview_weekday_slots(bare: ApiClient) -> None:
    found = preview(
        bare,
        slots=[{"days": ["mon", "tue", "wed", "thu", "fri"], "times": ["09:30"]}],
        timezone="America/New_York",
        starts_at="2026-12-04T00:00:00Z",
        count=3,
    )

    assert found == [
        "2026-12-04T14:30:00.000Z",
        "2026-12-07T14:30:00.000Z",
        "2026-12-08T14:30:00.000Z",
    ]


def test_preview_ends_at_and_max_occurrences_bound_the_list(bare: ApiClient) -> None:
    common = {"cron": "0 9 * * *", "timezone": "UTC", "starts_at": "2026-12-01T00:00:00Z"}

    until = preview(bare, **common, ends_at="2026-12-02T09:00:00Z", count=10)
    counted = preview(bare, **common, max_occurrences=4, count=10)

    assert until == ["2026-12-01T09:00:00.000Z", "2026-12-02T09:00:00.000Z"]
    assert len(counted) == 4


def test_preview_without_starts_at_starts_now(bare: ApiClient) -> None:
    found = preview(bare, cron="0 9 * * *", timezone="UTC", count=1)

    assert len(found) == 1


@pytest.mark.parametrize("zone", ["Etc/UTC", "Etc/UCT", "Etc/Zulu", "Etc/Universal"])
def test_preview_in_a_name_of_utc_is_utc(bare: ApiClient, zone: str) -> None:
    body = {"cron": "0 9 * * *", "starts_at": "2026-12-01T00:00:00Z", "count": 1}
    answer = bare.post(PREVIEW, {**body, "timezone": zone})
    assert answer.status == 200, answer.json
    [found] = answer.json["occurrences"]
    assert found["occurrence_at"].startswith("2026-12-01T09:00:00")
    assert found["local_time"].endswith("+00:00")


@pytest.mark.parametrize("zone", ["EST", "+02:00", "Etc/GMT+5", "US/Pacific"])
def test_preview_non_iana_timezone_is_a_422_that_says_so(bare: ApiClient, zone: str) -> None:
    answer = bare.post(PREVIEW, {"cron": "0 9 * * *", "timezone": zone})

    assert answer.status == 422
    error = answer.json["errors"][0]
    assert (error["loc"], error["type"]) == (["body", "timezone"], "timezone_not_iana")
    assert "abbreviations" in error["msg"]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"cron": "0 9 31 2 *"}, (["body", "cron"], "rule_never_matches")),
        ({"cron": "*/2 * * * *"}, (["body", "cron"], "interval_too_short")),
        ({"cron": "0 9 * *"}, (["body", "cron"], "cron_invalid")),
        ({"cron": "0 9 L * *"}, (["body", "cron"], "cron_invalid")),
        (
            {"slots": [{"days": ["mon"], "times": ["9:30"]}]},
            (["body", "slots", 0, "times", 0], "slot_time_invalid"),
        ),
        (
            {"slots": [{"days": ["mon"], "times": ["09:30", "09:31"]}]},
            (["body", "slots"], "interval_too_short"),
        ),
        ({"slots": [{"days": ["mon", "mon"], "times": ["09:30"]}]}, None),
        ({}, (["body"], "rule_missing")),
        (
            {"cron": "0 9 * * *", "slots": [{"days": ["mon"], "times": ["09:30"]}]},
            (["body"], "rule_missing"),
        ),
        ({"cron": "0 9 * * *", "count": 101}, (["body", "count"], "less_than_equal")),
        (
            {"cron": "0 9 * * *", "starts_at": "2026-12-02T00:00:00"},
            (["body", "starts_at"], "value_error"),
        ),
        (
            {
                "cron": "0 9 * * *",
                "starts_at": "2026-12-02T00:00:00Z",
                "ends_at": "2026-12-01T00:00:00Z",
            },
            (["body", "ends_at"], "ends_before_start"),
        ),
    ],
)
def test_preview_invalid_rule_is_a_422(
    bare: ApiClient, body: dict[str, Any], expected: tuple[list[Any], str] | None
) -> None:
    found = problem_types(bare, {"timezone": "UTC", **body})

    if expected is not None:
        assert expected in found


@pytest.mark.parametrize(
    "starts_at", ["9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z", "1900-02-28T12:00:00+14:00"]
)
def test_preview_extreme_starts_at_is_never_a_500(bare: ApiClient, starts_at: str) -> None:
    answer = bare.post(
        PREVIEW, {"cron": "0 9 * * *", "timezone": "Pacific/Kiritimati", "starts_at": starts_at}
    )

    assert answer.status in (200, 422)
