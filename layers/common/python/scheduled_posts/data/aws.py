"""boto3 clients and resources, created lazily once per process and injectable.

boto3 honours ``AWS_ENDPOINT_URL`` itself, so the local stack points every client at the
embedded AWS by setting that one variable; moto's in-process mock patches the same clients.
Retries use botocore's ``standard`` mode (no retry loop of our own).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import boto3
from botocore.config import Config

BOTO_CONFIG = Config(
    retries={"mode": "standard", "max_attempts": 3},
    connect_timeout=3,
    read_timeout=10,
)


@cache
def dynamodb_resource() -> Any:
    """The process's DynamoDB resource (tables via ``.Table(name)``)."""
    return boto3.resource("dynamodb", config=BOTO_CONFIG)


@cache
def sqs_client() -> Any:
    """The process's SQS client."""
    return boto3.client("sqs", config=BOTO_CONFIG)


def reset_clients() -> None:
    """Forget cached clients (tests call this when they start a fresh moto backend)."""
    dynamodb_resource.cache_clear()
    sqs_client.cache_clear()
