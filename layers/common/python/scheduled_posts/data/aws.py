"""boto3 clients and resources, created lazily once per process and injectable.

boto3 honours ``AWS_ENDPOINT_URL`` itself, so the local stack points every client at the
embedded AWS by setting that one variable; moto's in-process mock patches the same clients.
Retries use botocore's ``standard`` mode (no retry loop of our own).

Threads (the worker's concurrent batch and its per-channel deliveries, the sweeper's shards)
share the clients: they are thread-safe once built, but building one from boto3's default
session is not (boto3 guide, "Multithreading or multiprocessing with clients"), so creation holds
a lock. The DynamoDB **resource** is not shared: "resource instances are not thread safe and
should not be shared across threads" (boto3 guide, "Multithreading or multiprocessing with
resources"). Its ``Key``/``Attr`` conditions are turned into placeholders by one
``ConditionExpressionBuilder`` per resource, whose counter two threads reset under each other:
a shared resource sent ``#n0 = :v0 AND #n0 <= :v0`` for ``Key("bucket").eq(..) &
Key("due").lte(..)`` (a query DynamoDB refuses; in a condition, a claim that tests the wrong
attribute). So each thread has its own resource (decision "One DynamoDB resource per thread");
a thread's resource goes back to an idle list when the thread ends, so the short-lived threads
of each batch reuse the ones built before instead of paying about 7 ms each.
"""

from __future__ import annotations

import threading
import weakref
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


class _IdleResources:
    """Resources of ended threads, ready for the next thread, and the generation they belong
    to (:func:`reset_clients` starts a new one)."""

    def __init__(self) -> None:
        self.generation = 0
        self.resources: list[tuple[int, Any]] = []

    def release(self, resource: Any, generation: int) -> None:
        """Keep ``resource`` of an ended thread. No lock: a finalizer may run inside any
        allocation, even one made under ``_CREATING``; ``list.append`` is atomic, and a resource
        of an older generation is dropped when taken."""
        if generation == self.generation:
            self.resources.append((generation, resource))

    def take(self) -> Any | None:
        """An idle resource of the current generation, or None."""
        while self.resources:
            kept, resource = self.resources.pop()
            if kept == self.generation:
                return resource
        return None


_idle = _IdleResources()
_local = threading.local()


class _ThreadResource:
    """A thread's DynamoDB resource; when the thread ends (its locals are dropped), the resource
    goes back to :data:`_idle`."""

    def __init__(self, resource: Any, generation: int) -> None:
        self.resource = resource
        self.generation = generation
        weakref.finalize(self, _idle.release, resource, generation)


def dynamodb_resource() -> Any:
    """This thread's DynamoDB resource (tables via ``.Table(name)``): built once per thread, or
    an idle one of an ended thread (see the module docstring for why not one per process)."""
    held: _ThreadResource | None = getattr(_local, "dynamodb", None)
    if held is not None and held.generation == _idle.generation:
        return held.resource
    with _CREATING:
        generation = _idle.generation
        resource = _idle.take() or boto3.resource("dynamodb", config=BOTO_CONFIG)
    _local.dynamodb = _ThreadResource(resource, generation)
    return resource


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
    """Forget cached clients and every thread's resource (tests call this when they start a
    fresh moto backend)."""
    with _CREATING:
        _idle.generation += 1
        _idle.resources.clear()
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
