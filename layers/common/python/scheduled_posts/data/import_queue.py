"""The import queue (decision "Bulk import"): one :class:`ImportChunkMessage` per chunk of 100
rows, sent in batches of 10 (``SendMessageBatch`` takes at most 10 entries, Amazon SQS quotas).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scheduled_posts.data.aws import sqs_client
from scheduled_posts.errors import QueueSendError
from scheduled_posts.models.imports import ImportChunkMessage

#: ``SendMessageBatch`` takes at most 10 entries (Amazon SQS quotas).
SQS_MAX_BATCH = 10


class ImportQueue:
    """The import queue (``IMPORT_QUEUE_URL``), with an injectable boto3 SQS client ``sqs``."""

    def __init__(self, queue_url: str, *, sqs: Any | None = None) -> None:
        self.queue_url = queue_url
        self._sqs = sqs

    def send(self, messages: Sequence[ImportChunkMessage]) -> None:
        """Send ``messages``, 10 per call (a chunk sent twice runs once: it is idempotent).

        Raises
        ------
        QueueSendError
            When SQS refused an entry (the client retries the request, which sends again).
        """
        client = self._sqs if self._sqs is not None else sqs_client()
        for start in range(0, len(messages), SQS_MAX_BATCH):
            batch = messages[start : start + SQS_MAX_BATCH]
            answer = client.send_message_batch(
                QueueUrl=self.queue_url,
                Entries=[
                    {"Id": str(i), "MessageBody": m.model_dump_json()} for i, m in enumerate(batch)
                ],
            )
            failed = answer.get("Failed") or []
            if failed:
                raise QueueSendError(f"SQS refused {len(failed)} import chunk(s)")
