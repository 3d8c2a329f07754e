"""The dispatch queue: send dispatch messages with per-message delays, delete processed ones.

Only this module talks to SQS for dispatch. ``DelaySeconds`` is clamped to ``[0, 900]``, the SQS
per-message delay limit (Amazon SQS Developer Guide, "Amazon SQS delay queues"); a batch holds at
most 10 entries (SQS quota for ``SendMessageBatch``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from scheduled_posts.data.aws import sqs_client
from scheduled_posts.errors import QueueSendError
from scheduled_posts.models.messages import DispatchMessage
from scheduled_posts.settings import SQS_MAX_DELAY_SECONDS

#: ``SendMessageBatch`` accepts at most 10 entries (Amazon SQS quotas).
SQS_MAX_BATCH = 10


def delay_until(target: datetime, now: datetime) -> int:
    """Whole seconds to wait from ``now`` until ``target``, rounded **up** (so a message never
    surfaces before ``target``), clamped to ``[0, 900]``. Overdue targets give 0."""
    seconds = math.ceil((target - now).total_seconds())
    return max(0, min(SQS_MAX_DELAY_SECONDS, seconds))


@dataclass(frozen=True)
class Outgoing:
    """One message to send and its ``DelaySeconds`` (0-900)."""

    message: DispatchMessage
    delay_seconds: int = 0


class DispatchQueue:
    """Sends and deletes dispatch messages on one SQS queue.

    Parameters
    ----------
    queue_url:
        The dispatch queue's URL (``Settings.DISPATCH_QUEUE_URL``).
    sqs:
        A boto3 SQS client; default: the process's lazily created client.
    """

    def __init__(self, queue_url: str, *, sqs: Any | None = None) -> None:
        self.queue_url = queue_url
        self._sqs = sqs

    @property
    def client(self) -> Any:
        return self._sqs if self._sqs is not None else sqs_client()

    def send_batch(self, outgoing: Sequence[Outgoing]) -> list[bool]:
        """Send messages in batches of 10; returns, per input message, whether SQS accepted it.

        Raises
        ------
        QueueSendError
            When a whole ``SendMessageBatch`` call fails (network, throttling after retries).
            Messages of earlier batches were sent; the error's ``sent`` lists their flags.
        """
        accepted: list[bool] = []
        for start in range(0, len(outgoing), SQS_MAX_BATCH):
            chunk = outgoing[start : start + SQS_MAX_BATCH]
            entries = [
                {
                    "Id": str(i),
                    "MessageBody": item.message.model_dump_json(),
                    "DelaySeconds": max(0, min(SQS_MAX_DELAY_SECONDS, item.delay_seconds)),
                }
                for i, item in enumerate(chunk)
            ]
            try:
                response = self.client.send_message_batch(QueueUrl=self.queue_url, Entries=entries)
            except (ClientError, BotoCoreError) as exc:
                raise QueueSendError(f"SendMessageBatch failed: {exc}", sent=accepted) from exc
            ok = {entry["Id"] for entry in response.get("Successful", [])}
            accepted.extend(str(i) in ok for i in range(len(chunk)))
        return accepted

    def send(self, message: DispatchMessage, delay_seconds: int = 0) -> None:
        """Send one message with ``DelaySeconds`` (clamped to 0-900).

        Raises
        ------
        QueueSendError
            When SQS does not accept it.
        """
        try:
            self.client.send_message(
                QueueUrl=self.queue_url,
                MessageBody=message.model_dump_json(),
                DelaySeconds=max(0, min(SQS_MAX_DELAY_SECONDS, delay_seconds)),
            )
        except (ClientError, BotoCoreError) as exc:
            raise QueueSendError(f"SendMessage failed: {exc}") from exc

    def delete(self, receipt_handle: str) -> None:
        """Delete a received message (the Lambda event source mapping does this for successes)."""
        self.client.delete_message(QueueUrl=self.queue_url, ReceiptHandle=receipt_handle)
