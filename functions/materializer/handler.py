"""Materializer Lambda (EventBridge Scheduler, every ``MATERIALIZE_INTERVAL_SECONDS``):
extend every recurring schedule whose next occurrences are due to be written
(``docs/recurring.md``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scheduled_posts.clock import SystemClock
from scheduled_posts.data.posts import PostRepository
from scheduled_posts.data.series import SeriesRepository
from scheduled_posts.logic.materialize import MaterializeDeps, MaterializeResult, materialize_due
from scheduled_posts.scheduled_job import Handler, scheduled_job_handler
from scheduled_posts.settings import Settings, get_settings


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
    return scheduled_job_handler(
        "materializer", run, failed=lambda n: f"{n} series could not be extended"
    )


lambda_handler = make_lambda_handler()
