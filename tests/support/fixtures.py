"""Shared pytest fixtures: a simulated clock, moto with the service's tables and queues, settings.

Resources come from ``scheduled_posts.tables`` (the same definitions the CDK app and the local
stack use).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
import time_machine
from moto import mock_aws

from local.emulation.resources import (
    ensure_credentials_key,
    ensure_event_bus,
    ensure_import_queues,
    ensure_notify_queues,
    ensure_resources,
)
from scheduled_posts.settings import Settings
from scheduled_posts.sizing import (
    DEFAULT_IMPORTER_TIMEOUT_SECONDS,
    DEFAULT_NOTIFIER_TIMEOUT_SECONDS,
    visibility_timeout_seconds,
)
from scheduled_posts.tables import (
    ALL_QUEUES,
    ALL_TABLES,
    IMPORT_MAX_RECEIVES,
    IMPORT_QUEUES,
    NOTIFY_QUEUES,
)
from tests.support.clock import SimClock

#: The simulated "now" every test starts at unless it travels elsewhere.
START = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> Iterator[SimClock]:
    """A :class:`SimClock` starting at :data:`START`; ticking is off (time moves only when told)."""
    with time_machine.travel(START, tick=False) as traveller:
        yield SimClock(traveller)


@dataclass
class AwsResources:
    """Names and URLs of the moto resources of one test, plus ready clients."""

    settings: Settings
    dynamodb: Any
    sqs: Any


#: The worker timeout the tests' queues are sized for: the dispatch queue hides a received
#: message for 6 x 90 = 540 s (:func:`scheduled_posts.sizing.visibility_timeout_seconds`).
TEST_WORKER_TIMEOUT_SECONDS = 90
#: The dispatch queue's visibility timeout in the tests (seconds).
TEST_VISIBILITY_SECONDS = visibility_timeout_seconds(TEST_WORKER_TIMEOUT_SECONDS)


def create_resources(prefix: str = "test", **overrides: Any) -> AwsResources:
    """Create every table and queue in the current moto backend; returns settings that name them.

    Call inside ``mock_aws()``. ``overrides`` are extra :class:`Settings` fields. The resources
    come from :func:`local.emulation.resources.ensure_resources`, as the local stack's do.
    """
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    sqs = boto3.client("sqs", region_name="us-east-1")
    names: dict[str, Any] = ensure_resources(
        dynamodb,
        sqs,
        table_names={table.settings_name: f"{prefix}-{table.logical_id}" for table in ALL_TABLES},
        queue_names={queue.logical_id: f"{prefix}-{queue.logical_id}" for queue in ALL_QUEUES},
        max_receive_count=overrides.get("MAX_RECEIVE_COUNT", Settings().MAX_RECEIVE_COUNT),
        worker_timeout_seconds=TEST_WORKER_TIMEOUT_SECONDS,
    )
    names.update(
        ensure_notify_queues(
            sqs,
            queue_names={q.logical_id: f"{prefix}-{q.logical_id}" for q in NOTIFY_QUEUES},
            max_attempts=overrides.get("NOTIFY_MAX_ATTEMPTS", Settings().NOTIFY_MAX_ATTEMPTS),
            notifier_timeout_seconds=DEFAULT_NOTIFIER_TIMEOUT_SECONDS,
        )
    )
    names.update(
        ensure_import_queues(
            sqs,
            queue_names={q.logical_id: f"{prefix}-{q.logical_id}" for q in IMPORT_QUEUES},
            max_receives=IMPORT_MAX_RECEIVES,
            importer_timeout_seconds=DEFAULT_IMPORTER_TIMEOUT_SECONDS,
        )
    )
    kms = boto3.client("kms", region_name="us-east-1")
    names["CREDENTIALS_KEY_ID"] = ensure_credentials_key(kms)
    names["EVENT_BUS_NAME"] = f"{prefix}-EventBus"
    ensure_event_bus(boto3.client("events", region_name="us-east-1"), names["EVENT_BUS_NAME"])
    names.setdefault("CURSOR_SECRET", "test-cursor-secret")
    names.update(overrides)
    return AwsResources(settings=Settings(**names), dynamodb=dynamodb, sqs=sqs)


@pytest.fixture
def aws(clock: SimClock) -> Iterator[AwsResources]:
    """moto in-process with fresh tables and queues; runs under the simulated clock."""
    with mock_aws():
        yield create_resources()


@pytest.fixture(scope="session")
def local_pds() -> Iterator[Any]:
    """The reference Bluesky PDS on 127.0.0.1 (``local/bluesky.py``), once per test session.

    Installed by ``make pds-install`` (``make test`` runs it); a missing install fails the
    tests that need it rather than skipping them.
    """
    from local.bluesky import LocalPds

    with LocalPds() as running:
        yield running
