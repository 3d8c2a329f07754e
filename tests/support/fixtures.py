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

from scheduled_posts.settings import Settings
from scheduled_posts.tables import ALL_QUEUES, ALL_TABLES, create_table_request
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


def create_resources(prefix: str = "test", **overrides: Any) -> AwsResources:
    """Create every table and queue in the current moto backend; returns settings that name them.

    Call inside ``mock_aws()``. ``overrides`` are extra :class:`Settings` fields.
    """
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    sqs = boto3.client("sqs", region_name="us-east-1")
    names: dict[str, Any] = {}
    for table in ALL_TABLES:
        name = f"{prefix}-{table.logical_id}"
        dynamodb.create_table(**create_table_request(table, name))
        if table.ttl_attribute:
            dynamodb.update_time_to_live(
                TableName=name,
                TimeToLiveSpecification={"Enabled": True, "AttributeName": table.ttl_attribute},
            )
        names[table.settings_name] = name
    urls: dict[str, str] = {}
    for queue in ALL_QUEUES:
        attributes = {"MessageRetentionPeriod": str(queue.retention_days * 86400)}
        if queue.dead_letter:
            dlq_arn = sqs.get_queue_attributes(
                QueueUrl=urls[queue.dead_letter], AttributeNames=["QueueArn"]
            )["Attributes"]["QueueArn"]
            max_receive = overrides.get("MAX_RECEIVE_COUNT", Settings().MAX_RECEIVE_COUNT)
            attributes["RedrivePolicy"] = (
                f'{{"deadLetterTargetArn": "{dlq_arn}", "maxReceiveCount": "{max_receive}"}}'
            )
            attributes["VisibilityTimeout"] = "540"
        url = sqs.create_queue(QueueName=f"{prefix}-{queue.logical_id}", Attributes=attributes)[
            "QueueUrl"
        ]
        urls[queue.logical_id] = url
        names[queue.settings_name] = url
    names.setdefault("CURSOR_SECRET", "test-cursor-secret")
    names.update(overrides)
    return AwsResources(settings=Settings(**names), dynamodb=dynamodb, sqs=sqs)


@pytest.fixture
def aws(clock: SimClock) -> Iterator[AwsResources]:
    """moto in-process with fresh tables and queues; runs under the simulated clock."""
    with mock_aws():
        yield create_resources()
