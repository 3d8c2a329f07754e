"""The schedules: sweeper, watchdog, reconciler, materializer, verifier, each on its own interval.

In AWS, EventBridge Scheduler invokes each Lambda at a fixed rate; here a thread per schedule
calls the same handler in-process with a Scheduler-like event, at a fixed rate from its start
(a run that overruns its interval delays the next one: runs never overlap here). The first run
happens at start, so a restarted stack catches up at once.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from local.emulation.background import BackgroundLoop
from local.emulation.lambda_runtime import ACCOUNT, REGION, LambdaFunction
from scheduled_posts.settings import Settings

log = logging.getLogger("local.schedules")


def scheduled_functions(settings: Settings) -> list[tuple[str, int]]:
    """``(function name, interval in seconds)`` of every scheduled function, the same settings
    as the deployed EventBridge Scheduler schedules (``infra/dispatch.py``)."""
    return [
        ("sweeper", settings.SWEEP_INTERVAL_SECONDS),
        ("watchdog", settings.WATCHDOG_INTERVAL_SECONDS),
        ("reconciler", settings.RECONCILE_INTERVAL_SECONDS),
        ("materializer", settings.MATERIALIZE_INTERVAL_SECONDS),
        ("verifier", settings.VERIFY_INTERVAL_SECONDS),
    ]


def scheduler_event(schedule_name: str, now: datetime | None = None) -> dict[str, Any]:
    """The event EventBridge Scheduler's default Lambda target input resembles.

    ``time`` is the scheduled time (RFC 3339, UTC, seconds); ``resources`` holds the schedule ARN.
    """
    now = now or datetime.now(UTC)
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.scheduler",
        "account": ACCOUNT,
        "time": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": REGION,
        "resources": [f"arn:aws:scheduler:{REGION}:{ACCOUNT}:schedule/default/{schedule_name}"],
        "detail": {},
    }


class Schedule(BackgroundLoop):
    """Calls ``function`` every ``interval_seconds`` (the first run at :meth:`start`) until
    :meth:`stop`.

    ``on_result`` receives each run's result (logging); a run that raises is logged and the
    schedule goes on (EventBridge Scheduler would retry it; the next run does the same work).
    """

    def __init__(
        self,
        function: LambdaFunction,
        interval_seconds: float,
        *,
        stop_event: threading.Event | None = None,
        on_result: Callable[[Any], None] | None = None,
    ) -> None:
        super().__init__(f"schedule-{function.name}", stop_event)
        self.function = function
        self.interval_seconds = interval_seconds
        self.on_result = on_result
        self.runs = 0
        self.failures = 0

    def run_once(self) -> None:
        """One invocation, as a scheduled run."""
        self.runs += 1
        try:
            result, _ = self.function.invoke(
                scheduler_event(f"scheduled-posts-{self.function.name}")
            )
        except Exception:
            self.failures += 1
            log.exception("scheduled run failed: %s", self.function.name)
            return
        if self.on_result is not None:
            self.on_result(result)

    def _loop(self) -> None:
        next_run = time.monotonic()
        while not self.stop_event.is_set():
            self.run_once()
            next_run += self.interval_seconds
            now = time.monotonic()
            next_run = max(next_run, now)  # an overrun starts the next period now
            if self.stop_event.wait(next_run - now):
                break
