"""A controllable clock that moves everything in-process: our code, moto's SQS delays and
visibility timeouts, and Powertools' idempotency expiries (all read ``time.time``).

Built on ``time-machine``: ``sleep`` and ``advance`` shift the travelled clock instead of
waiting, so tests never sleep.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import time_machine


class SimClock:
    """``now()`` is the travelled UTC time; ``sleep(s)``/``advance(s)`` move it forward.

    ``skew_seconds`` shifts what this instance reports relative to the shared simulated time,
    to model machines whose clocks disagree (the worker's clock is the reference).
    """

    def __init__(self, traveller: time_machine.Coordinates, skew_seconds: float = 0.0) -> None:
        self._traveller = traveller
        self.skew_seconds = skew_seconds

    def now(self) -> datetime:
        return datetime.now(UTC) + timedelta(seconds=self.skew_seconds)

    def seconds(self) -> float:
        """``now()`` as POSIX seconds: the clock a Lambda context counts down on in tests
        (``local.emulation.lambda_runtime.LambdaContext(..., clock=sim.seconds)``)."""
        return self.now().timestamp()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._traveller.shift(timedelta(seconds=seconds))

    def advance(self, seconds: float) -> None:
        """Move the shared simulated time forward by ``seconds``."""
        self.sleep(seconds)

    def advance_to(self, instant: datetime) -> None:
        """Move the shared simulated time forward to ``instant`` (never backwards)."""
        delta = (instant - datetime.now(UTC)).total_seconds()
        if delta > 0:
            self._traveller.shift(timedelta(seconds=delta))

    def travel_to(self, instant: datetime) -> None:
        """Set the shared simulated time to ``instant``, forwards or backwards (for tests
        that need a calendar date, such as a DST change)."""
        self._traveller.move_to(instant)

    def skewed(self, skew_seconds: float) -> SimClock:
        """Another view of the same simulated time, off by ``skew_seconds``."""
        return SimClock(self._traveller, skew_seconds)


class WaitCountingClock(SimClock):
    """A :class:`SimClock` that counts the waits its owner makes (``sleep``): the fault suite
    gives it to the worker to count in-Lambda waits (paid time, a lease held longer)."""

    def __init__(self, traveller: time_machine.Coordinates, skew_seconds: float = 0.0) -> None:
        super().__init__(traveller, skew_seconds)
        self.waits: list[float] = []

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.waits.append(seconds)
        super().sleep(seconds)
