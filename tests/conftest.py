"""Test-wide safety: fake AWS credentials, no real endpoint, Powertools quiet, TZ irrelevant."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from local.moto_speed import fast_moto_transactions

# Set before any boto3 client exists. Tests never reach real AWS.
for _name, _value in {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SECURITY_TOKEN": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "POWERTOOLS_TRACE_DISABLED": "true",
    "POWERTOOLS_METRICS_NAMESPACE": "ScheduledPostsTest",
    "POWERTOOLS_LOG_LEVEL": "WARNING",
    "POWERTOOLS_DEV": "false",
}.items():
    os.environ[_name] = _value
os.environ.pop("AWS_ENDPOINT_URL", None)
os.environ.pop("AWS_PROFILE", None)

pytest_plugins = ["tests.support.fixtures"]


@pytest.fixture(autouse=True, scope="session")
def _atomic_moto_requests() -> Iterator[None]:
    """Each in-process moto request runs whole, as every DynamoDB and SQS request does in AWS.

    moto is not thread-safe in-process (a transaction restores a snapshot of the whole table on
    failure; dicts change size under concurrent iteration), so tests that run workers in threads
    would otherwise see failures AWS never produces. Serialising whole requests keeps every
    interleaving AWS allows *between* requests: the races under test stay real.
    """
    from moto.core.responses import BaseResponse
    from moto.dynamodb.responses import DynamoHandler

    lock = threading.RLock()
    originals = {cls: cls.call_action for cls in (BaseResponse, DynamoHandler)}

    def wrap(original: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def call_action(self: Any) -> Any:
            with lock:
                return original(self)

        return call_action

    for cls, original in originals.items():
        cls.call_action = wrap(original)  # type: ignore[method-assign]
    try:
        with fast_moto_transactions():  # the emulator's speed only: see local/moto_speed.py
            yield
    finally:
        for cls, original in originals.items():
            cls.call_action = original  # type: ignore[method-assign]
