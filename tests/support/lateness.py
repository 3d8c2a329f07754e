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
