"""``Retry-After`` (RFC 9110 section 10.2.3) read defensively: every form gives a bounded wait.

A destination's header is untrusted input. Forms seen in public bug reports of webhook and
scheduler projects, and what each gives here (``floor``/``cap`` are
``RETRY_AFTER_FLOOR_SECONDS``/``RETRY_AFTER_CAP_SECONDS``):

========================================  ==============================================
header                                    wait (seconds)
========================================  ==============================================
absent, empty, garbage, ``1.5``, ``1e3``  ``None``: the caller uses its own backoff
``0``, ``-5``                             ``floor`` (never a busy loop)
``120``                                   ``120`` (clamped into ``[floor, cap]``)
``99999999999999999999``                  ``cap`` (no date arithmetic overflows)
an HTTP-date in the past                  ``floor``
an HTTP-date far in the future            ``cap`` (year 9999 too)
========================================  ==============================================

Negative numbers are not valid delta-seconds (``1*DIGIT``) but mean "now" in every reading
anyone has proposed, so they give the floor rather than the caller's backoff.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

_DELTA = re.compile(r"[+-]?[0-9]+")
#: Longest header value looked at (an HTTP-date is 29 characters); longer values are garbage.
_MAX_CHARS = 64


def retry_after_seconds(value: str | None, *, now: datetime) -> float | None:
    """The raw wait a ``Retry-After`` value asks for, in seconds from ``now`` (may be huge or
    negative); ``None`` when absent or unreadable. Never raises."""
    if value is None:
        return None
    text = value.strip()
    if not text or len(text) > _MAX_CHARS:
        return None
    if _DELTA.fullmatch(text):
        return float(int(text))
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)  # RFC 9110 HTTP-dates are GMT
    try:
        return (when - now).total_seconds()
    except OverflowError:  # pragma: no cover - datetime's range keeps this finite
        return None


def bounded_retry_after(
    value: str | None, *, now: datetime, floor_seconds: float, cap_seconds: float
) -> float | None:
    """The wait ``value`` asks for, clamped into ``[floor_seconds, cap_seconds]``; ``None``
    when the header is absent or unreadable (the caller then uses its own backoff).

    Never raises: see the module table for every form.
    """
    raw = retry_after_seconds(value, now=now)
    if raw is None:
        return None
    return float(min(cap_seconds, max(floor_seconds, raw)))
