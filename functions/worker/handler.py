"""Publish worker Lambda (SQS event source mapping with ``ReportBatchItemFailures``).

Powertools ``BatchProcessor``, concurrent (``scheduled_posts.concurrent_batch``): each record is
processed on its own thread, so one slow destination never delays the batch's other posts
(decision "A batch's records run concurrently"); failures are reported as batch item failures, so
one bad record never fails or repeats the others. An empty ``Records``
list answers an empty failure list; when every record fails, every record is reported failed
(``raise_on_entire_batch_failure=False``): the same retry as a failed invocation, without an
invocation error.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from aws_lambda_powertools.utilities.parser.models import SqsRecordModel
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import Json

from scheduled_posts.concurrent_batch import Handler, sqs_batch_handler
from scheduled_posts.logic.publish import Publisher
from scheduled_posts.models.messages import DispatchMessage
from scheduled_posts.observability import logger
from scheduled_posts.settings import get_settings


class DispatchRecord(SqsRecordModel):
    """An SQS record whose body is a JSON :class:`DispatchMessage`."""

    body: Json[DispatchMessage]  # type: ignore[assignment]


@cache
def _default_publisher() -> Publisher:
    return Publisher(get_settings())


def _publish(publisher: Publisher, record: DispatchRecord, context: LambdaContext) -> str:
    message: DispatchMessage = record.body  # type: ignore[assignment]
    # Records run on threads: the schedule id goes on this thread's log lines only.
    logger.thread_safe_append_keys(schedule_id=message.schedule_id)
    receive_count = int(record.attributes.ApproximateReceiveCount)
    return publisher.process(message, receive_count=receive_count, context=context).value


def make_lambda_handler(publisher_factory: Callable[[], Publisher] = _default_publisher) -> Handler:
    """The decorated Lambda entry point over ``publisher_factory()`` (tests pass their own)."""
    return sqs_batch_handler(DispatchRecord, publisher_factory, _publish)


lambda_handler = make_lambda_handler()
