"""The notify queue and its DLQ: one message per (event, endpoint).

Sends in batches of 10 (``SendMessageBatch``: at most 10 entries, Amazon SQS quotas), hides a
failed message for its backoff (``ChangeMessageVisibility``, at most 12 h) and moves a message
that can never succeed straight to the DLQ.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from scheduled_posts.data.aws import sqs_client
from scheduled_posts.errors import QueueSendError
from scheduled_posts.models.notifications import NotifyMessage

#: ``SendMessageBatch`` takes at most 10 entries (Amazon SQS quotas).
SQS_MAX_BATCH = 10
#: The ``ChangeMessageVisibility`` ceiling, seconds (Amazon SQS Developer Guide).
SQS_MAX_VISIBILITY_SECONDS = 43_200


def message_body(message: NotifyMessage) -> str:
    """The queue body of ``message``: compact JSON."""
    return json.dumps(message.model_dump(mode="json"), separators=(",", ":"), ensure_ascii=False)


class NotifyQueue:
    """The notify queue (``NOTIFY_QUEUE_URL``) and its DLQ (``NOTIFY_DLQ_URL``), with an
    injectable boto3 SQS client ``sqs``."""

    def __init__(self, queue_url: str, dlq_url: str = "", *, sqs: Any | None = None) -> None:
        self.queue_url = queue_url
        self.dlq_url = dlq_url
        self._sqs = sqs

    @property
    def client(self) -> Any:
        return self._sqs if self._sqs is not None else sqs_client()

    def send(self, messages: Sequence[NotifyMessage]) -> None:
        """Send ``messages`` to the notify queue, 10 per call.

        Raises
        ------
        QueueSendError
            When SQS refused an entry (the caller retries the whole record; a message sent
            twice is delivered twice with the same ``Idempotency-Key``).
        """
        self.send_bodies([message_body(m) for m in messages], queue_url=self.queue_url)

    def send_bodies(self, bodies: Sequence[str], *, queue_url: str) -> None:
        """Send raw ``bodies`` to ``queue_url`` (the redrive sends DLQ bodies back as they are).

        Raises
        ------
        QueueSendError
            When SQS refused an entry.
        """
        for start in range(0, len(bodies), SQS_MAX_BATCH):
            chunk = bodies[start : start + SQS_MAX_BATCH]
            answer = self.client.send_message_batch(
                QueueUrl=queue_url,
                Entries=[{"Id": str(i), "MessageBody": body} for i, body in enumerate(chunk)],
            )
            failed = answer.get("Failed") or []
            if failed:
                codes = sorted({str(f.get("Code", "?")) for f in failed})
                raise QueueSendError(f"SQS refused {len(failed)} notification(s): {codes}")

    def postpone(self, receipt_handle: str, seconds: float) -> None:
        """Hide a received message for ``seconds`` (rounded up, 0..12 h) from now: its backoff."""
        visibility = max(0, min(SQS_MAX_VISIBILITY_SECONDS, int(-(-seconds // 1))))
        self.client.change_message_visibility(
            QueueUrl=self.queue_url, ReceiptHandle=receipt_handle, VisibilityTimeout=visibility
        )

    def dead_letter(self, message: NotifyMessage) -> None:
        """Put ``message`` on the DLQ (a failure that no retry can fix; ``make redrive``
        sends it back). The caller then lets the original be deleted."""
        self.send_bodies([message_body(message)], queue_url=self.dlq_url)
