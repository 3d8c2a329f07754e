"""End to end on ``make run``'s stack (issue 13): a ``* * * * *`` recurring schedule delivers
one post per minute to a webhook, exactly once each and never early, and a PATCH of its content
changes the next delivery.

``MIN_RECURRENCE_INTERVAL_SECONDS=60`` allows the every-minute rule; ``RECURRENCE_MAX_AHEAD=1``
keeps one occurrence ahead, so the second one can only come from the materializer running on
its local schedule (every 5 s here). About two minutes of wall time: the rule's own pace.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any

import pytest

from local.client import ApiClient
from local.emulation.receiver import Receiver
from local.emulation.runner import StackProcess, free_port, stack_environment
from scheduled_posts.clock import parse_instant
from tests.e2e.test_local_stack import (
    JWT_SECRET,
    SETTINGS,
    START_TIMEOUT,
    STOP_TIMEOUT,
    _channel,
    _client,
    aws_port,  # noqa: F401 - the module's embedded AWS fixture
)

pytestmark = pytest.mark.e2e

MINUTE = 60.0


@pytest.fixture
def recurring_stack(aws_port: int) -> Iterator[tuple[StackProcess, int]]:  # noqa: F811
    api_port = free_port()
    process = StackProcess(
        stack_environment(
            JWT_SECRET,
            AWS_PORT=str(aws_port),
            API_PORT=str(api_port),
            MIN_RECURRENCE_INTERVAL_SECONDS="60",
            RECURRENCE_MAX_AHEAD="1",
            MATERIALIZE_INTERVAL_SECONDS="5",
            **SETTINGS,
        )
    )
    process.wait_ready(START_TIMEOUT)
    yield process, api_port
    process.stop(STOP_TIMEOUT)


def _occurrences(client: ApiClient, series_id: str) -> list[dict[str, Any]]:
    reply = client.request("GET", f"/v1/recurring-schedules/{series_id}/occurrences?limit=3")
    assert reply.status == 200, reply.body
    return list(reply.body["items"])


def _wait(predicate: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def test_every_minute_series_delivers_once_per_minute_and_patch_changes_the_next(
    recurring_stack: tuple[StackProcess, int],
    receiver: Receiver,
) -> None:
    client = _client(recurring_stack[1], "e2e-recurring")
    channel_id = _channel(client, receiver)
    created = client.request(
        "POST",
        "/v1/recurring-schedules",
        {"content": "v1", "channel_ids": [channel_id], "timezone": "UTC", "cron": "* * * * *"},
    )
    assert created.status == 201, created.body
    series_id = created.body["series_id"]

    def delivered(content: str) -> list[Any]:
        return [d for d in receiver.snapshot() if d.content == content]

    first = _wait(lambda: delivered("v1"), MINUTE + 45, "the first delivery")[0]
    # RECURRENCE_MAX_AHEAD=1: the next occurrence exists only once the materializer ran.
    _wait(
        lambda: [o for o in _occurrences(client, series_id) if o["schedule_id"]],
        45,
        "the materializer to write the next occurrence",
    )
    patched = client.request(
        "PATCH",
        f"/v1/recurring-schedules/{series_id}",
        {"content": "v2"},
        headers={"if-match": f'"{created.body["version"]}"'},
    )
    patched_at = datetime.now(UTC)
    assert patched.status == 200, patched.body
    _wait(lambda: delivered("v2"), MINUTE + 45, "the delivery after the PATCH")
    client.request("DELETE", f"/v1/recurring-schedules/{series_id}")
    time.sleep(2.0)  # a short window for any duplicate to arrive

    deliveries = sorted(receiver.snapshot(), key=lambda d: d.publish_at)
    counts = Counter(d.schedule_id for d in deliveries)
    assert set(counts.values()) == {1}
    assert receiver.resends == 0 and receiver.rejected == 0
    early = [d for d in deliveries if parse_instant(d.received_at) < parse_instant(d.publish_at)]
    assert early == []
    times = [parse_instant(d.publish_at) for d in deliveries]
    assert [(b - a).total_seconds() for a, b in pairwise(times)] == [MINUTE] * (len(times) - 1)
    assert deliveries[0].schedule_id == first.schedule_id
    # Every occurrence not yet due when the PATCH answered (so not yet claimed) carries it.
    after = [d for d in deliveries if parse_instant(d.publish_at) > patched_at]
    assert after
    assert {d.content for d in after} == {"v2"}
