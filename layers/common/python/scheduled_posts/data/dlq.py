"""The dispatch dead-letter queue: receive and delete over plain SQS calls.

``StartMessageMoveTask`` (SQS's own redrive) moves messages blindly and is not implemented by
moto, so ``make redrive`` reads each message, decides, sends it back through
:class:`scheduled_posts.data.queue.DispatchQueue` and deletes it here (Amazon SQS API
Reference: ``ReceiveMessage`` returns at most 10 messages per call).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from scheduled_posts.data.aws import sqs_client

#: ``ReceiveMessage`` returns at most 10 messages (Amazon SQS quotas).
SQS_MAX_RECEIVE = 10


@dataclass(frozen=True)
class DeadLetter:
    """One received DLQ message: its id, receipt handle, raw body, how many times the dispatch
    queue delivered it (``ApproximateReceiveCount`` as it was moved) and when it was first sent."""

    message_id: str
    receipt_handle: str
    body: str
    receive_count: int
    sent_at: datetime | None


class DeadLetterQueue:
    """Receives and deletes messages of the dispatch DLQ.

    Parameters
    ----------
    queue_url:
        ``Settings.DISPATCH_DLQ_URL``.
    sqs:
        A boto3 SQS client; default: the process's lazily created client.
    """

    def __init__(self, queue_url: str, *, sqs: Any | None = None) -> None:
        self.queue_url = queue_url
        self._sqs = sqs

    @property
    def client(self) -> Any:
        return self._sqs if self._sqs is not None else sqs_client()

    def receive(self, *, visibility_timeout_seconds: int = 60) -> list[DeadLetter]:
        """Up to 10 visible messages, hidden for ``visibility_timeout_seconds`` while handled
        (a message left undeleted reappears after it). No long polling: an empty list means
        nothing is visible now."""
        response = self.client.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=SQS_MAX_RECEIVE,
            VisibilityTimeout=visibility_timeout_seconds,
            WaitTimeSeconds=0,
            MessageSystemAttributeNames=["ApproximateReceiveCount", "SentTimestamp"],
        )
        letters = []
        for message in response.get("Messages", []):
            attributes = message.get("Attributes", {})
            sent = attributes.get("SentTimestamp")
            letters.append(
                DeadLetter(
                    message_id=message["MessageId"],
                    receipt_handle=message["ReceiptHandle"],
                    body=message["Body"],
                    receive_count=int(attributes.get("ApproximateReceiveCount", "0")),
                    sent_at=datetime.fromtimestamp(int(sent) / 1000, UTC) if sent else None,
                )
            )
        return letters

    def delete(self, letter: DeadLetter) -> None:
        """Delete a handled message."""
        self.client.delete_message(QueueUrl=self.queue_url, ReceiptHandle=letter.receipt_handle)

    def release(self, letter: DeadLetter) -> None:
        """Make a received message visible again at once (``ChangeMessageVisibility`` 0)."""
        self.client.change_message_visibility(
            QueueUrl=self.queue_url, ReceiptHandle=letter.receipt_handle, VisibilityTimeout=0
        )

    def depth(self) -> int:
        """``ApproximateNumberOfMessages`` (visible messages; approximate by design)."""
        attributes = self.client.get_queue_attributes(
            QueueUrl=self.queue_url, AttributeNames=["ApproximateNumberOfMessages"]
        )["Attributes"]
        return int(attributes.get("ApproximateNumberOfMessages", 0))
