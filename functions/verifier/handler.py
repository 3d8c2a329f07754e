"""Verifier Lambda (EventBridge Scheduler, every ``VERIFY_INTERVAL_SECONDS``): read recently
published network deliveries back (``scheduled_posts.logic.verify_job``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from scheduled_posts.clock import SystemClock
from scheduled_posts.logic.verify_job import VerifyRunResult, verify_recent
from scheduled_posts.observability import logger, metrics, tracer
from scheduled_posts.settings import get_settings

Handler = Callable[[dict[str, Any], LambdaContext], dict[str, Any]]


def _default_run() -> VerifyRunResult:
    return verify_recent(get_settings(), SystemClock())


def make_lambda_handler(run: Callable[[], VerifyRunResult] = _default_run) -> Handler:
    """The decorated Lambda entry point over ``run()`` (tests pass one with their collaborators).

    Returns ``{"entries_read", "posts_verified", "outcomes", "deferred", "failures"}``; raises
    ``RuntimeError`` after the run when ``failures`` is not 0 (the Errors alarm; the next run
    reads those posts again).
    """

    @logger.inject_lambda_context(clear_state=True)
    @tracer.capture_lambda_handler
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        result = run()
        summary = {
            "entries_read": result.entries_read,
            "posts_verified": result.posts_verified,
            "outcomes": result.outcomes,
            "deferred": result.deferred,
            "failures": result.failures,
        }
        logger.info("verifier run", extra=summary)
        if result.failures:
            raise RuntimeError(f"{result.failures} post(s) could not be verified")
        return summary

    return handler


lambda_handler = make_lambda_handler()
