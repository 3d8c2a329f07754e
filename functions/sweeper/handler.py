"""Sweeper Lambda (EventBridge Scheduler, every minute): send posts due within the lookahead."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from functools import cache
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from scheduled_posts.lifecycle.metric_names import Metric
from scheduled_posts.logic.sweep import Sweeper
from scheduled_posts.observability import logger, metrics, tracer
from scheduled_posts.settings import get_settings

Handler = Callable[[dict[str, Any], LambdaContext], dict[str, Any]]


@cache
def _default_sweeper() -> Sweeper:
    return Sweeper(get_settings())


def make_lambda_handler(sweeper_factory: Callable[[], Sweeper] = _default_sweeper) -> Handler:
    """The decorated Lambda entry point, over the sweeper ``sweeper_factory()`` returns."""

    @logger.inject_lambda_context(clear_state=True)
    @tracer.capture_lambda_handler
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        started = time.perf_counter()
        result = sweeper_factory().sweep(
            remaining_seconds=lambda: context.get_remaining_time_in_millis() / 1000
        )
        duration_ms = (time.perf_counter() - started) * 1000
        metrics.add_metric(
            name=Metric.SWEEP_DURATION_MS, unit=Metric.SWEEP_DURATION_MS.unit, value=duration_ms
        )
        logger.info("swept", extra={**asdict(result), "duration_ms": round(duration_ms, 1)})
        return asdict(result)

    return handler


lambda_handler = make_lambda_handler()
