"""The failure table of ``docs/dispatch.md`` as data: what each failure costs in lag (issue 18).

The table in ``docs/dispatch.md`` ("Failures, what recovers them, and the lag they cost") is
rendered from :data:`ROWS` (``tests/faults/test_lag_bounds.py`` fails when the two differ), and
the fault suite's lateness invariant (:mod:`tests.support.lateness`) reads the same rows: every
fault the harness injects names the row that promises its cost, so the promise and its check
cannot drift apart.

A row's ``bound`` turns a :class:`Timing` (the settings of a world, or the defaults) into the
lag in seconds that one occurrence of the failure may add to a post; ``None`` means the cost is
decided per occurrence (a destination's wait, a sweeper outage's length) and recorded with the
fault.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from scheduled_posts.settings import Settings
from scheduled_posts.sizing import visibility_timeout_seconds

#: What an untouched post may lag by, in seconds: the worker's clock gate (at most 1 s waited
#: in Lambda), ``DelaySeconds`` rounded up to the second, a sender's clock skew (|skew| <= 2 s
#: in the fault suite) and one poll of the event source mapping.
UNTOUCHED_SECONDS = 5.0
#: One poll of the SQS event source mapping (long polling answers as soon as a message is
#: visible; the fault suite ticks in 1 s steps around every visibility time).
POLL_SECONDS = 2.0


@dataclass(frozen=True)
class Timing:
    """The numbers a bound is made of, in seconds."""

    sweep_interval: float
    watchdog_interval: float
    lease: float
    visibility_timeout: float
    max_receive_count: int = 5
    lookahead: float = 600.0
    poll: float = POLL_SECONDS

    @classmethod
    def of(cls, settings: Settings, *, worker_timeout_seconds: int = 60) -> Timing:
        """From service settings and the worker's timeout (the queue's visibility timeout is
        :func:`scheduled_posts.sizing.visibility_timeout_seconds` of it)."""
        return cls(
            sweep_interval=float(settings.SWEEP_INTERVAL_SECONDS),
            watchdog_interval=float(settings.WATCHDOG_INTERVAL_SECONDS),
            lease=float(settings.LEASE_SECONDS),
            visibility_timeout=float(visibility_timeout_seconds(worker_timeout_seconds)),
            max_receive_count=settings.MAX_RECEIVE_COUNT,
            lookahead=float(settings.LOOKAHEAD_SECONDS),
        )


@dataclass(frozen=True)
class Row:
    """One row of the failure table.

    ``key`` names the row for the harness; ``failure``, ``recovery`` and ``lag`` are the
    table's three columns, verbatim; ``bound`` is the lag one occurrence may add (seconds), or
    ``None`` when it is decided per occurrence and recorded with the fault.
    """

    key: str
    failure: str
    recovery: str
    lag: str
    bound: Callable[[Timing], float] | None


def _sweep(t: Timing) -> float:
    return t.sweep_interval


def _none(t: Timing) -> float:
    return 0.0


def _takeover(t: Timing) -> float:
    return t.lease + t.watchdog_interval + t.poll


def _redelivery(t: Timing) -> float:
    return t.visibility_timeout + t.poll


def _lease(t: Timing) -> float:
    return t.lease + t.poll


ROWS: tuple[Row, ...] = (
    Row(
        "untouched",
        "none (no fault touched the post)",
        "—",
        "a few seconds (the clock gate ≤ 1 s, `DelaySeconds` rounded up, clock skew, one poll)",
        lambda t: UNTOUCHED_SECONDS,
    ),
    Row(
        "promotion_refused",
        "API promotion fails after commit",
        "the late marker; next sweep sends it",
        "≤ `SWEEP_INTERVAL_SECONDS` (60 s)",
        _sweep,
    ),
    Row(
        "sweeper_incomplete",
        "sweeper crashes or is throttled mid-shard",
        "watermark only moved past completed pages; next sweep re-reads and re-sends that page",
        "≤ 60 s; the re-sent messages are dropped by the claim (stale or already claimed)",
        _sweep,
    ),
    Row(
        "sweepers_overlap",
        "two sweepers overlap",
        "the claim condition (in-order sends carry no mark, W4)",
        "none; the claim drops the extra messages (counted as `StaleDropped`)",
        _none,
    ),
    Row(
        "sweeper_outage",
        "sweeper outage",
        "watermark catch-up from where it stopped; the worker decides misfire",
        "the outage; beyond `MISFIRE_GRACE_SECONDS` → `missed`",
        None,
    ),
    Row(
        "sweeper_send_refused",
        "SQS send fails in the sweeper",
        "shard not advanced; retried next sweep",
        "≤ 60 s",
        _sweep,
    ),
    Row(
        "early_message",
        "message arrives early (clock skew, chained wait)",
        "worker's clock gate: ≤ 1 s wait, else re-sent with the remaining delay",
        "none (never early)",
        _none,
    ),
    Row(
        "duplicate_message",
        "duplicate message (SQS at-least-once, overlap)",
        "stale check, the claim condition, lease-token rotation",
        "none",
        _none,
    ),
    Row(
        "worker_crash",
        "worker crashes after the claim / mid-delivery / before the final write",
        "lease expires, watchdog takes over, idempotency replays finished deliveries",
        "≤ `LEASE_SECONDS + WATCHDOG_INTERVAL_SECONDS` (≈ 120 s) + one poll",
        _takeover,
    ),
    Row(
        "record_redelivered",
        "worker crashes before the claim, or a record fails (throttled, a refused re-send)",
        "SQS redelivers the message after the visibility timeout",
        "≤ the visibility timeout (6 × the worker timeout) + one poll",  # noqa: RUF001
        _redelivery,
    ),
    Row(
        "lambda_timeout",
        "Lambda timeout inside a delivery",
        "the in-progress idempotency record expires with the Lambda's remaining time; watchdog "
        "re-dispatches; the receiver dedupes the raw re-send by Idempotency-Key",
        "≈ 120 s as above; one counted raw re-send",
        _takeover,
    ),
    Row(
        "crash_after_2xx",
        "crash after the receiver's 2xx, before the status write",
        "the completed idempotency record is replayed: no second request",
        "≈ 120 s",
        _takeover,
    ),
    Row(
        "in_progress",
        "`IdempotencyAlreadyInProgressError` (two holders at once)",
        "channel rescheduled after `LEASE_SECONDS` under the current lease; record reported as "
        "a batch item failure",
        "≤ `LEASE_SECONDS`",
        _lease,
    ),
    Row(
        "destination_retry",
        "destination 5xx / 408 / 425 / timeout",
        "backoff with full jitter (raised to a `Retry-After`), ≤ `MAX_ATTEMPTS`, never past the "
        "misfire window",
        "Σ waits (≤ 30+60+120+240+480 s)",
        None,
    ),
    Row(
        "destination_429",
        "destination 429",
        "waits its clamped `Retry-After`, no attempt used, ≤ `MAX_DESTINATION_WAITS` waits, "
        "never past the misfire window",
        "the destination's wait",
        None,
    ),
    Row(
        "slow_destination",
        "a slow destination (up to `DELIVERY_TIMEOUT_SECONDS`, one wall-clock deadline)",
        "the batch's records run concurrently: other posts are not delayed",
        "that post only",
        None,
    ),
    Row(
        "breaker_open",
        "a destination that keeps timing out or answering 5xx (`BREAKER_FAILURES` in a row)",
        "its channel's breaker defers its deliveries, no attempt used, until one probe after "
        "`BREAKER_COOLDOWN_SECONDS` succeeds; other channels are not touched",
        "that channel's posts only: the rest of the cool-down plus one probe hold after it "
        "recovers; never past the misfire window",
        None,
    ),
    Row(
        "rate_limited",
        "the channel's `rate_limit_per_minute` is reached",
        "the limiter reserves the first later minute with room; the message waits for it, no "
        "attempt used",
        "≤ one minute per `rate_limit_per_minute` deliveries ahead of it on the channel, plus one; "
        "a worker fault of one of them after it took a slot may leave that slot unused: one more",
        None,
    ),
    Row("permanent_4xx", "permanent 4xx", "that channel `failed` at once", "—", _none),
    Row(
        "poison_message",
        "poison message",
        "on receive `MAX_RECEIVE_COUNT − 1` the post turns `failed` with `last_error`; then the "  # noqa: RUF001
        "DLQ",
        "≈ (`MAX_RECEIVE_COUNT` − 2) × the visibility timeout",  # noqa: RUF001
        lambda t: (t.max_receive_count - 2) * t.visibility_timeout,
    ),
    Row(
        "dlq_redrive",
        "a dead-lettered message, redriven by an operator",
        "`make redrive` (`logic/redrive.py`) moves it back or reopens the post",
        "until the redrive, then as an untouched post",
        None,
    ),
    Row(
        "follow_up_refused",
        "follow-up send fails after a recorded round",
        "lease expires at `next attempt + LEASE_SECONDS`; watchdog re-dispatches",
        "≤ `LEASE_SECONDS + WATCHDOG_INTERVAL_SECONDS`",
        _takeover,
    ),
    Row(
        "watchdog_incomplete",
        "watchdog throttled, or its send refused",
        "the lease stays expired (a refused send hands the new lease back at once); the next "
        "watchdog run takes it over",
        "≤ `WATCHDOG_INTERVAL_SECONDS` (60 s)",
        lambda t: t.watchdog_interval,
    ),
)

BY_KEY: dict[str, Row] = {row.key: row for row in ROWS}


def render_table() -> str:
    """The failure table of ``docs/dispatch.md``, as markdown (header included)."""
    lines = [
        "| failure | what recovers it | lag it adds (defaults) |",
        "|---|---|---|",
    ]
    lines += [f"| {r.failure} | {r.recovery} | {r.lag} |" for r in ROWS]
    return "\n".join(lines)
