"""A circuit breaker per destination (decision "A breaker per destination"; the bound is in
``docs/dispatch.md``, "A destination that keeps failing").

The destination is the channel: after ``BREAKER_FAILURES`` consecutive timeouts, connection
errors or 5xx answers of one channel, its breaker opens for ``BREAKER_COOLDOWN_SECONDS``; while
open, the channel's deliveries are deferred to the end of the cool-down without an attempt
(``next_attempt_at`` set, ``last_error`` says why, nothing sent early, nothing failed). Then one
delivery is let through as the probe (half-open): its success closes the breaker, its failure
reopens it for another cool-down. State lives in DynamoDB (:mod:`scheduled_posts.data.breaker`),
so every worker environment sees the same breaker.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime

from scheduled_posts.clock import epoch_seconds
from scheduled_posts.data.breaker import BreakerState, BreakerStore
from scheduled_posts.lifecycle.outcomes import ChannelRound

#: Breaker items outlive their last change by this long (DynamoDB TTL), then a quiet
#: destination starts again from no failures.
STATE_TTL_SECONDS = 86_400
#: The probe is held this long past the delivery timeout: its answer (or its timeout) is in by
#: then; if its worker died, another worker takes the probe after the hold.
PROBE_MARGIN_SECONDS = 5


def probe_hold_seconds(delivery_timeout_seconds: float) -> int:
    """How long one worker holds the half-open probe: the delivery timeout (``Settings.
    DELIVERY_TIMEOUT_SECONDS``, rounded up) plus :data:`PROBE_MARGIN_SECONDS`."""
    return math.ceil(delivery_timeout_seconds) + PROBE_MARGIN_SECONDS


@dataclass(frozen=True)
class Admission:
    """Whether a delivery may start now (``defer_until`` None) or waits for the breaker
    (``defer_until``: UTC instant); ``probe`` when it is the half-open probe; ``failures``
    the consecutive failures seen (a success then closes the breaker only when > 0)."""

    defer_until: datetime | None = None
    probe: bool = False
    failures: int = 0


def counts_as_failure(round_: ChannelRound) -> bool | None:
    """True for an attempt that timed out, could not connect or got a 5xx; False for any
    other answer (the destination answered); None when no attempt was made (a wait)."""
    attempt = round_.attempt
    if attempt is None or round_.in_progress or attempt.outcome == "rate_limited":
        return None
    if attempt.outcome != "retryable":
        return False
    return attempt.http_status is None or attempt.http_status >= 500


def _instant(epoch: int) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


class Breaker:
    """Admits or defers a channel's deliveries and records their outcomes.

    ``failures``: consecutive failures that open it (``Settings.BREAKER_FAILURES``; 0 turns
    the breaker off); ``cooldown_seconds``: how long it stays open
    (``Settings.BREAKER_COOLDOWN_SECONDS``); ``probe_seconds``: how long one worker holds
    the probe before another may take it (:func:`probe_hold_seconds`); the other deliveries
    wait that long, or until the probe's success closes the breaker.
    """

    def __init__(
        self, store: BreakerStore, *, failures: int, cooldown_seconds: int, probe_seconds: int
    ) -> None:
        self.store = store
        self.failures = failures
        self.cooldown_seconds = cooldown_seconds
        self.probe_seconds = probe_seconds

    def admit(self, channel_id: str, now: datetime) -> Admission:
        """Closed: start. Open: defer to ``opened_until``. Cooled down: the first caller takes
        the probe and starts, the others defer until the probe's hold ends."""
        if self.failures <= 0:
            return Admission()
        state = self.store.read(channel_id)
        at = epoch_seconds(now)
        if state.opened_until is None:
            return Admission(failures=state.failures)
        if at < state.opened_until:
            return Admission(defer_until=_instant(state.opened_until), failures=state.failures)
        if state.probe_until is None or state.probe_until <= at:
            until = at + self.probe_seconds
            if self.store.take_probe(
                channel_id, opened_until=state.opened_until, until=until, now=at
            ):
                return Admission(probe=True, failures=state.failures)
        return self._defer_after_probe(self.store.read(channel_id), at)

    def _defer_after_probe(self, state: BreakerState, at: int) -> Admission:
        if state.opened_until is None:  # the probe closed it meanwhile: start
            return Admission(failures=state.failures)
        until = max(state.opened_until, state.probe_until or 0, at + 1)
        return Admission(defer_until=_instant(until), failures=state.failures)

    def record(
        self, channel_id: str, admission: Admission, round_: ChannelRound, now: datetime
    ) -> None:
        """Count the attempt of ``round_`` (see :func:`counts_as_failure`): a failure adds one
        and opens the breaker at ``failures`` (a failed probe reopens it); a success after
        failures closes it."""
        failed = counts_as_failure(round_)
        if self.failures <= 0 or failed is None:
            return
        at = epoch_seconds(now)
        expires_at = at + self.cooldown_seconds + STATE_TTL_SECONDS
        if not failed:
            if admission.failures > 0 or admission.probe:
                self.store.close(channel_id)
            return
        count = self.store.add_failure(channel_id, expires_at=expires_at)
        if count >= self.failures or admission.probe:
            until = at + self.cooldown_seconds
            self.store.open(channel_id, until=until, now=at, expires_at=expires_at)
