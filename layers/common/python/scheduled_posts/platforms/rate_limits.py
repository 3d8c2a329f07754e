"""Rate-limit headers, read once for both networks, and the per-channel budget they set.

- Mastodon: ``X-RateLimit-Limit/-Remaining/-Reset``, the reset an ISO 8601 instant
  (https://docs.joinmastodon.org/api/rate-limits/).
- Bluesky (and the IETF draft "RateLimit header fields for HTTP"): ``RateLimit-Limit/-Remaining/
  -Reset``; the PDS sends the reset as an absolute Unix time in seconds
  (https://docs.bsky.app/docs/advanced-guides/rate-limits), the draft as delta-seconds: a value
  below 10^9 is read as delta-seconds.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Protocol

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.platforms.webhook import parse_retry_after

#: A reset value at or above this (seconds) is an absolute Unix time, below it delta-seconds.
_EPOCH_THRESHOLD = 1_000_000_000


class Answer(Protocol):
    """What is read of an answer (``platforms/http.py``'s ``HttpAnswer``)."""

    @property
    def status(self) -> int: ...

    def header(self, name: str) -> str | None: ...


def _reset_seconds(value: str | None, *, now: datetime) -> float | None:
    if value is None:
        return None
    text = value.strip()
    try:
        number = float(text)
    except ValueError:
        try:
            when = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return None
        if when.tzinfo is None:
            return None
        return max(0.0, (when - now).total_seconds())
    if number >= _EPOCH_THRESHOLD:
        return max(0.0, number - now.timestamp())
    return max(0.0, number)


def _remaining(answer: Answer) -> int | None:
    value = answer.header("X-RateLimit-Remaining") or answer.header("RateLimit-Remaining")
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def reset_seconds(answer: Answer, *, now: datetime) -> float | None:
    """Seconds from ``now`` until the rate-limit window resets (``X-RateLimit-Reset`` or
    ``RateLimit-Reset``), ``None`` when absent or malformed; never negative."""
    value = answer.header("X-RateLimit-Reset") or answer.header("RateLimit-Reset")
    return _reset_seconds(value, now=now)


def rate_limit_wait_seconds(answer: Answer, *, now: datetime) -> float | None:
    """How long the channel must wait before its next request, or ``None`` when it need not.

    A 429 waits ``Retry-After`` (seconds or an HTTP date, RFC 9110 section 10.2.3), else the
    reset header, else ``None`` (the caller's backoff decides). Any other answer waits until the
    reset only when the remaining budget is 0.
    """
    if answer.status == 429:
        retry_after = parse_retry_after(answer.header("Retry-After"), now=now)
        return retry_after if retry_after is not None else reset_seconds(answer, now=now)
    if _remaining(answer) == 0:
        wait = reset_seconds(answer, now=now)
        return wait if wait else None
    return None


class RateLimitBudget:
    """Per-channel "budget spent until <instant>", noted from each answer's rate-limit headers.

    Kept in the worker's memory (one Lambda container): a delivery of a channel whose budget is
    spent waits until the reset (``RetryableDeliveryError(rate_limited=True)``, which uses no
    attempt) without calling the network. Another container learns it from its own first answer
    (a 429 with ``Retry-After`` or the reset headers), so at most one request per container is
    spent on finding out.
    """

    def __init__(self) -> None:
        self._until: dict[str, datetime] = {}

    def note(self, channel_id: str, answer: Answer, *, now: datetime) -> float | None:
        """Record ``answer``'s headers; returns the wait in seconds when the budget is spent."""
        wait = rate_limit_wait_seconds(answer, now=now)
        if wait:
            self._until[channel_id] = now + timedelta(seconds=wait)
        else:
            self._until.pop(channel_id, None)
        return wait

    def check(self, channel_id: str, *, network: str, now: datetime) -> None:
        """Raise when ``channel_id``'s budget is spent at ``now``.

        Raises
        ------
        RetryableDeliveryError
            ``rate_limited=True`` with ``retry_after_seconds`` until the reset.
        """
        until = self._until.get(channel_id)
        if until is None:
            return
        if now >= until:
            del self._until[channel_id]
            return
        raise RetryableDeliveryError(
            f"rate_limited: {network} rate limit spent until {until.isoformat()}",
            rate_limited=True,
            retry_after_seconds=(until - now).total_seconds(),
        )
