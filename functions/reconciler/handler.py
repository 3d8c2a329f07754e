"""Reconciler Lambda (EventBridge Scheduler, every ``RECONCILE_INTERVAL_SECONDS``): rescue posts
the fire path left behind and repair pending counters (``scheduled_posts.logic.reconcile``)."""

from __future__ import annotations

from collections.abc import Callable

from scheduled_posts.logic.reconcile import ReconcileResult, reconcile
from scheduled_posts.scheduled_job import Handler, scheduled_job_handler
from scheduled_posts.settings import get_settings


def _default_run() -> ReconcileResult:
    return reconcile(get_settings())


def make_lambda_handler(run: Callable[[], ReconcileResult] = _default_run) -> Handler:
    """The decorated Lambda entry point over ``run()`` (tests pass one with their collaborators).

    Returns ``{"entries_read", "misses", "rescued", "pending_repaired", "send_failures",
    "failures"}``; raises ``RuntimeError`` after the run when ``failures`` is not 0.
    """
    return scheduled_job_handler(
        "reconciler",
        run,
        fields=(
            "entries_read",
            "misses",
            "rescued",
            "pending_repaired",
            "send_failures",
            "failures",
        ),
        failed=lambda n: f"{n} post(s) or owner(s) could not be reconciled",
    )


lambda_handler = make_lambda_handler()
