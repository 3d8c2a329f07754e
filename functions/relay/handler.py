"""Outbox relay Lambda (event source mapping on the posts table's DynamoDB stream, with
``ReportBatchItemFailures`` and ``BisectBatchOnFunctionError``).

Powertools ``BatchProcessor`` for DynamoDB streams: records are relayed in stream order; the
first record that fails is reported (Lambda checkpoints before it and retries from it) and every
record after it in the batch is held back and reported too, so no later event of a post
overtakes an earlier one. Held-back records that had nothing to do with the failure are simply
relayed again on the retry (same event ids).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from scheduled_posts.concurrent_batch import Handler, batch_handler
from scheduled_posts.data.event_bus import EventBus
from scheduled_posts.data.event_feed import EventFeed
from scheduled_posts.data.notification_endpoints import NotificationEndpointRepository
from scheduled_posts.data.notify_queue import NotifyQueue
from scheduled_posts.logic.notify_fanout import NotificationFanout
from scheduled_posts.logic.relay import Relay, StreamChange
from scheduled_posts.settings import get_settings


class HeldBackError(Exception):
    """A record after a failed record of the same batch: not relayed, so order is kept."""


def stream_change(record: DynamoDBRecord) -> StreamChange:
    """The record's sequence number, ``eventID`` and images (deserialised by Powertools)."""
    body = record.dynamodb
    if body is None:
        raise ValueError("stream record without a dynamodb body")
    return StreamChange(
        sequence_number=str(body.sequence_number),
        trace_id=str(record.event_id),
        old=body.old_image or None,
        new=body.new_image or None,
    )


@cache
def _default_relay() -> Relay:
    settings = get_settings()
    fanout = None
    if settings.NOTIFY_QUEUE_URL:
        fanout = NotificationFanout(
            endpoints=NotificationEndpointRepository(posts_table_name=settings.POSTS_TABLE_NAME),
            queue=NotifyQueue(settings.NOTIFY_QUEUE_URL),
        )
    return Relay(
        settings,
        feed=EventFeed(settings.POSTS_TABLE_NAME),
        bus=EventBus(settings.EVENT_BUS_NAME),
        notify=fanout,
    )


def make_lambda_handler(relay_factory: Callable[[], Relay] = _default_relay) -> Handler:
    """The decorated Lambda entry point over ``relay_factory()`` (tests pass their own)."""

    def records(context: LambdaContext) -> Callable[[DynamoDBRecord], int]:
        relay = relay_factory()
        failed: list[str] = []

        def record_handler(record: DynamoDBRecord) -> int:
            if failed:
                raise HeldBackError(f"held back behind {failed[0]}")
            try:
                return len(relay.relay(stream_change(record)))
            except Exception:
                failed.append(str(record.event_id))
                raise

        return record_handler

    return batch_handler(
        lambda: BatchProcessor(
            event_type=EventType.DynamoDBStreams, raise_on_entire_batch_failure=False
        ),
        records,
    )


lambda_handler = make_lambda_handler()
