"""Verifier Lambda (EventBridge Scheduler, every ``VERIFY_INTERVAL_SECONDS``): read recently
published network deliveries back (``scheduled_posts.logic.verify_job``)."""

from __future__ import annotations

from collections.abc import Callable

from scheduled_posts.clock import SystemClock
from scheduled_posts.logic.verify_job import VerifyRunResult, verify_recent
from scheduled_posts.scheduled_job import Handler, scheduled_job_handler
from scheduled_posts.settings import get_settings


def _default_run() -> VerifyRunResult:
    return verify_recent(get_settings(), SystemClock())


def make_lambda_handler(run: Callable[[], VerifyRunResult] = _default_run) -> Handler:
    """The decorated Lambda entry point over ``run()`` (tests pass one with their collaborators).

    Returns ``{"entries_read", "posts_verified", "outcomes", "deferred", "failures"}``; raises
    ``RuntimeError`` after the run when ``failures`` is not 0 (the Errors alarm; the next run
    reads those posts again).
    """
    return scheduled_job_handler(
        "verifier",
        run,
        fields=("entries_read", "posts_verified", "outcomes", "deferred", "failures"),
        failed=lambda n: f"{n} post(s) could not be verified",
    )


lambda_handler = make_lambda_handler()
