"""Fixtures of the operations tests: the dispatch tests' wired fire path (``fire``,
``make_fire``), that path with the API on its tables (``api_fire``), plus helpers to shape
channels and read metrics."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from scheduled_posts.observability import metrics
from tests.integration.dispatch.conftest import FirePath, build_fire_path, fire, make_fire
from tests.support.api import install_api, uninstall_api
from tests.support.clock import SimClock

__all__ = ["api_fire", "emitted_metric", "fire", "make_fire", "set_rate_limit"]


@pytest.fixture
def api_fire(clock: SimClock) -> Iterator[Callable[..., FirePath]]:
    """``api_fire(**settings)``: a fire path with the API installed on the same tables
    (retries 2 s apart at first)."""
    with mock_aws():

        def build(**overrides: object) -> FirePath:
            fire = build_fire_path(clock, RETRY_BASE_SECONDS=2.0, **overrides)
            install_api(fire.settings, clock)
            return fire

        yield build
        uninstall_api()


def set_rate_limit(fire: FirePath, channel_id: str, per_minute: int, owner: str = "alice") -> None:
    """Give an existing channel a ``rate_limit_per_minute``."""
    boto3.resource("dynamodb", region_name="us-east-1").Table(
        fire.settings.POSTS_TABLE_NAME
    ).update_item(
        Key={"pk": f"OWNER#{owner}", "sk": f"CHANNEL#{channel_id}"},
        UpdateExpression="SET rate_limit_per_minute = :r",
        ExpressionAttributeValues={":r": per_minute},
    )


def emitted_metric(output: str, name: str) -> list[float]:
    """Every value of metric ``name`` in the EMF lines Powertools printed to stdout."""
    values: list[float] = []
    for raw in output.splitlines():
        line = raw.strip()
        if not line.startswith("{"):
            continue
        try:
            blob: dict[str, Any] = json.loads(line)
        except ValueError:
            continue
        if "_aws" in blob and name in blob:
            value = blob[name]
            values.extend(float(v) for v in (value if isinstance(value, list) else [value]))
    return values


@pytest.fixture(autouse=True)
def _fresh_metrics() -> Iterator[None]:
    """Powertools keeps unflushed metrics in a process-wide buffer: start and end each test
    with it empty, so a metric read from a handler's output is that handler's own."""
    metrics.clear_metrics()
    yield
    metrics.clear_metrics()
