"""Time, in UTC only.

Every instant inside the service is an aware ``datetime`` in UTC; on the wire and in DynamoDB it
is the 24-character string ``YYYY-MM-DDTHH:MM:SS.mmmZ`` so that string order is time order.
The process's ``TZ`` never changes a result: nothing here calls ``time.localtime`` or builds a
naive datetime.
"""

from __future__ import annotations

import math
import re
import time
from datetime import UTC, datetime, timedelta
from typing import Protocol

_RFC3339 = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})[Tt](?P<time>\d{2}:\d{2}:\d{2})(?P<frac>\.\d+)?"
    r"(?P<offset>[Zz]|[+-]\d{2}:\d{2})\Z",
    re.ASCII,  # ``\d`` must not match other scripts' digits (``\uff11`` is not RFC 3339)
)


class Clock(Protocol):
    """What the service asks of time. Tests pass a controllable clock."""

    def now(self) -> datetime:
        """The current instant, an aware UTC datetime."""
        ...

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` (float seconds, >= 0)."""
        ...


class SystemClock:
    """The real clock: ``datetime.now(UTC)`` and ``time.sleep``."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


def parse_instant(value: str) -> datetime:
    """Parse an RFC 3339 date-time (RFC 3339 section 5.6) that carries an explicit offset.

    Returns an aware UTC datetime rounded **up** to the millisecond, so that nothing scheduled
    from it can be due before the instant asked for.

    Raises
    ------
    ValueError
        When the value is not RFC 3339, has no offset (a naive timestamp), or names an
        impossible date or time (``2026-02-30``, ``24:00:00``, a leap second ``:60``).
    """
    if not isinstance(value, str):
        raise ValueError("must be an RFC 3339 string")
    match = _RFC3339.match(value)  # no stripping: the exact RFC 3339 text or nothing
    if match is None:
        raise ValueError(
            "must be an RFC 3339 date-time with an explicit offset, e.g. 2026-11-29T13:00:00Z"
        )
    offset = match["offset"].upper()
    try:
        base = datetime.fromisoformat(f"{match['date']}T{match['time']}")
    except ValueError as exc:
        raise ValueError("is not a valid date and time") from exc
    if offset != "Z":
        sign = 1 if offset[0] == "+" else -1
        hours, minutes = int(offset[1:3]), int(offset[4:6])
        if hours > 23 or minutes > 59:
            raise ValueError("has an invalid UTC offset")
        try:
            base -= sign * timedelta(hours=hours, minutes=minutes)
        except OverflowError as exc:
            raise ValueError("is out of range") from exc
    micros = 0
    frac = match["frac"]
    if frac:
        digits = frac[1:]
        # Round up to the millisecond: any non-zero digit past the third bumps it.
        millis = int(digits[:3].ljust(3, "0"))
        if digits[3:].strip("0"):
            millis += 1
        micros = millis * 1000
    try:
        return base.replace(tzinfo=UTC) + timedelta(microseconds=micros)
    except OverflowError as exc:
        raise ValueError("is out of range") from exc


def format_instant(value: datetime) -> str:
    """Format an aware datetime as ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (UTC, milliseconds, rounded up).

    Raises
    ------
    ValueError
        When ``value`` is naive.
    """
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("naive datetime refused: every instant must carry an offset")
    utc = value.astimezone(UTC)
    millis = math.ceil(utc.microsecond / 1000)
    utc = utc.replace(microsecond=0) + timedelta(milliseconds=millis)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def instant_from_storage(value: str) -> datetime:
    """Read an instant written by :func:`format_instant` back into an aware UTC datetime."""
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def hour_bucket(value: datetime) -> str:
    """The hour bucket of an instant: ``YYYY-MM-DDTHH`` in UTC."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H")


def epoch_seconds(value: datetime) -> int:
    """Unix seconds (for DynamoDB TTL attributes), rounded down."""
    return math.floor(value.timestamp())
