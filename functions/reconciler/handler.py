"""Reconciler Lambda (EventBridge Scheduler, every ``RECONCILE_INTERVAL_SECONDS``): rescue posts
the fire path left behind and repair pending counters (``scheduled_posts.logic.reconcile``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from scheduled_posts.logic.reconcile import ReconcileResult, reconcile
from scheduled_posts.observability import logger, metrics, tracer
from scheduled_posts.settings import get_settings

Handler = Callable[[dict[str, Any], LambdaContext], dict[str, Any]]


def _default_run() -> ReconcileResult:
    return reconcile(get_settings())


def make_lambda_handler(run: Callable[[], ReconcileResult] = _default_run) -> Handler:
    """The decorated Lambda entry point over ``run()`` (tests pass one with their collaborators).

    Returns ``{"entries_read", "misses", "rescued", "pending_repaired", "send_failures",
    "failures"}``; raises ``RuntimeError`` after the run when ``failures`` is not 0.
    """

    @logger.inject_lambda_context(clear_state=True)
    @tracer.capture_lambda_handler
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        result = run()
        summary = {
            "entries_read": result.entries_read,
            "misses": result.misses,
            "rescued": result.rescued,
            "pending_repaired": result.pending_repaired,
            "send_failures": result.send_failures,
            "failures": result.failures,
        }
        logger.info("reconciler run", extra=summary)
        if result.failures:
            # After every other post was rescued: failing the invocation makes the Lambda
            # Errors alarm fire; the next run retries what failed.
            raise RuntimeError(f"{result.failures} post(s) or owner(s) could not be reconciled")
        return summary

    return handler


lambda_handler = make_lambda_handler()
