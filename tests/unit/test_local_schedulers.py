"""The local schedules: Scheduler-like events, one run per call, failures survived."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

from local.emulation.lambda_runtime import LambdaFunction, is_available
from local.schedulers import Schedule, scheduled_functions, scheduler_event
from scheduled_posts.settings import Settings


def test_scheduler_event_names_the_schedule_and_time() -> None:
    event = scheduler_event("sweeper", datetime(2026, 11, 29, 12, 0, tzinfo=UTC))
    assert event["time"] == "2026-11-29T12:00:00Z"
    assert event["source"] == "aws.scheduler"
    assert event["resources"][0].endswith(":schedule/default/sweeper")


def test_schedule_run_once_invokes_handler_with_event() -> None:
    events: list[dict[str, Any]] = []
    schedule = Schedule(LambdaFunction("sweeper", 5, handler=lambda e, c: events.append(e)), 60)
    schedule.run_once()
    assert len(events) == 1 and events[0]["detail-type"] == "Scheduled Event"


def test_schedule_failing_run_is_counted_and_survived() -> None:
    def handler(event: dict[str, Any], context: Any) -> None:
        raise RuntimeError("boom")

    schedule = Schedule(LambdaFunction("sweeper", 5, handler=handler), 60)
    schedule.run_once()
    schedule.run_once()
    assert (schedule.runs, schedule.failures) == (2, 2)


def test_schedule_thread_runs_at_start_and_stops_on_request() -> None:
    ran = threading.Event()
    events: list[dict[str, Any]] = []

    def handler(event: dict[str, Any], context: Any) -> None:
        events.append(event)
        ran.set()

    schedule = Schedule(LambdaFunction("sweeper", 5, handler=handler), 3600)
    schedule.start()
    assert ran.wait(5)
    schedule.stop()
    schedule.join(5)
    assert len(events) == 1


def test_scheduled_functions_run_the_verifier_every_verify_interval() -> None:
    settings = Settings(VERIFY_INTERVAL_SECONDS=120)
    schedules = dict(scheduled_functions(settings))
    assert schedules["verifier"] == 120
    assert set(schedules) == {"sweeper", "watchdog", "reconciler", "materializer", "verifier"}
    assert all(is_available(name) for name in schedules)  # each has its handler
