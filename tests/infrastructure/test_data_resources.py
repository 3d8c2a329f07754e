"""Tables and queues: stable logical ids, PITR, encryption, TTL, keys, removal policies."""

from __future__ import annotations

import pytest
from aws_cdk.assertions import Match

from scheduled_posts.tables import ALL_QUEUES, ALL_TABLES, TableDef
from tests.infrastructure.conftest import Synthesized

TABLE_IDS = [t.logical_id for t in ALL_TABLES]


@pytest.mark.parametrize(
    ("logical_id", "resource_type"),
    [
        ("PostsTable", "AWS::DynamoDB::Table"),
        ("DueIndexTable", "AWS::DynamoDB::Table"),
        ("IdempotencyTable", "AWS::DynamoDB::Table"),
        ("DispatchQueue", "AWS::SQS::Queue"),
        ("DispatchDLQ", "AWS::SQS::Queue"),
    ],
)
def test_stateful_resource_logical_id_is_stable(
    prod: Synthesized, logical_id: str, resource_type: str
) -> None:
    # A changed logical id makes CloudFormation replace the resource, i.e. lose the table.
    assert prod.resources[logical_id]["Type"] == resource_type


def test_tables_exactly_the_three_definitions(dev: Synthesized) -> None:
    assert sorted(dev.of_type("AWS::DynamoDB::Table")) == sorted(TABLE_IDS)


@pytest.mark.parametrize("table", ALL_TABLES, ids=TABLE_IDS)
def test_table_point_in_time_recovery_enabled(dev: Synthesized, table: TableDef) -> None:
    props = dev.resources[table.logical_id]["Properties"]
    assert props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True


@pytest.mark.parametrize("table", ALL_TABLES, ids=TABLE_IDS)
def test_table_encrypted_on_demand_stream_as_defined(dev: Synthesized, table: TableDef) -> None:
    props = dev.resources[table.logical_id]["Properties"]
    assert props["SSESpecification"]["SSEEnabled"] is True
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    stream = props.get("StreamSpecification", {}).get("StreamViewType")
    assert stream == table.stream_view_type


@pytest.mark.parametrize("table", ALL_TABLES, ids=TABLE_IDS)
def test_table_ttl_attribute_matches_definition(dev: Synthesized, table: TableDef) -> None:
    ttl = dev.resources[table.logical_id]["Properties"]["TimeToLiveSpecification"]
    assert ttl == {"AttributeName": table.ttl_attribute, "Enabled": True}


@pytest.mark.parametrize("table", ALL_TABLES, ids=TABLE_IDS)
def test_table_keys_and_indexes_match_definition(dev: Synthesized, table: TableDef) -> None:
    props = dev.resources[table.logical_id]["Properties"]
    keys = {k["AttributeName"]: k["KeyType"] for k in props["KeySchema"]}
    expected = {table.partition_key: "HASH"} | ({table.sort_key: "RANGE"} if table.sort_key else {})
    assert keys == expected
    indexes = {
        gsi["IndexName"]: (
            [k["AttributeName"] for k in gsi["KeySchema"]],
            gsi["Projection"]["ProjectionType"],
        )
        for gsi in props.get("GlobalSecondaryIndexes", [])
    }
    assert indexes == {
        i.name: ([i.partition_key, *([i.sort_key] if i.sort_key else [])], i.projection)
        for i in table.indexes
    }


@pytest.mark.parametrize("table", ALL_TABLES, ids=TABLE_IDS)
def test_table_prod_retained_and_protected(prod: Synthesized, table: TableDef) -> None:
    resource = prod.resources[table.logical_id]
    assert resource["DeletionPolicy"] == "Retain"
    assert resource["UpdateReplacePolicy"] == "Retain"
    assert resource["Properties"]["DeletionProtectionEnabled"] is True


@pytest.mark.parametrize("table", ALL_TABLES, ids=TABLE_IDS)
def test_table_dev_destroyed_on_stack_delete(dev: Synthesized, table: TableDef) -> None:
    assert dev.resources[table.logical_id]["DeletionPolicy"] == "Delete"


def test_dispatch_queue_redrives_to_dlq_after_max_receive_count(dev: Synthesized) -> None:
    dev.template.has_resource_properties(
        "AWS::SQS::Queue",
        {
            "RedrivePolicy": {
                "deadLetterTargetArn": {"Fn::GetAtt": ["DispatchDLQ", "Arn"]},
                "maxReceiveCount": dev.config.settings.MAX_RECEIVE_COUNT,
            }
        },
    )
    assert "RedrivePolicy" in dev.resources["DispatchQueue"]["Properties"]


def test_queues_all_server_side_encrypted(dev: Synthesized) -> None:
    queues = dev.of_type("AWS::SQS::Queue")
    # plus one DLQ per schedule, the outbox relay's DLQ, the notify queue with its DLQ and
    # the import queue with its DLQ
    assert len(queues) == len(ALL_QUEUES) + 5 + 1 + 2 + 2
    for logical_id, queue in queues.items():
        assert queue["Properties"].get("SqsManagedSseEnabled") is True, logical_id


def test_queues_all_deny_insecure_transport(dev: Synthesized) -> None:
    assert dev.queues_denying_insecure_transport() == set(dev.of_type("AWS::SQS::Queue"))


def test_dispatch_queue_visibility_at_least_six_worker_timeouts(dev: Synthesized) -> None:
    worker = dev.resources[dev.logical_id(dev.stack.dispatch.worker)]
    visibility = dev.resources["DispatchQueue"]["Properties"]["VisibilityTimeout"]
    assert visibility >= 6 * worker["Properties"]["Timeout"]


def test_worker_event_source_reports_partial_batch_failures(dev: Synthesized) -> None:
    dev.template.has_resource_properties(
        "AWS::Lambda::EventSourceMapping",
        {
            "EventSourceArn": {"Fn::GetAtt": ["DispatchQueue", "Arn"]},
            "FunctionName": {"Ref": dev.logical_id(dev.stack.dispatch.worker)},
            "FunctionResponseTypes": ["ReportBatchItemFailures"],
            "BatchSize": dev.config.worker_batch_size,
            "ScalingConfig": {"MaximumConcurrency": dev.config.worker_max_concurrency},
        },
    )


def test_worker_full_batch_fits_twice_in_its_timeout(dev: Synthesized) -> None:
    # Deliveries of one post run concurrently: at most DELIVERY_TIMEOUT_SECONDS + 2 s a post.
    timeout = dev.resources[dev.logical_id(dev.stack.dispatch.worker)]["Properties"]["Timeout"]
    per_post = dev.config.settings.DELIVERY_TIMEOUT_SECONDS + 2
    assert timeout >= 2 * dev.config.worker_batch_size * per_post
    assert per_post < dev.config.settings.LEASE_SECONDS


def test_layer_arm64_for_the_function_runtime(dev: Synthesized) -> None:
    dev.template.has_resource_properties(
        "AWS::Lambda::LayerVersion",
        {
            "CompatibleArchitectures": ["arm64"],
            "CompatibleRuntimes": [f"python{dev.config.python_version}"],
        },
    )


def test_only_the_posts_table_has_a_stream(dev: Synthesized) -> None:
    dev.template.resource_properties_count_is(
        "AWS::DynamoDB::Table", {"StreamSpecification": Match.any_value()}, 1
    )
