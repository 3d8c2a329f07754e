"""Watchdog Lambda (EventBridge Scheduler, every minute): re-dispatch posts whose lease expired."""

from __future__ import annotations

from collections.abc import Callable

from scheduled_posts.logic.watchdog import WatchdogResult, rescue_expired_leases
from scheduled_posts.scheduled_job import Handler, scheduled_job_handler
from scheduled_posts.settings import get_settings


def _default_run() -> WatchdogResult:
    return rescue_expired_leases(get_settings())


def make_lambda_handler(run: Callable[[], WatchdogResult] = _default_run) -> Handler:
    """The decorated Lambda entry point over ``run()`` (tests pass one with their collaborators)."""
    return scheduled_job_handler(
        "watchdog", run, failed=lambda n: f"{n} expired lease(s) or shard(s) failed"
    )


lambda_handler = make_lambda_handler()
