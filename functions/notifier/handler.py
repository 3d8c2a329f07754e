"""Notifier Lambda (SQS event source mapping on the notify queue, ``ReportBatchItemFailures``).

Each record is one notification (``logic/notifier.py``), sent on its own thread
(``scheduled_posts.concurrent_batch``) with a short timeout (``NOTIFY_TIMEOUT_SECONDS``), so one
slow or failing endpoint delays no other record, and a failed record is reported alone (partial
batch response): the others are deleted. A record to be tried again is already hidden for its
backoff when it is reported.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from aws_lambda_powertools.utilities.parser.models import SqsRecordModel
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import Json

from scheduled_posts.concurrent_batch import Handler, sqs_batch_handler
from scheduled_posts.data.notification_endpoints import NotificationEndpointRepository
from scheduled_posts.data.notify_queue import NotifyQueue
from scheduled_posts.logic.notifier import Notifier
from scheduled_posts.models.notifications import NotifyMessage
from scheduled_posts.observability import logger
from scheduled_posts.settings import get_settings


class NotifyRecord(SqsRecordModel):
    """An SQS record whose body is a JSON :class:`NotifyMessage`."""

    body: Json[NotifyMessage]  # type: ignore[assignment]


@cache
def _default_notifier() -> Notifier:
    settings = get_settings()
    return Notifier(
        settings,
        endpoints=NotificationEndpointRepository(posts_table_name=settings.POSTS_TABLE_NAME),
        queue=NotifyQueue(settings.NOTIFY_QUEUE_URL, settings.NOTIFY_DLQ_URL),
    )


def _notify(notifier: Notifier, record: NotifyRecord, context: LambdaContext) -> str:
    message: NotifyMessage = record.body  # type: ignore[assignment]
    logger.thread_safe_append_keys(event_id=message.event_id)
    return notifier.process(
        message,
        receive_count=int(record.attributes.ApproximateReceiveCount),
        receipt_handle=record.receiptHandle,
    ).value


def make_lambda_handler(notifier_factory: Callable[[], Notifier] = _default_notifier) -> Handler:
    """The decorated Lambda entry point over ``notifier_factory()`` (tests pass their own)."""
    return sqs_batch_handler(NotifyRecord, notifier_factory, _notify)


lambda_handler = make_lambda_handler()
