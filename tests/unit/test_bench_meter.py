"""The request and capacity-unit meter of ``bench/meter.py`` on moto in-process."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from bench.meter import Meter


def _table(aws: Any) -> Any:
    return boto3.resource("dynamodb", region_name="us-east-1").Table(
        aws.settings.DUE_INDEX_TABLE_NAME
    )


def test_meter_update_charged_on_larger_of_before_and_after(aws: Any) -> None:
    meter = Meter()
    with meter.installed():
        table = _table(aws)
        table.put_item(Item={"bucket": "b", "due": "d", "payload": "x" * 3000})
        meter.phase = "update"
        table.update_item(
            Key={"bucket": "b", "due": "d"},
            UpdateExpression="REMOVE payload",
        )
    assert meter.usage.total("write_units", phase="update") == 3


def test_meter_failed_condition_still_charged(aws: Any) -> None:
    meter = Meter()
    with meter.installed():
        table = _table(aws)
        table.put_item(Item={"bucket": "b", "due": "d"})
        meter.phase = "conflict"
        with pytest.raises(ClientError):
            table.put_item(
                Item={"bucket": "b", "due": "d"},
                ConditionExpression="attribute_not_exists(#b)",
                ExpressionAttributeNames={"#b": "bucket"},
            )
    assert meter.usage.total("write_units", phase="conflict") == 1
    assert meter.usage.total("failed_conditions", phase="conflict") == 1


def test_meter_query_counts_scanned_items(aws: Any) -> None:
    meter = Meter()
    with meter.installed():
        table = _table(aws)
        for i in range(3):
            table.put_item(Item={"bucket": "b", "due": f"d{i}"})
        meter.phase = "read"
        table.query(
            KeyConditionExpression="#b = :b",
            ExpressionAttributeNames={"#b": "bucket"},
            ExpressionAttributeValues={":b": "b"},
        )
    assert meter.usage.total("items_read", phase="read") == 3


def test_meter_sqs_batch_of_ten_is_one_billed_request(aws: Any) -> None:
    meter = Meter()
    with meter.installed():
        sqs = boto3.client("sqs", region_name="us-east-1")
        sqs.send_message_batch(
            QueueUrl=aws.settings.DISPATCH_QUEUE_URL,
            Entries=[{"Id": str(i), "MessageBody": "{}"} for i in range(10)],
        )
    assert meter.usage.total("requests", service="sqs") == 1


def test_meter_counts_s3_requests_per_operation_and_presigning_is_none(aws: Any) -> None:
    meter = Meter()
    with meter.installed():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="bench-media")
        meter.phase = "media"
        s3.put_object(Bucket="bench-media", Key="media/m1", Body=b"png")
        s3.head_object(Bucket="bench-media", Key="media/m1")
        s3.get_object(Bucket="bench-media", Key="media/m1")["Body"].read()
        s3.generate_presigned_url("get_object", Params={"Bucket": "bench-media", "Key": "media/m1"})
        s3.generate_presigned_post("bench-media", "media/m2")
    rows = {
        r["operation"]: r["billed_requests"] for r in meter.usage.rows() if r["phase"] == "media"
    }
    assert rows == {"PutObject": 1, "HeadObject": 1, "GetObject": 1}
