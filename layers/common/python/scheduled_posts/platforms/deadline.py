"""One wall-clock deadline per delivery attempt (decision "One deadline per network delivery
attempt").

A webhook attempt is one request, bounded as a whole by ``DELIVERY_TIMEOUT_SECONDS``
(``platforms/transport.py``: :func:`~scheduled_posts.platforms.transport.send_to_addresses` and
the transport's socket deadline). A network attempt makes several requests (Bluesky: getRecord,
createSession or refreshSession, resolveHandle per mention, putRecord; Mastodon: the status,
and after a lost answer the listing and sources), so the same bound is an
:class:`AttemptDeadline` shared by all of them: each request gets what is left of it as its
timeout, and none starts once it has passed. The attempt therefore ends within
``DELIVERY_TIMEOUT_SECONDS``, the figure the worker's sizing (``sizing.py``) and the lease
(``LEASE_SECONDS`` > one post's processing) already assume.
"""

from __future__ import annotations

import time
from collections.abc import Callable

#: Seconds on a clock that only moves forward (default :func:`time.monotonic`; tests pass the
#: simulated clock's ``seconds``).
Timer = Callable[[], float]

#: A request is not started with less than this left (seconds): no connection, let alone a TLS
#: handshake and an answer, fits in less.
MIN_REQUEST_SECONDS = 0.1


class DeadlinePassedError(Exception):
    """The attempt's deadline passed before a request could start (nothing was sent)."""


class AttemptDeadline:
    """Ends at ``seconds`` after its creation on ``timer``.

    Parameters
    ----------
    seconds
        The whole budget, float seconds (``DELIVERY_TIMEOUT_SECONDS``).
    timer
        Float seconds (default :func:`time.monotonic`).
    """

    def __init__(self, seconds: float, *, timer: Timer = time.monotonic) -> None:
        self.seconds = seconds
        self.timer = timer
        self.ends_at = timer() + seconds

    def remaining(self) -> float:
        """Seconds left, never negative."""
        return max(0.0, self.ends_at - self.timer())

    def spent(self) -> bool:
        """Whether too little is left to start a request (:data:`MIN_REQUEST_SECONDS`)."""
        return self.remaining() < MIN_REQUEST_SECONDS

    def bound(self, timeout: float) -> float:
        """The timeout of the next request: ``timeout`` cut to what is left.

        Raises
        ------
        DeadlinePassedError
            When too little is left (:meth:`spent`).
        """
        left = self.remaining()
        if left < MIN_REQUEST_SECONDS:
            raise DeadlinePassedError(f"the attempt's deadline of {self.seconds:g} s passed")
        return min(timeout, left)

    def part(self, seconds: float) -> AttemptDeadline:
        """A deadline inside this one: ``seconds`` from now, or this one's end if sooner (a
        budget for one step of the attempt, such as resolving mentions)."""
        inner = AttemptDeadline(min(seconds, self.remaining()), timer=self.timer)
        inner.seconds = seconds
        return inner
