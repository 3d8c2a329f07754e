"""Count AWS requests and DynamoDB capacity units of real code paths, with botocore event hooks.

:class:`Meter` attaches ``before-call``/``after-call`` handlers to every boto3 client created
while it is installed (the service's lazily created clients, Powertools' idempotency client,
tests' clients), so the code under measurement is not touched. For DynamoDB it charges units by
AWS's sizing rules (``bench/units.py``) from the sizes of the items involved:

* writes (``PutItem``, ``UpdateItem``, ``DeleteItem``, ``BatchWriteItem``, ``TransactWriteItems``)
  on the larger of the item before and after, read with an unmetered peek client (a failed
  conditional write is charged on the item as it was, at least 1 unit); transactions 2x;
* reads from the returned items and ``ScannedCount`` (``Query``/``Scan`` pages summed then
  rounded, ``BatchGetItem`` per item), consistent or not as requested.

SQS requests are counted per 64 KB chunk of payload (SQS pricing). Nothing here is timed: moto's
timings are not AWS's.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import boto3
import botocore.session
from boto3.dynamodb.types import TypeDeserializer

from bench.units import item_size, read_units, write_units

SQS_CHUNK_BYTES = 64 * 1024
_DESER = TypeDeserializer()


@dataclass
class Usage:
    """Totals per ``(phase, service, operation)``: calls, billed requests, units, items read."""

    calls: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    requests: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    write_units: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    read_units: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    items_read: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    failed_conditions: Counter[tuple[str, str, str]] = field(default_factory=Counter)

    def rows(self) -> list[dict[str, Any]]:
        """One dict per ``(phase, service, operation)``, sorted."""
        return [
            {
                "phase": key[0],
                "service": key[1],
                "operation": key[2],
                "calls": self.calls[key],
                "billed_requests": self.requests[key],
                "write_units": self.write_units[key],
                "read_units": self.read_units[key],
                "items_read": self.items_read[key],
                "failed_conditions": self.failed_conditions[key],
            }
            for key in sorted(self.calls)
        ]

    def total(self, counter: str, *, service: str | None = None, phase: str | None = None) -> float:
        """Sum of one counter (``calls``, ``requests``, ``write_units``...) over a filter."""
        values: Counter[tuple[str, str, str]] = getattr(self, counter)
        return float(
            sum(
                v
                for k, v in values.items()
                if (service is None or k[1] == service) and (phase is None or k[0] == phase)
            )
        )


class Meter:
    """Installs hooks on every boto3 client created inside :meth:`installed`.

    ``phase`` labels what is being measured (``"create"``, ``"sweep"``, ``"worker"``); set it
    between steps.
    """

    def __init__(self) -> None:
        self.usage = Usage()
        self.phase = "other"
        self._local = threading.local()
        self._key_names: dict[str, list[str]] = {}
        self._peek: Any = None

    # -- installation ----------------------------------------------------------------------------

    @contextmanager
    def installed(self) -> Iterator[Meter]:
        """Meter every client created from now until exit (``Session.create_client`` patched)."""
        self._peek = boto3.session.Session().client("dynamodb", region_name="us-east-1")
        original = botocore.session.Session.create_client
        meter = self

        def create_client(session: Any, *args: Any, **kwargs: Any) -> Any:
            client = original(session, *args, **kwargs)
            meter.attach(client)
            return client

        botocore.session.Session.create_client = create_client  # type: ignore[method-assign]
        try:
            yield self
        finally:
            botocore.session.Session.create_client = original  # type: ignore[method-assign]

    def attach(self, client: Any) -> None:
        """Attach the hooks to one client (idempotent)."""
        events = client.meta.events
        events.register("before-parameter-build", _keep_params, unique_id="bench-meter-params")
        events.register("before-call", self._before, unique_id="bench-meter-before")
        events.register("after-call", self._after, unique_id="bench-meter-after")

    # -- helpers ---------------------------------------------------------------------------------

    def _keys_of(self, table: str) -> list[str]:
        if table not in self._key_names:
            schema = self._peek.describe_table(TableName=table)["Table"]["KeySchema"]
            self._key_names[table] = [k["AttributeName"] for k in schema]
        return self._key_names[table]

    def _peek_size(self, table: str, key: dict[str, Any]) -> int:
        item = self._peek.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
        return item_size(item)

    def _key_from_item(self, table: str, item: dict[str, Any]) -> dict[str, Any]:
        return {name: item[name] for name in self._keys_of(table)}

    # -- hooks -----------------------------------------------------------------------------------

    def _before(self, model: Any, context: dict[str, Any], **_: Any) -> None:
        service = model.service_model.service_name
        if service != "dynamodb":
            return
        params = context.get("bench_params") or {}
        op = model.name
        before: list[tuple[str, dict[str, Any], int, bool]] = []  # table, key, size, transact
        if op in {"PutItem", "UpdateItem", "DeleteItem"}:
            table = params["TableName"]
            key = params["Key"] if "Key" in params else self._key_from_item(table, params["Item"])
            before.append((table, key, self._peek_size(table, key), False))
        elif op == "BatchWriteItem":
            for table, requests in params.get("RequestItems", {}).items():
                for request in requests:
                    if "PutRequest" in request:
                        key = self._key_from_item(table, request["PutRequest"]["Item"])
                    else:
                        key = request["DeleteRequest"]["Key"]
                    before.append((table, key, self._peek_size(table, key), False))
        elif op == "TransactWriteItems":
            for action in params.get("TransactItems", []):
                body = next(iter(action.values()))
                table = body["TableName"]
                key = body["Key"] if "Key" in body else self._key_from_item(table, body["Item"])
                before.append((table, key, self._peek_size(table, key), True))
        context["bench_before"] = before

    def _after(self, model: Any, parsed: Any = None, **kwargs: Any) -> None:
        service = model.service_model.service_name
        op = model.name
        key = (self.phase, service, op)
        self.usage.calls[key] += 1
        context = kwargs.get("context") or {}
        request = context.get("bench_params") or {}
        if service == "sqs":
            self.usage.requests[key] += self._sqs_requests(op, kwargs, request)
            return
        self.usage.requests[key] += 1
        if service != "dynamodb":
            return
        error = (parsed or {}).get("Error", {}).get("Code")
        if error and error not in {
            "ConditionalCheckFailedException",
            "TransactionCanceledException",
        }:
            return
        if error:
            self.usage.failed_conditions[key] += 1
        before = context.get("bench_before", [])
        for table, item_key, size_before, transact in before:
            size_after = 0 if error else self._peek_size(table, item_key)
            self.usage.write_units[key] += write_units(
                size_before, size_after, transactional=transact
            )
        self._charge_reads(key, op, parsed or {}, request)

    def _charge_reads(
        self, key: tuple[str, str, str], op: str, parsed: dict[str, Any], request: dict[str, Any]
    ) -> None:
        consistent = bool(request.get("ConsistentRead", False))
        if op == "GetItem":
            self.usage.read_units[key] += read_units(
                item_size(parsed.get("Item")), consistent=consistent
            )
            self.usage.items_read[key] += 1 if parsed.get("Item") else 0
        elif op in {"Query", "Scan"}:
            items = parsed.get("Items", [])
            scanned = int(parsed.get("ScannedCount", len(items)))
            size = sum(item_size(i) for i in items)
            if items and scanned > len(items):
                size = math.ceil(size * scanned / len(items))
            self.usage.read_units[key] += read_units(size, consistent=consistent)
            self.usage.items_read[key] += scanned
        elif op == "BatchGetItem":
            for table_items in parsed.get("Responses", {}).values():
                for item in table_items:
                    self.usage.read_units[key] += read_units(item_size(item), consistent=consistent)
                    self.usage.items_read[key] += 1
        elif op == "TransactGetItems":
            for response in parsed.get("Responses", []):
                self.usage.read_units[key] += read_units(
                    item_size(response.get("Item")), consistent=True, transactional=True
                )
                self.usage.items_read[key] += 1

    @staticmethod
    def _sqs_requests(op: str, kwargs: dict[str, Any], request: dict[str, Any]) -> int:
        if op in {"SendMessage", "SendMessageBatch"}:
            entries = request.get("Entries") or [request]
            payload = sum(len(str(e.get("MessageBody", "")).encode()) for e in entries)
            return max(1, math.ceil(payload / SQS_CHUNK_BYTES))
        return 1


def _keep_params(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
    """Keep a call's API parameters in its request context for the later hooks."""
    context["bench_params"] = params


def deserialize(item: dict[str, Any]) -> dict[str, Any]:
    """A low-level DynamoDB item as Python values (for debugging output)."""
    return {k: _DESER.deserialize(v) for k, v in item.items()}
