"""Materializer Lambda (EventBridge Scheduler, every ``MATERIALIZE_INTERVAL_SECONDS``):
extend every recurring schedule whose next occurrences are due to be written (issue 13)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from scheduled_posts.clock import SystemClock
from scheduled_posts.data.posts import PostRepository
from scheduled_posts.data.series import SeriesRepository
from scheduled_posts.logic.materialize import MaterializeDeps, MaterializeResult, materialize_due
from scheduled_posts.observability import logger, metrics, tracer
from scheduled_posts.settings import Settings, get_settings

Handler = Callable[[dict[str, Any], LambdaContext], dict[str, Any]]


def materialize_deps(settings: Settings, clock: Any | None = None) -> MaterializeDeps:
    """The materializer's collaborators for ``settings`` (the process's DynamoDB resource).

    No promoter: an occurrence due within the lookahead gets a late marker, and the next sweep
    sends it (the materializer has no queue permission).
    """
    posts = PostRepository(
        posts_table_name=settings.POSTS_TABLE_NAME,
        due_table_name=settings.DUE_INDEX_TABLE_NAME,
        misfire_grace_seconds=settings.MISFIRE_GRACE_SECONDS,
    )
    series = SeriesRepository(
        posts_table_name=settings.POSTS_TABLE_NAME,
        due_table_name=settings.DUE_INDEX_TABLE_NAME,
        posts=posts,
    )
    return MaterializeDeps(
        series=series, posts=posts, settings=settings, clock=clock or SystemClock()
    )


def _default_run() -> MaterializeResult:
    return materialize_due(deps=materialize_deps(get_settings()))


def make_lambda_handler(run: Callable[[], MaterializeResult] = _default_run) -> Handler:
    """The decorated Lambda entry point over ``run()`` (tests pass one with their collaborators)."""

    @logger.inject_lambda_context(clear_state=True)
    @tracer.capture_lambda_handler
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        result = run()
        logger.info("materializer run", extra=asdict(result))
        if result.failures:
            # Failing the invocation makes the Lambda Errors alarm fire; the watermark stayed
            # before every failed series, so the next run retries them.
            raise RuntimeError(f"{result.failures} series could not be extended")
        return asdict(result)

    return handler


lambda_handler = make_lambda_handler()
