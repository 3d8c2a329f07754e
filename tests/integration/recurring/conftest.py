"""Fixtures of the recurring-schedule tests: the API on moto under the SimClock, a caller
with a channel, and the materializer run in-process on the same clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from functions.materializer.handler import materialize_deps
from scheduled_posts.logic.materialize import MaterializeResult, materialize_due
from scheduled_posts.settings import Settings
from tests.support.api import ApiClient, install_api, uninstall_api
from tests.support.clock import SimClock
from tests.support.fixtures import AwsResources


@dataclass
class World:
    """One user (``alice``, with ``channel``), another (``bob``), the settings and clock."""

    settings: Settings
    clock: SimClock
    alice: ApiClient
    bob: ApiClient
    channel: str

    def materialize(self) -> MaterializeResult:
        """One materializer run at the simulated now."""
        return materialize_due(deps=materialize_deps(self.settings, self.clock))

    def series_body(self, **fields: Any) -> dict[str, Any]:
        """A create body on alice's channel, daily at 09:00 UTC; ``fields`` override it."""
        body = {"content": "hello", "channel_ids": [self.channel], "timezone": "UTC", **fields}
        if "cron" not in body and "slots" not in body:
            body["cron"] = "0 9 * * *"
        return body

    def create(self, **fields: Any) -> dict[str, Any]:
        """Create a series for alice (asserts the 201); ``fields`` override the defaults."""
        answer = self.alice.post("/v1/recurring-schedules", self.series_body(**fields))
        assert answer.status == 201, answer.json
        return dict(answer.json)

    def posts(self, series_id: str, status: str | None = None) -> list[dict[str, Any]]:
        """Every occurrence post of a series (GET /v1/scheduled-posts?series_id=)."""
        query = {"series_id": series_id, "limit": "100"}
        if status:
            query["status"] = status
        answer = self.alice.get("/v1/scheduled-posts", query=query)
        assert answer.status == 200, answer.json
        assert answer.json["next_cursor"] is None
        return list(answer.json["items"])

    def publish_times(self, series_id: str, status: str = "scheduled") -> list[str]:
        return [p["publish_at"] for p in self.posts(series_id, status)]


@pytest.fixture
def make_world(aws: AwsResources, clock: SimClock) -> Iterator[Callable[..., World]]:
    """``make_world(**settings)``: install the API with extra settings and a channel."""

    def make(**overrides: Any) -> World:
        settings = aws.settings.model_copy(update=overrides)
        install_api(settings, clock)
        alice = ApiClient("alice")
        return World(settings, clock, alice, ApiClient("bob"), alice.create_channel())

    yield make
    uninstall_api()


@pytest.fixture
def world(make_world: Callable[..., World]) -> World:
    return make_world()
