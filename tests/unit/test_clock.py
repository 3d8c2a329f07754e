from __future__ import annotations

import os
import time
from datetime import UTC, datetime

import pytest

from scheduled_posts.clock import format_instant, hour_bucket, parse_instant


def test_parse_instant_with_z_returns_utc() -> None:
    assert parse_instant("2026-11-29T13:00:00Z") == datetime(2026, 11, 29, 13, tzinfo=UTC)


def test_parse_instant_with_offset_converts_to_utc() -> None:
    assert parse_instant("2026-11-29T14:30:00+01:30") == datetime(2026, 11, 29, 13, tzinfo=UTC)


@pytest.mark.parametrize(
    "value",
    [
        "2026-11-29T13:00:00",  # naive
        "2026-11-29 13:00:00Z",  # space instead of T is not RFC 3339 section 5.6
        "2026-02-30T13:00:00Z",  # impossible date
        "2026-11-29T24:00:00Z",  # impossible time
        "2026-11-29T13:00:60Z",  # leap second refused rather than silently shifted
        "2026-11-29T13:00:00+25:00",
        "0001-01-01T00:00:00+23:59",  # before datetime.min once converted to UTC
        "9999-12-31T23:59:59.9999Z",  # rounding up past datetime.max
        "tomorrow",
        " 2026-11-29T13:00:00Z",  # surrounding whitespace
        "2026-11-29T13:00:00Z\n",
        "2026-11-29T13:00:00.\uff15Z",  # a full-width digit
        "2026-11-29T13:00:00+\uff10\uff11:00",
        "",
    ],
)
def test_parse_instant_invalid_raises_value_error(value: str) -> None:
    with pytest.raises(ValueError):
        parse_instant(value)


def test_parse_instant_extra_digits_round_up_to_millisecond() -> None:
    parsed = parse_instant("2026-11-29T13:00:00.0001Z")
    assert format_instant(parsed) == "2026-11-29T13:00:00.001Z"
    assert format_instant(parse_instant("2026-11-29T13:00:00.1230000Z")) == (
        "2026-11-29T13:00:00.123Z"
    )


def test_parse_instant_rounding_carries_into_next_second() -> None:
    assert format_instant(parse_instant("2026-11-29T13:00:59.9999Z")) == "2026-11-29T13:01:00.000Z"


def test_format_instant_naive_raises() -> None:
    with pytest.raises(ValueError):
        format_instant(datetime(2026, 1, 1))


def test_parse_instant_ignores_process_tz(monkeypatch: pytest.MonkeyPatch) -> None:
    results = []
    for tz in ("UTC", "America/New_York", "Asia/Kolkata"):
        monkeypatch.setenv("TZ", tz)
        time.tzset()
        parsed = parse_instant("2026-03-08T02:30:00-05:00")
        results.append((format_instant(parsed), hour_bucket(parsed)))
    monkeypatch.setenv("TZ", os.environ.get("TZ", "UTC"))
    time.tzset()
    assert results == [("2026-03-08T07:30:00.000Z", "2026-03-08T07")] * 3
