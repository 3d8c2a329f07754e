"""Watchdog Lambda (EventBridge Scheduler, every minute): re-dispatch posts whose lease expired."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from scheduled_posts.logic.watchdog import WatchdogResult, rescue_expired_leases
from scheduled_posts.observability import logger, metrics, tracer
from scheduled_posts.settings import get_settings

Handler = Callable[[dict[str, Any], LambdaContext], dict[str, Any]]


def _default_run() -> WatchdogResult:
    return rescue_expired_leases(get_settings())


def make_lambda_handler(run: Callable[[], WatchdogResult] = _default_run) -> Handler:
    """The decorated Lambda entry point over ``run()`` (tests pass one with their collaborators)."""

    @logger.inject_lambda_context(clear_state=True)
    @tracer.capture_lambda_handler
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        result = run()
        logger.info("watchdog run", extra=asdict(result))
        if result.failures:
            # After every other lease was rescued: failing the invocation makes the Lambda
            # Errors alarm fire; the failed leases stay expired, so the next run retries them.
            raise RuntimeError(f"{result.failures} expired lease(s) or shard(s) failed")
        return asdict(result)

    return handler


lambda_handler = make_lambda_handler()
