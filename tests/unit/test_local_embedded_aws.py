"""The embedded AWS: resources from the shared definitions, only the missing ones created."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import boto3
import pytest
from moto.moto_server.threaded_moto_server import ThreadedMotoServer

from local.config import (
    DEFAULT_ALLOWED_ORIGINS,
    LocalConfig,
    apply_service_defaults,
    derived_cursor_secret,
)
from local.embedded_aws import (
    endpoint_url,
    ensure_resources,
    ensure_server,
    is_moto,
    resource_environment,
)

NAMES = {
    "POSTS_TABLE_NAME": "p",
    "DUE_INDEX_TABLE_NAME": "d",
    "IDEMPOTENCY_TABLE_NAME": "i",
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def moto_port() -> Iterator[int]:
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield port
    server.stop()


def _dynamodb(port: int):  # type: ignore[no-untyped-def]
    return boto3.client(
        "dynamodb",
        endpoint_url=endpoint_url(port),
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )


def test_ensure_resources_creates_tables_and_redriven_queue(moto_port: int) -> None:
    queues = ensure_resources(moto_port, NAMES, max_receive_count=4, worker_timeout_seconds=10)
    tables = _dynamodb(moto_port).list_tables()["TableNames"]
    assert {"p", "d", "i"} <= set(tables)
    sqs = boto3.client(
        "sqs",
        endpoint_url=endpoint_url(moto_port),
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    attrs = sqs.get_queue_attributes(QueueUrl=queues["DISPATCH_QUEUE_URL"], AttributeNames=["All"])[
        "Attributes"
    ]
    assert json.loads(attrs["RedrivePolicy"])["maxReceiveCount"] in (4, "4")
    assert attrs["VisibilityTimeout"] == "60"
    assert queues["DISPATCH_DLQ_URL"].endswith("scheduled-posts-dlq")


def test_ensure_resources_again_keeps_existing_items(moto_port: int) -> None:
    ensure_resources(moto_port, NAMES, max_receive_count=5, worker_timeout_seconds=10)
    client = _dynamodb(moto_port)
    client.put_item(TableName="p", Item={"pk": {"S": "POST#1"}, "sk": {"S": "POST"}})
    ensure_resources(moto_port, NAMES, max_receive_count=5, worker_timeout_seconds=10)
    assert client.get_item(TableName="p", Key={"pk": {"S": "POST#1"}, "sk": {"S": "POST"}}).get(
        "Item"
    )


def test_ensure_server_listening_moto_is_reused(moto_port: int) -> None:
    aws = ensure_server(moto_port)
    assert aws.process is None and is_moto(moto_port)


def test_apply_service_defaults_keeps_values_the_user_set() -> None:
    env = {"CURSOR_SECRET": "mine"}
    apply_service_defaults(env, LocalConfig())
    assert env["CURSOR_SECRET"] == "mine"
    assert env["OUTBOUND_ALLOWED_ORIGINS"] == DEFAULT_ALLOWED_ORIGINS


def test_derived_cursor_secret_is_stable_and_not_the_jwt_secret() -> None:
    first = derived_cursor_secret("s")
    assert first == derived_cursor_secret("s") and first not in {"s", derived_cursor_secret("t")}


def test_local_config_batch_size_over_ten_is_refused() -> None:
    with pytest.raises(ValueError, match="WORKER_BATCH_SIZE"):
        LocalConfig.from_env({"WORKER_BATCH_SIZE": "11"})


def test_local_config_mapping_concurrency_defaults_to_lambdas_five() -> None:
    assert LocalConfig.from_env({}).mapping_concurrency == 5
    assert LocalConfig.from_env({"MAPPING_CONCURRENCY": "2"}).mapping_concurrency == 2
    with pytest.raises(ValueError, match="MAPPING_CONCURRENCY"):
        LocalConfig.from_env({"MAPPING_CONCURRENCY": "0"})


def test_resource_environment_names_endpoint_and_queue_urls(moto_port: int) -> None:
    queues = ensure_resources(moto_port, NAMES, max_receive_count=5, worker_timeout_seconds=10)
    env = resource_environment(moto_port)
    assert env["AWS_ENDPOINT_URL"] == endpoint_url(moto_port)
    assert env["DISPATCH_QUEUE_URL"] == queues["DISPATCH_QUEUE_URL"]
    assert env["AWS_ACCESS_KEY_ID"] == "local"
    assert env["MEDIA_BUCKET_NAME"] == "scheduled-posts-media"


def test_apply_service_defaults_refuses_own_api_and_aws_ports() -> None:
    env = {"WEBHOOK_REFUSED_PORTS": "6379"}
    config = LocalConfig.from_env({"API_PORT": "18080", "AWS_PORT": "14566"})

    apply_service_defaults(env, config)

    assert env["WEBHOOK_REFUSED_PORTS"] == "6379,18080,14566"
