"""The notifier over a test's moto notify queue, polled as Lambda's SQS event source mapping
polls (receive up to 10, invoke the real handler, delete what it did not report failed)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from functions.notifier.handler import make_lambda_handler
from local.emulation.lambda_runtime import LambdaContext
from scheduled_posts.data.notification_endpoints import NotificationEndpointRepository
from scheduled_posts.data.notify_queue import NotifyQueue
from scheduled_posts.logic.notifier import Notifier
from scheduled_posts.logic.notify_fanout import NotificationFanout
from scheduled_posts.settings import Settings
from tests.support.clock import SimClock


class NotifyRig:
    """The fan-out (give :attr:`fanout` to a relay as ``notify``) and the notifier sending
    through ``transport``/``resolver`` (a :class:`tests.support.receiver.FakeReceiver`)."""

    def __init__(
        self,
        settings: Settings,
        sqs: Any,
        clock: SimClock,
        *,
        transport: Any,
        resolver: Any,
        uniform: Callable[[float, float], float] = random.uniform,
    ) -> None:
        self.settings = settings
        self.sqs = sqs
        self.clock = clock
        self.endpoints = NotificationEndpointRepository(posts_table_name=settings.POSTS_TABLE_NAME)
        self.queue = NotifyQueue(settings.NOTIFY_QUEUE_URL, settings.NOTIFY_DLQ_URL, sqs=sqs)
        self.fanout = NotificationFanout(endpoints=self.endpoints, queue=self.queue)
        self.notifier = Notifier(
            settings,
            endpoints=self.endpoints,
            queue=self.queue,
            transport=transport,
            resolver=resolver,
            clock=clock,
            uniform=uniform,
        )
        self.handler = make_lambda_handler(lambda: self.notifier)

    def poll(self) -> dict[str, int]:
        """One poll: ``{"received": n, "failed": m}``."""
        answer = self.sqs.receive_message(
            QueueUrl=self.settings.NOTIFY_QUEUE_URL,
            MaxNumberOfMessages=10,
            MessageSystemAttributeNames=["All"],
        )
        messages = answer.get("Messages", [])
        if not messages:
            return {"received": 0, "failed": 0}
        records = [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": {
                    "ApproximateReceiveCount": m["Attributes"]["ApproximateReceiveCount"],
                    "SentTimestamp": m["Attributes"]["SentTimestamp"],
                    "SenderId": "test",
                    "ApproximateFirstReceiveTimestamp": "0",
                },
                "messageAttributes": {},
                "md5OfBody": "-",
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:notify",
                "awsRegion": "us-east-1",
            }
            for m in messages
        ]
        result = self.handler(
            {"Records": records}, LambdaContext("notifier", 60, clock=self.clock.seconds)
        )
        failed = {f["itemIdentifier"] for f in result["batchItemFailures"]}
        for m in messages:
            if m["MessageId"] not in failed:
                self.sqs.delete_message(
                    QueueUrl=self.settings.NOTIFY_QUEUE_URL, ReceiptHandle=m["ReceiptHandle"]
                )
        return {"received": len(messages), "failed": len(failed)}

    def drain(self, *, step_seconds: float = 0.0, rounds: int = 50, idle_polls: int = 3) -> int:
        """Poll until a poll receives nothing, at most ``rounds`` polls; the number of messages
        received. With ``step_seconds``, the clock moves that much after each poll and the
        drain ends after ``idle_polls`` empty polls in a row (hidden retries become visible)."""
        total = idle = 0
        for _ in range(rounds):
            received = self.poll()["received"]
            total += received
            idle = 0 if received else idle + 1
            if step_seconds:
                self.clock.advance(step_seconds)
            if idle >= (idle_polls if step_seconds else 1):
                break
        return total

    def dead_letters(self) -> list[str]:
        """Bodies of the notify DLQ's visible messages (received, then made visible again)."""
        answer = self.sqs.receive_message(
            QueueUrl=self.settings.NOTIFY_DLQ_URL, MaxNumberOfMessages=10, VisibilityTimeout=0
        )
        return [m["Body"] for m in answer.get("Messages", [])]
