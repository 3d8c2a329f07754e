"""The lateness invariant of the fault suite (issue 18): every delivered post within the lag the
faults that touched it explain, by the failure table (:mod:`tests.support.lag_bounds`).

The harness records a :class:`Touch` for each injected fault against the posts it touched (or
against every post in flight, for a fault with no post of its own, such as a throttled sweeper
Query). :func:`lateness_problems` then compares each delivered post's lag, on the reference
clock (the worker's and the receiver's), with ``UNTOUCHED_SECONDS`` plus the bounds of its
touches, and explains each post beyond its bound fault by fault.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from scheduled_posts.logic.rate_limit import MAX_RESERVE_MINUTES
from tests.support.lag_bounds import BY_KEY, UNTOUCHED_SECONDS, Timing

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def schedule_id_in(text: str) -> str | None:
    """The first UUID in ``text`` (keys and identities name the schedule id first)."""
    found = _UUID.search(text)
    return found.group(0) if found else None


@dataclass(frozen=True)
class Touch:
    """One fault against one post (``schedule_id``) or every post in flight (``None``).

    ``row`` is a key of :data:`tests.support.lag_bounds.BY_KEY`; ``seconds`` the cost decided
    for this occurrence (rows whose ``bound`` is ``None``); ``at`` the reference time.
    """

    row: str
    kind: str
    at: datetime
    schedule_id: str | None = None
    seconds: float | None = None

    def allowance(self, timing: Timing) -> float:
        bound = BY_KEY[self.row].bound
        if bound is None:
            return float(self.seconds or 0.0)
        return bound(timing)


@dataclass(frozen=True)
class Delivered:
    """A post's final ``publish_at`` and the reference time of its last channel's first 2xx."""

    publish_at: datetime
    delivered_at: datetime

    @property
    def lag_seconds(self) -> float:
        return (self.delivered_at - self.publish_at).total_seconds()


def _applies(touch: Touch, schedule_id: str, post: Delivered, timing: Timing) -> bool:
    if touch.schedule_id is not None:
        return touch.schedule_id == schedule_id
    # a fault of no post: it can delay a post in flight at that time, i.e. delivered after it
    # and due within the lookahead (plus one sweep) of it
    horizon = touch.at + timedelta(seconds=timing.lookahead + timing.sweep_interval)
    return post.delivered_at >= touch.at and post.publish_at <= horizon


def lateness_problems(
    delivered: Mapping[str, Delivered],
    touches: Sequence[Touch],
    timing: Timing,
    totals: Counter[str],
) -> list[str]:
    """One problem per post whose lag exceeds ``UNTOUCHED_SECONDS`` plus its touches' bounds,
    naming each fault that explained part of it; ``totals`` gains ``late`` and
    ``max_lag_seconds``/``max_untouched_lag_seconds`` (whole seconds, rounded up)."""
    by_post: dict[str, list[Touch]] = {}
    global_touches = [t for t in touches if t.schedule_id is None]
    for t in touches:
        if t.schedule_id is not None:
            by_post.setdefault(t.schedule_id, []).append(t)
    problems: list[str] = []
    for sid, post in delivered.items():
        mine = by_post.get(sid, []) + [t for t in global_touches if _applies(t, sid, post, timing)]
        bound = UNTOUCHED_SECONDS + sum(t.allowance(timing) for t in mine)
        lag = post.lag_seconds
        whole = math.ceil(lag)
        totals["max_lag_seconds"] = max(totals["max_lag_seconds"], whole)
        if not mine:
            totals["max_untouched_lag_seconds"] = max(totals["max_untouched_lag_seconds"], whole)
        if lag > bound:
            totals["late"] += 1
            parts = [f"untouched {UNTOUCHED_SECONDS:.0f} s"] + [
                f"{t.kind} at {t.at:%H:%M:%S} ({t.row}) +{t.allowance(timing):.0f} s" for t in mine
            ]
            problems.append(
                f"late post {sid}: lag {lag:.1f} s > bound {bound:.0f} s = " + " + ".join(parts)
            )
    return problems


#: Failure-table rows of a fault that may end a worker's invocation between taking a
#: rate-limit slot and using it (the reservation unsaved, the message re-sent too late for its
#: minute, or an idempotent replay that sends nothing): each may leave one slot of the channel
#: unused (``docs/dispatch.md``, row ``rate_limited``).
SLOT_LOSING_ROWS = frozenset(
    {
        "worker_crash",
        "crash_after_2xx",
        "record_redelivered",
        "lambda_timeout",
        "in_progress",
        "follow_up_refused",
    }
)
#: How far ahead a slot can be reserved, in seconds.
RESERVE_AHEAD_SECONDS = 60 * MAX_RESERVE_MINUTES


def lost_slots(
    touches: Sequence[Touch], others: set[str], publish_at: datetime, delivered_at: datetime
) -> int:
    """How many slots of a rate-limited channel faults may have left unused ahead of a post due
    at ``publish_at`` and delivered at ``delivered_at``: the touches of
    :data:`SLOT_LOSING_ROWS` on ``others`` (the schedule ids of the channel's other posts) from
    :data:`RESERVE_AHEAD_SECONDS` before ``publish_at`` (a slot reserved then may lie after it)
    until the delivery."""
    begin = publish_at - timedelta(seconds=RESERVE_AHEAD_SECONDS)
    return sum(
        1
        for t in touches
        if t.row in SLOT_LOSING_ROWS and t.schedule_id in others and begin <= t.at < delivered_at
    )


def rate_limit_wait_seconds(ahead: int, lost: int, limit: int) -> float:
    """The failure table's bound for a post on a channel of ``rate_limit_per_minute`` =
    ``limit``: one minute per ``limit`` deliveries ahead of it (``ahead`` requests the channel
    received, plus ``lost`` slots faults left unused) and its own, plus one."""
    return 60.0 * (math.ceil((ahead + lost + 1) / limit) + 1)
