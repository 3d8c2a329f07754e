"""boto3 clients and resources, created lazily once per process and injectable.

boto3 honours ``AWS_ENDPOINT_URL`` itself, so the local stack points every client at the
embedded AWS by setting that one variable; moto's in-process mock patches the same clients.
Retries use botocore's ``standard`` mode (no retry loop of our own).

Threads (the worker's concurrent batch, the sweeper's shards) share these. Clients are
thread-safe once built, but building one from boto3's default session is not (boto3 guide,
"Multithreading or multiprocessing with clients"), so creation holds a lock; callers that start
threads build what they need first.
"""

from __future__ import annotations

import threading
from functools import cache
from typing import Any

import boto3
from botocore.config import Config

#: Connections each client keeps open: the sweeper's largest ``SWEEP_PARALLELISM`` (64), so its
#: threads never wait for, or discard, a pooled connection (botocore's default is 10).
MAX_POOL_CONNECTIONS = 64

BOTO_CONFIG = Config(
    retries={"mode": "standard", "max_attempts": 3},
    connect_timeout=3,
    read_timeout=10,
    max_pool_connections=MAX_POOL_CONNECTIONS,
)

_CREATING = threading.Lock()


@cache
def dynamodb_resource() -> Any:
    """The process's DynamoDB resource (tables via ``.Table(name)``)."""
    with _CREATING:
        return boto3.resource("dynamodb", config=BOTO_CONFIG)


@cache
def sqs_client() -> Any:
    """The process's SQS client."""
    with _CREATING:
        return boto3.client("sqs", config=BOTO_CONFIG)


@cache
def events_client() -> Any:
    """The process's EventBridge client."""
    with _CREATING:
        return boto3.client("events", config=BOTO_CONFIG)


def reset_clients() -> None:
    """Forget cached clients (tests call this when they start a fresh moto backend)."""
    dynamodb_resource.cache_clear()
    sqs_client.cache_clear()
    events_client.cache_clear()


class TableStore:
    """Base of the stores bound to one DynamoDB table: ``table_name``, and an injectable boto3
    ``Table`` (or a wrapper with the same methods; tests and the fault suite pass one), else one
    from the process's lazily created resource."""

    def __init__(self, table_name: str, *, table: Any | None = None) -> None:
        self.table_name = table_name
        self._table_override = table

    @property
    def table(self) -> Any:
        """The boto3 ``Table``."""
        if self._table_override is not None:
            return self._table_override
        return dynamodb_resource().Table(self.table_name)
