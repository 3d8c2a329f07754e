"""The materializer's pure planning (issue 13): what to write now and when to come back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from functions.materializer.handler import make_lambda_handler
from local.emulation.lambda_runtime import LambdaContext
from scheduled_posts.logic.materialize import MaterializeResult, next_extension, plan_extension
from scheduled_posts.models.series import Series, SeriesStatus
from scheduled_posts.settings import Settings

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
MS = timedelta(milliseconds=1)


def series(cron: str, **fields: Any) -> Series:
    values: dict[str, Any] = {
        "series_id": "s1",
        "owner": "alice",
        "status": SeriesStatus.ACTIVE,
        "content": "x",
        "channel_ids": ["c1"],
        "timezone": "UTC",
        "cron": cron,
        "starts_at": NOW,
        "created_at": NOW,
        "updated_at": NOW,
        "materialized_through": NOW - MS,
        **fields,
    }
    return Series(**values)


def test_plan_extension_horizon_limits_a_daily_rule() -> None:
    planned, through = plan_extension(series("0 9 * * *"), now=NOW, settings=Settings())

    assert [o.occurrence_at.day for o in planned] == [30, 1]
    assert through == NOW + timedelta(hours=48)


def test_plan_extension_count_limits_a_dense_rule() -> None:
    settings = Settings(RECURRENCE_MAX_AHEAD=3)

    planned, through = plan_extension(series("*/5 * * * *"), now=NOW, settings=settings)

    assert len(planned) == 3
    assert through == planned[-1].occurrence_at


def test_plan_extension_nothing_when_the_buffer_is_full() -> None:
    settings = Settings(RECURRENCE_MAX_AHEAD=3)
    full = series("*/5 * * * *", materialized_through=NOW + timedelta(minutes=10))

    planned, through = plan_extension(full, now=NOW, settings=settings)

    assert (planned, through) == ([], full.materialized_through)


def test_next_extension_when_the_next_occurrence_enters_the_horizon() -> None:
    done = series("0 9 * * *", materialized_through=NOW + timedelta(hours=48))

    due = next_extension(done, now=NOW, settings=Settings())

    # The next after 2026-12-01T12:00Z is 2026-12-02T09:00Z; it enters 48 h earlier.
    assert due == datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def test_next_extension_full_buffer_when_half_has_fired() -> None:
    settings = Settings(RECURRENCE_MAX_AHEAD=4)
    done = series("*/5 * * * *", materialized_through=NOW + timedelta(minutes=15))

    due = next_extension(done, now=NOW, settings=settings)

    assert due == NOW + timedelta(minutes=10)


def test_next_extension_when_bounds_end_the_series_is_its_last_written_occurrence() -> None:
    last = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
    done = series("0 9 * * *", ends_at=last, materialized_through=NOW + timedelta(hours=48))

    # Nothing is left to write, but the last occurrence is still ahead: active until it is due.
    assert next_extension(done, now=NOW, settings=Settings()) == last
    assert next_extension(done, now=last, settings=Settings()) is None


def test_materializer_handler_fails_the_invocation_when_a_series_failed() -> None:
    handler = make_lambda_handler(lambda: MaterializeResult(series_read=2, failures=1))

    with pytest.raises(RuntimeError, match="1 series"):
        handler({}, LambdaContext("materializer", 120))  # type: ignore[arg-type]


def test_materializer_handler_returns_the_counts() -> None:
    handler = make_lambda_handler(lambda: MaterializeResult(series_read=2, series_extended=2))

    result = handler({}, LambdaContext("materializer", 120))  # type: ignore[arg-type]

    assert (result["series_read"], result["series_extended"]) == (2, 2)
