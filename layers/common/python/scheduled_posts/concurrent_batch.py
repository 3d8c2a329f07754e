"""A Powertools ``BatchProcessor`` that processes a batch's records concurrently, and the one
Lambda entry point of the batch handlers (:func:`batch_handler`: worker, notifier, relay;
:func:`sqs_batch_handler` for the SQS ones).

Records of one SQS batch are different posts, often of different users. Processed one after
another, a destination that takes ``DELIVERY_TIMEOUT_SECONDS`` to answer delays every record
after it: one tenant's slow webhook made five other users' posts due the same second arrive
11-21 s late. Here each record runs on its own thread (at most :data:`MAX_CONCURRENT_RECORDS`,
the SQS batch size limit), and keeps everything it had: its own claim and lease, its own
Powertools idempotency per channel, its own batch item failure. Only the handler's return waits
for the slowest record, which delays no delivery.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.batch.base import BasePartialBatchProcessor
from aws_lambda_powertools.utilities.parser.models import SqsRecordModel
from aws_lambda_powertools.utilities.typing import LambdaContext

from scheduled_posts.observability import logger, metrics, tracer

Handler = Callable[[dict[str, Any], LambdaContext], dict[str, Any]]
#: ``records(context) -> record_handler``: the per-invocation record handler.
RecordsFor = Callable[[LambdaContext], Callable[[Any], Any]]
S = TypeVar("S")
R = TypeVar("R", bound=SqsRecordModel)

#: Most records processed at once: the SQS event source's largest batch without a batching
#: window (Lambda developer guide, "Using Lambda with Amazon SQS": ``BatchSize`` up to 10).
MAX_CONCURRENT_RECORDS = 10


class ConcurrentBatchProcessor(BatchProcessor):
    """:class:`BatchProcessor` whose ``process`` runs the records on a thread pool.

    Success and failure bookkeeping is the parent's (list appends, safe across threads); the
    results keep the records' order. The record handler must be thread-safe.
    """

    def process(self) -> list[tuple]:
        """Call the record handler for every record, concurrently; results in record order."""
        records = list(self.records)
        if len(records) <= 1:
            return [self._process_record(record) for record in records]
        workers = min(MAX_CONCURRENT_RECORDS, len(records))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="record") as pool:
            return list(pool.map(self._process_record, records))


def batch_handler(
    processor: Callable[[], BasePartialBatchProcessor], records: RecordsFor
) -> Handler:
    """A batch Lambda's entry point: Powertools logging (context injected, state cleared),
    tracing and metrics; an event without ``Records`` answers no failures without calling
    ``records``; otherwise ``process_partial_response`` with a fresh ``processor()`` and
    ``records(context)``, answering ``{"batchItemFailures": [...]}`` (Lambda's partial batch
    response, ``ReportBatchItemFailures``)."""

    @logger.inject_lambda_context(clear_state=True)
    @tracer.capture_lambda_handler
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        if not event.get("Records"):
            return {"batchItemFailures": []}
        response = process_partial_response(
            event=event, record_handler=records(context), processor=processor(), context=context
        )
        return dict(response)

    return handler


def sqs_batch_handler(
    model: type[R],
    service: Callable[[], S],
    handle: Callable[[S, R, LambdaContext], str],
) -> Handler:
    """An SQS consumer's entry point (:func:`batch_handler`): each record parsed as ``model``
    and handled, on its own thread (:class:`ConcurrentBatchProcessor`), by
    ``handle(service(), record, context)`` (``service()`` once per invocation), which answers
    the outcome's name or raises to report the record failed. When every record fails, every
    record is reported failed (``raise_on_entire_batch_failure=False``): the same retry as a
    failed invocation, without an invocation error."""

    def records(context: LambdaContext) -> Callable[[R], str]:
        current = service()
        return lambda record: handle(current, record, context)

    return batch_handler(
        lambda: ConcurrentBatchProcessor(
            event_type=EventType.SQS, model=model, raise_on_entire_batch_failure=False
        ),
        records,
    )
