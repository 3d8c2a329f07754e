"""Retry waits: exponential backoff with full jitter.

``wait = uniform(0, min(cap, base * 2 ** (attempt - 1)))`` ("Exponential Backoff And Jitter",
AWS Architecture Blog, 2015: full jitter spreads retries of many clients evenly and keeps the
total work lowest). The random source is injectable so tests can pin it.
"""

from __future__ import annotations

import random
from collections.abc import Callable

#: ``uniform(low, high) -> float`` in ``[low, high]``, like :func:`random.uniform`.
Uniform = Callable[[float, float], float]


def backoff_bound(attempt: int, *, base_seconds: float, cap_seconds: float) -> float:
    """The upper bound of the wait after failed attempt number ``attempt`` (1-based), seconds:
    ``min(cap_seconds, base_seconds * 2 ** (attempt - 1))``."""
    exponent = max(0, attempt - 1)
    if exponent > 62:  # avoid huge floats; the cap has long been reached
        return cap_seconds
    return min(cap_seconds, base_seconds * (2**exponent))


def full_jitter(
    attempt: int,
    *,
    base_seconds: float,
    cap_seconds: float,
    uniform: Uniform = random.uniform,
) -> float:
    """A wait in ``[0, backoff_bound(attempt)]`` seconds, drawn from ``uniform``."""
    bound = backoff_bound(attempt, base_seconds=base_seconds, cap_seconds=cap_seconds)
    return max(0.0, min(bound, uniform(0.0, bound)))
