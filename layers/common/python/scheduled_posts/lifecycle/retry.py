"""The retry decision of one retryable delivery outcome, pure (``docs/dispatch.md``, "State
machine", per channel): :class:`RetryPolicy` (the settings), :func:`plan_retry` (the rule) and
its :class:`RetryPlan`. :mod:`.outcomes` turns a plan into the channel's delivery and attempt.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True)
class RetryPolicy:
    """The retry settings of a round (``Settings``: ``MAX_ATTEMPTS``, ``RETRY_BASE_SECONDS``,
    ``RETRY_CAP_SECONDS``, ``MISFIRE_GRACE_SECONDS``, ``LEASE_SECONDS``; seconds)."""

    max_attempts: int
    base_seconds: float
    cap_seconds: float
    misfire_grace_seconds: int
    lease_seconds: int
    #: ``MAX_DESTINATION_WAITS``: most waits a destination may ask for (429s, ``Retry-After``s).
    max_destination_waits: int = 10


@dataclass(frozen=True)
class RetryPlan:
    """The delivery after a retryable outcome: ``attempts`` used, ``destination_waits`` so far,
    and either ``next_attempt_at`` (retry then) or ``final_error`` (``failed`` now)."""

    attempts: int
    destination_waits: int
    next_attempt_at: datetime | None
    final_error: str | None

    @property
    def exhausted(self) -> bool:
        """True when the delivery ends ``failed``."""
        return self.final_error is not None


def plan_retry(
    *,
    now: datetime,
    publish_at: datetime,
    attempts_before: int,
    attempt_number: int,
    destination_waits_before: int,
    rate_limited: bool,
    retry_after_seconds: float | None,
    error: str,
    policy: RetryPolicy,
    jitter: Callable[[int], float],
    attempts_before_retry: int = 0,
) -> RetryPlan:
    """One rule for every retryable outcome (decision "One pure retry decision"), so no
    ``Retry-After`` can keep a post busy for ever:

    * a 429 uses no attempt, every other outcome one of ``MAX_ATTEMPTS``;
    * every wait the destination asked for (a 429, or any ``Retry-After``) counts one
      destination wait; more than ``MAX_DESTINATION_WAITS`` fails the delivery, saying so; a
      channel gets at most ``MAX_ATTEMPTS + MAX_DESTINATION_WAITS`` requests per post;
    * the wait: a 429's ``Retry-After`` (clamped by the adapter) or else ``jitter``; any other
      outcome: ``jitter(attempt)`` raised to its ``Retry-After``;
    * a next try after ``publish_at + MISFIRE_GRACE_SECONDS`` is not scheduled: ``failed`` now,
      for 429 and 5xx alike.

    ``attempts_before``/``attempt_number``: attempts used before this try and this try's number;
    ``jitter(attempt)``: full-jitter seconds after attempt number ``attempt``;
    ``attempts_before_retry``: attempts used before the owner's last retry, not counted against
    ``MAX_ATTEMPTS`` nor in the backoff (``Delivery.attempts_before_retry``). Pure.
    """
    attempts = attempts_before if rate_limited else attempt_number
    used = attempts - attempts_before_retry  # of this budget
    asked = rate_limited or retry_after_seconds is not None
    waits = destination_waits_before + (1 if asked else 0)
    if rate_limited:
        wait = retry_after_seconds if retry_after_seconds is not None else jitter(used + 1)
    else:
        wait = max(jitter(used), retry_after_seconds or 0.0)
    next_at = now + timedelta(seconds=wait)
    horizon = publish_at + timedelta(seconds=policy.misfire_grace_seconds)
    final: str | None = None
    if not rate_limited and used >= policy.max_attempts:
        final = f"gave up after {used} attempts: {error}"
    elif waits > policy.max_destination_waits:
        final = (
            f"the destination asked to wait {waits} times (429 or Retry-After), more than "
            f"MAX_DESTINATION_WAITS ({policy.max_destination_waits}): {error}"
        )
    elif next_at > horizon:
        cause = "the destination's wait" if asked else "the next retry"
        final = f"{cause} would end after the misfire window (MISFIRE_GRACE_SECONDS): {error}"
    return RetryPlan(
        attempts=attempts,
        destination_waits=waits,
        next_attempt_at=None if final else next_at,
        final_error=final,
    )
