"""The outbox: the posts table's stream, the relay's event source mapping, its least privilege,
the bus, the DLQ and the alarms."""

from __future__ import annotations

import json
from typing import Any

from tests.infrastructure.conftest import Synthesized
from tests.infrastructure.test_functions import _function, _policy_documents


def _mapping(stage: Synthesized) -> dict[str, Any]:
    """The relay's event source mapping (the only one on a stream)."""
    mappings = stage.of_type("AWS::Lambda::EventSourceMapping").values()
    (props,) = [m["Properties"] for m in mappings if "StartingPosition" in m["Properties"]]
    return dict(props)


def test_posts_table_streams_new_and_old_images(dev: Synthesized) -> None:
    props = dev.resources["PostsTable"]["Properties"]
    assert props["StreamSpecification"] == {"StreamViewType": "NEW_AND_OLD_IMAGES"}
    for other in ("DueIndexTable", "IdempotencyTable"):
        assert "StreamSpecification" not in dev.resources[other]["Properties"]


def test_relay_mapping_keeps_order_retries_and_dead_letters(dev: Synthesized) -> None:
    props = _mapping(dev)
    assert props["EventSourceArn"] == {"Fn::GetAtt": ["PostsTable", "StreamArn"]}
    assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert props["BisectBatchOnFunctionError"] is True
    assert props["ParallelizationFactor"] == 1
    assert props["StartingPosition"] == "TRIM_HORIZON"
    dlq = dev.logical_id(dev.stack.outbox.dlq)
    destination = props["DestinationConfig"]["OnFailure"]["Destination"]
    assert destination == {"Fn::GetAtt": [dlq, "Arn"]}


def test_relay_mapping_passes_only_post_and_series_items(dev: Synthesized) -> None:
    (pattern,) = _mapping(dev)["FilterCriteria"]["Filters"]
    assert json.loads(pattern["Pattern"]) == {
        "dynamodb": {"Keys": {"sk": {"S": ["POST", {"prefix": "SERIES"}]}}}
    }


def test_relay_role_writes_feed_items_counters_and_events_only(dev: Synthesized) -> None:
    policies = _policy_documents(dev, "relay")
    for action in ("dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem",
                   "dynamodb:DeleteItem", "events:PutEvents"):  # fmt: skip
        assert action in policies
    for forbidden in ("dynamodb:Scan", "dynamodb:BatchWriteItem", "IdempotencyTable",
                      "DueIndexTable", "sqs:ReceiveMessage"):  # fmt: skip
        assert forbidden not in policies


def test_relay_env_names_the_bus_and_the_posts_table(dev: Synthesized) -> None:
    env = _function(dev, "relay")["Properties"]["Environment"]["Variables"]
    assert env["POSTS_TABLE_NAME"] == {"Ref": "PostsTable"}
    assert env["BUS_EVENT_TYPES"] == (
        "post.published,post.partially_published,post.failed,post.missed,delivery.failed"
    )
    bus = dev.logical_id(dev.stack.outbox.bus)
    assert env["EVENT_BUS_NAME"] == {"Ref": bus}


def test_outbox_alarms_exist(dev: Synthesized) -> None:
    alarms = dev.stack.monitoring.alarms
    assert {"RelayErrorsAlarm", "RelayDlqAlarm", "RelayIteratorAgeAlarm"} <= set(alarms)
    age = dev.resources[dev.logical_id(alarms["RelayIteratorAgeAlarm"])]["Properties"]
    assert age["MetricName"] == "IteratorAge"
    assert age["Threshold"] == dev.config.relay_iterator_age_alarm_seconds * 1000
