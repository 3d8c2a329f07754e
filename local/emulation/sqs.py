"""Lambda's SQS event source mapping, emulated: the dispatch queue feeds the publish worker.

What it does, as the mapping does (Lambda developer guide, "Using Lambda with Amazon SQS" and
"Handling errors for an SQS event source in Lambda"):

* long-polls ``ReceiveMessage`` for up to the batch size, with every system attribute and
  message attribute, and never invokes the function with an empty batch;
* builds real SQS event records (``messageId``, ``receiptHandle``, ``body``,
  ``attributes.ApproximateReceiveCount`` ..., ``md5OfBody``, ``eventSource``,
  ``eventSourceARN``, ``awsRegion``);
* gives the handler a context whose remaining time counts down from the worker's timeout;
* with ``ReportBatchItemFailures``: deletes only the records not listed in
  ``batchItemFailures``; a malformed response, an identifier that is not in the batch, a handler
  that raises, or an invocation that overruns its timeout deletes nothing (the whole batch is
  retried);
* leaves the rest to the queue: failed records reappear when their visibility timeout ends, and
  the queue's redrive policy moves a record to the DLQ after ``maxReceiveCount`` receives.

:class:`EventSourceMapping` is one receive and one invocation, driven by its caller (the tests'
simulated-time driver); :class:`SqsPoller` runs it for the local stack: one thread receives
while fewer than ``concurrency`` batches are in flight, and ``concurrency`` threads invoke and
settle them, each its own batch, so that many batches are in flight at once, as the mapping
invokes the function concurrently (five batches at first, "Understanding Lambda function
scaling"). Each batch runs in an execution environment of its own when the
function has as many (:class:`local.emulation.environments.ProcessFunction`).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from local.emulation.background import BackgroundLoop
from local.emulation.lambda_runtime import REGION, LambdaContext

log = logging.getLogger("local.poller")


class Invocable(Protocol):
    """What the mapping invokes: :class:`~local.emulation.lambda_runtime.LambdaFunction` (in
    this process) or :class:`~local.emulation.environments.ProcessFunction` (worker processes).
    """

    def invoke(self, event: dict[str, Any]) -> tuple[Any, LambdaContext]:
        """Run one invocation; the handler's response and the invocation's context."""
        ...


@dataclass
class BatchOutcome:
    """What happened to one batch: the ids deleted and the ids left for a retry.

    ``error`` says why the whole batch was retried (``repr`` of what the handler raised,
    ``"timeout"``, ``"malformed response"``); ``exception`` is what the handler raised.
    """

    deleted: list[str]
    retried: list[str]
    error: str | None = None
    exception: Exception | None = None


def to_event_record(message: dict[str, Any], queue_arn: str) -> dict[str, Any]:
    """One ``ReceiveMessage`` message as the record Lambda puts in ``event["Records"]``."""
    attributes = {
        name: message.get("Attributes", {}).get(name)
        for name in (
            "ApproximateReceiveCount",
            "SentTimestamp",
            "SenderId",
            "ApproximateFirstReceiveTimestamp",
        )
    }
    record_attributes = {k: v for k, v in attributes.items() if v is not None}
    for name in ("SequenceNumber", "MessageGroupId", "MessageDeduplicationId", "AWSTraceHeader"):
        if name in message.get("Attributes", {}):
            record_attributes[name] = message["Attributes"][name]
    message_attributes = {}
    for name, value in (message.get("MessageAttributes") or {}).items():
        message_attributes[name] = {
            "stringValue": value.get("StringValue"),
            "binaryValue": value.get("BinaryValue"),
            "stringListValues": value.get("StringListValues", []),
            "binaryListValues": value.get("BinaryListValues", []),
            "dataType": value.get("DataType"),
        }
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": record_attributes,
        "messageAttributes": message_attributes,
        "md5OfBody": message.get("MD5OfBody", ""),
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": REGION,
    }


def failed_ids(response: Any, batch_ids: set[str]) -> set[str] | None:
    """The message ids to retry from a partial batch response; ``None`` means the whole batch.

    ``None`` or a response without ``batchItemFailures`` (or with an empty list) is full
    success. A malformed response, or an ``itemIdentifier`` that is empty or not in the batch,
    fails the whole batch (Lambda developer guide, "Implementing partial batch responses").
    """
    if response is None:
        return set()
    if not isinstance(response, dict):
        return None
    failures = response.get("batchItemFailures")
    if failures is None:
        return set()
    if not isinstance(failures, list):
        return None
    ids: set[str] = set()
    for item in failures:
        identifier = item.get("itemIdentifier") if isinstance(item, dict) else None
        if not identifier or identifier not in batch_ids:
            return None
        ids.add(identifier)
    return ids


class EventSourceMapping:
    """One SQS event source mapping: receive a batch, invoke ``function``, settle the batch.

    Parameters
    ----------
    sqs:
        A boto3 SQS client.
    queue_url, queue_arn:
        The queue (the ARN goes into each record's ``eventSourceARN``).
    function:
        The consumer; its context counts down from its ``timeout_seconds`` on its clock.
    batch_size:
        Up to 10 (the SQS receive maximum).
    """

    def __init__(
        self,
        sqs: Any,
        *,
        queue_url: str,
        queue_arn: str,
        function: Invocable,
        batch_size: int = 10,
    ) -> None:
        if not 1 <= batch_size <= 10:
            raise ValueError("batch_size must be 1..10 (the SQS receive maximum)")
        self.sqs = sqs
        self.queue_url = queue_url
        self.queue_arn = queue_arn
        self.function = function
        self.batch_size = batch_size
        self.batches = 0
        self._batches_lock = threading.Lock()

    def receive_messages(
        self, wait_seconds: int = 0, max_messages: int | None = None
    ) -> list[dict[str, Any]]:
        """One ``ReceiveMessage`` of up to ``max_messages`` (default ``batch_size``), with every
        system and message attribute."""
        response = self.sqs.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=min(10, max_messages or self.batch_size),
            WaitTimeSeconds=wait_seconds,
            AttributeNames=["All"],
            MessageSystemAttributeNames=["All"],
            MessageAttributeNames=["All"],
        )
        return list(response.get("Messages", []))

    def receive(self) -> list[dict[str, Any]]:
        """One short-poll receive of up to ``batch_size`` visible messages."""
        return self.receive_messages(0)

    def poll_once(self) -> BatchOutcome | None:
        """Receive once and, when anything arrived, invoke the function and settle the batch.

        Returns ``None`` when the receive was empty (the function is never invoked then).
        """
        messages = self.receive()
        if not messages:
            return None
        return self.invoke_messages(messages)

    def invoke_messages(self, messages: list[dict[str, Any]]) -> BatchOutcome:
        """Invoke the function with received ``messages`` (never empty) and settle them."""
        if not messages:
            raise ValueError("the event source mapping never sends an empty batch")
        records = [to_event_record(m, self.queue_arn) for m in messages]
        outcome = self.invoke(records)
        with self._batches_lock:  # batches settle on several threads at once (SqsPoller)
            self.batches += 1
        self.after_batch(records, outcome)
        return outcome

    def after_batch(self, records: list[dict[str, Any]], outcome: BatchOutcome) -> None:
        """Called after each batch (a hook for subclasses; does nothing here)."""

    def invoke(self, records: list[dict[str, Any]]) -> BatchOutcome:
        """Invoke the function with ``records`` and delete what it did not report as failed.

        A ``BaseException`` that is not an ``Exception`` (a simulated crash) propagates and
        deletes nothing, as a crashed invocation does.
        """
        ids = [r["messageId"] for r in records]
        try:
            response, context = self.function.invoke({"Records": records})
        except Exception as exc:
            log.warning("worker raised: whole batch retried", extra={"error": repr(exc)})
            return BatchOutcome(deleted=[], retried=ids, error=repr(exc), exception=exc)
        if context.get_remaining_time_in_millis() <= 0:
            log.warning("worker overran its timeout: whole batch retried")
            return BatchOutcome(deleted=[], retried=ids, error="timeout")
        failed = failed_ids(response, set(ids))
        if failed is None:
            log.warning("malformed partial batch response: whole batch retried")
            return BatchOutcome(deleted=[], retried=ids, error="malformed response")
        done = [r for r in records if r["messageId"] not in failed]
        self._delete(done)
        return BatchOutcome(
            deleted=[r["messageId"] for r in done],
            retried=[i for i in ids if i in failed],
        )

    def _delete(self, records: list[dict[str, Any]]) -> None:
        if not records:
            return
        response = self.sqs.delete_message_batch(
            QueueUrl=self.queue_url,
            Entries=[
                {"Id": str(n), "ReceiptHandle": r["receiptHandle"]} for n, r in enumerate(records)
            ],
        )
        for failure in response.get("Failed", []):
            log.warning("delete failed", extra={"failure": failure})


class SqsPoller(EventSourceMapping, BackgroundLoop):
    """One poller thread feeding ``function`` from ``queue_url`` (the local stack's mapping).

    Parameters
    ----------
    sqs, **mapping:
        As :class:`EventSourceMapping` (``queue_url``, ``queue_arn``, ``function``,
        ``batch_size``).
    wait_seconds:
        The long-poll wait of each receive.
    poll_interval_seconds:
        When set, a long poll is emulated with short receives this far apart until
        ``wait_seconds`` pass: SQS returns a long poll as soon as a message becomes visible,
        while moto re-checks delayed messages only about once a second. ``None`` uses moto's
        own long poll.
    on_batch:
        Called after each batch with the records and the outcome (logging), from the thread
        that settled it (so possibly from several threads at once).
    concurrency:
        Batches in flight at once (invoker threads; Lambda's mapping starts with five); the
        receiving thread waits while all are busy. The function must run that many
        invocations at once for them to overlap.
    """

    def __init__(
        self,
        sqs: Any,
        *,
        wait_seconds: int = 2,
        poll_interval_seconds: float | None = None,
        stop_event: threading.Event | None = None,
        on_batch: Callable[[list[dict[str, Any]], BatchOutcome], None] | None = None,
        concurrency: int = 1,
        **mapping: Any,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        EventSourceMapping.__init__(self, sqs, **mapping)
        BackgroundLoop.__init__(self, "sqs-poller", stop_event)
        self.concurrency = concurrency
        # One receiving thread, as one long poll per free slot: it receives only while fewer than
        # ``concurrency`` batches are in flight, and each batch is invoked and settled by one
        # of ``concurrency`` invoker threads (fewer receives than a poll per slot: moto's
        # ReceiveMessage is costly under load).
        self._slots = threading.Semaphore(concurrency)
        self._received: queue.Queue[list[dict[str, Any]]] = queue.Queue()
        self._threads = [threading.Thread(target=self._loop, name="sqs-poller", daemon=True)] + [
            threading.Thread(target=self._work, name=f"sqs-invoker-{n}", daemon=True)
            for n in range(concurrency)
        ]
        self.wait_seconds = wait_seconds
        self.poll_interval_seconds = poll_interval_seconds
        self.on_batch = on_batch

    def receive(self) -> list[dict[str, Any]]:
        """One long-poll receive (up to ``batch_size`` messages, all attributes)."""
        if self.poll_interval_seconds is None:
            return self.receive_messages(self.wait_seconds)
        deadline = time.monotonic() + self.wait_seconds
        while True:
            messages = self.receive_messages(0)
            if messages or time.monotonic() >= deadline:
                return messages
            if self.stop_event.wait(self.poll_interval_seconds):
                return []

    def after_batch(self, records: list[dict[str, Any]], outcome: BatchOutcome) -> None:
        """Pass the batch to ``on_batch`` (when set)."""
        if self.on_batch is not None:
            self.on_batch(records, outcome)

    def start(self) -> None:
        """Start the receiving thread and the ``concurrency`` invoker threads."""
        for thread in self._threads:
            thread.start()

    def join(self, timeout: float | None = None) -> None:
        """Wait for every thread, ``timeout`` seconds in all (those never started are skipped)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in self._threads:
            if thread.ident is not None:
                thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))

    def _loop(self) -> None:
        while not self.stop_event.is_set():
            if not self._slots.acquire(timeout=0.25):  # every slot busy: receive nothing
                continue
            try:
                messages = self.receive()
            except Exception:
                self._slots.release()
                log.exception("poller error")
                self.stop_event.wait(1.0)
                continue
            if messages:
                self._received.put(messages)
            else:
                self._slots.release()

    def _work(self) -> None:
        while not self.stop_event.is_set():
            try:
                messages = self._received.get(timeout=0.25)
            except queue.Empty:
                continue
            try:
                self.invoke_messages(messages)
            except Exception:
                log.exception("poller error")
            finally:
                self._slots.release()
