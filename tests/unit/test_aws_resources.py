"""Each thread has its own DynamoDB resource (decision "One DynamoDB resource per thread").

boto3 turns ``Key``/``Attr`` conditions into ``#n0``/``:v0`` placeholders with one builder per
resource, whose counter is reset on every request: threads sharing a resource send each other's
placeholders (``#n0 = :v0 AND #n0 <= :v0``). No request here leaves the process: a
``before-call`` hook records the serialized request and stops it.
"""

from __future__ import annotations

import contextlib
import gc
import json
import re
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from boto3.dynamodb.conditions import Key

from scheduled_posts.data.aws import dynamodb_resource, reset_clients


class _Stop(Exception):
    """Raised by the hook: the request was recorded and is not sent."""


@pytest.fixture(autouse=True)
def fresh_resources(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    reset_clients()
    yield
    reset_clients()


def _on_thread(target: Any) -> None:
    thread = threading.Thread(target=target)
    thread.start()
    thread.join()


def test_each_thread_has_its_own_resource_and_a_new_thread_reuses_an_ended_ones() -> None:
    seen: dict[str, Any] = {}
    main = dynamodb_resource()
    assert dynamodb_resource() is main

    def first() -> None:
        seen["first"] = dynamodb_resource()
        seen["first_again"] = dynamodb_resource()

    _on_thread(first)
    gc.collect()  # the ended thread's locals are dropped: its resource is idle
    _on_thread(lambda: seen.setdefault("second", dynamodb_resource()))

    assert seen["first"] is seen["first_again"]
    assert seen["first"] is not main
    assert seen["second"] is seen["first"]


def test_reset_clients_gives_every_thread_a_new_resource() -> None:
    before = dynamodb_resource()
    reset_clients()
    assert dynamodb_resource() is not before


_EVENTS: dict[str, threading.Event] = {}


class _PausingKey(Key):
    """A key condition's attribute that pauses its thread the first time a builder reads its
    name, until told to go on: it fixes where one thread's request stops inside boto3's
    placeholder building."""

    def __init__(self, name: str, pause: str) -> None:
        self.pause, self._read = pause, False  # events by name: botocore deep-copies params
        super().__init__(name)

    @property  # type: ignore[override]
    def name(self) -> str:
        if not self._read:
            self._read = True
            _EVENTS[f"{self.pause}_paused"].set()
            assert _EVENTS[f"{self.pause}_go"].wait(10)
        return self._name

    @name.setter
    def name(self, value: str) -> None:
        self._name = value


def test_two_threads_building_conditions_at_once_keep_each_requests_placeholders() -> None:
    """Thread A stops after ``#n0`` for ``bucket``; thread B starts a query (the builder is
    reset) and stops before its first placeholder; A goes on. On a shared resource A would
    number ``due`` ``#n0`` again and send ``(#n0 = :v0 AND #n0 <= :v0)``."""
    sent: dict[str, dict[str, Any]] = {}
    events = {name: threading.Event() for name in ("a_paused", "a_go", "b_paused", "b_go")}
    _EVENTS.clear()
    _EVENTS.update(events)

    def record(params: dict[str, Any], **_: Any) -> None:
        sent[threading.current_thread().name] = json.loads(params["body"])
        raise _Stop

    def query(first: Key, second: Key) -> None:
        resource = dynamodb_resource()
        resource.meta.client.meta.events.register(
            "before-call.dynamodb.Query", record, unique_id="test-record-query"
        )
        condition = first.eq("2026-12-02T07") & second.lte("2026-12-02T07:59Z")
        with contextlib.suppress(_Stop):
            resource.Table("posts").query(KeyConditionExpression=condition)

    a = threading.Thread(
        name="a",
        target=query,
        args=(Key("bucket"), _PausingKey("due", "a")),
    )
    b = threading.Thread(
        name="b",
        target=query,
        args=(_PausingKey("bucket", "b"), Key("due")),
    )
    a.start()
    assert events["a_paused"].wait(10)
    b.start()
    assert events["b_paused"].wait(10)
    events["a_go"].set()
    a.join(10)
    events["b_go"].set()
    b.join(10)

    for thread in ("a", "b"):
        body = sent[thread]
        names = body["ExpressionAttributeNames"]
        used = re.findall(r"#n\d+", body["KeyConditionExpression"])
        assert [names[n] for n in used] == ["bucket", "due"], body
        assert len(set(re.findall(r":v\d+", body["KeyConditionExpression"]))) == 2, body
