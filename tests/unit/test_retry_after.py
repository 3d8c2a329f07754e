"""``Retry-After`` read defensively (issue 17 item 2): every form gives a bounded wait or none."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from scheduled_posts.platforms.retry_after import bounded_retry_after, retry_after_seconds

NOW = datetime(2026, 11, 29, 13, 0, 0, tzinfo=UTC)
FLOOR, CAP = 1.0, 3600.0


def bounded(value: str | None) -> float | None:
    return bounded_retry_after(value, now=NOW, floor_seconds=FLOOR, cap_seconds=CAP)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0", FLOOR),
        ("-5", FLOOR),
        ("-99999999999999999999", FLOOR),
        ("120", 120.0),
        (" 120 ", 120.0),
        ("99999999999999999999", CAP),
        ("9" * 60, CAP),
        (format_datetime(NOW - timedelta(days=400), usegmt=True), FLOOR),
        (format_datetime(NOW + timedelta(seconds=90), usegmt=True), 90.0),
        (format_datetime(NOW + timedelta(days=4000), usegmt=True), CAP),
        ("Fri, 31 Dec 9999 23:59:59 GMT", CAP),
        ("Thu, 01 Jan 1970 00:00:00 GMT", FLOOR),
    ],
)
def test_bounded_retry_after_every_form_within_floor_and_cap(value: str, expected: float) -> None:
    assert bounded(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "   ",
        "soon",
        "1.5",
        "1e3",
        "0x10",
        "Sat, 32 Dec 99999 99:99:99 GMT",
        "Mon, 01 Jan 10000 00:00:00 GMT",
        "Wed, 21 Oct 2026 07:28:00 +9999",
        "\x00\x01",
        "٣",  # an Arabic-Indic digit: str.isdigit() says yes, HTTP says no
        "9" * 100,
    ],
)
def test_bounded_retry_after_unreadable_none_never_raises(value: str | None) -> None:
    assert bounded(value) is None


def test_retry_after_seconds_huge_number_kept_raw_without_overflow() -> None:
    assert retry_after_seconds("99999999999999999999", now=NOW) == 1e20
