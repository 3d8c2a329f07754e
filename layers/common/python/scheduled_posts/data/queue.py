"""The dispatch queues: send dispatch messages with per-message delays.

Only this module talks to SQS for dispatch. ``DelaySeconds`` is clamped to ``[0, 900]``, the SQS
per-message delay limit (Amazon SQS Developer Guide, "Amazon SQS delay queues"); a batch holds at
most 10 entries (SQS quota for ``SendMessageBatch``).

A deployment may have several dispatch queues, each with its own event source mapping to the
worker (decision "Several dispatch queues, and the settings named for a million posts a minute"):
one mapping scales to at most 1,000 concurrent batches, adding at most 300 a minute (Lambda
Developer Guide, "SQS event source mapping" scaling), so a million posts due in one minute need
about ten. A post's messages always go to the queue of its id (``crc32(schedule_id) %
len(queues)``); any queue would be correct (every one feeds the same worker), the hash only spreads
the load evenly.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from scheduled_posts.data.aws import sqs_client
from scheduled_posts.errors import QueueSendError
from scheduled_posts.models.messages import DispatchMessage
from scheduled_posts.settings import SQS_MAX_DELAY_SECONDS, Settings

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
    """Sends dispatch messages to the dispatch queue, or spread over several.

    Parameters
    ----------
    queue_url:
        The dispatch queue's URL (``Settings.DISPATCH_QUEUE_URL``), or every dispatch queue's
        URL in order (``Settings.dispatch_queue_urls``). Raises ``ValueError`` when empty.
        Receiving and deleting are the event source mapping's (one per queue), not this class's.
    sqs:
        A boto3 SQS client; default: the process's lazily created client.
    """

    def __init__(self, queue_url: str | Sequence[str], *, sqs: Any | None = None) -> None:
        urls = (queue_url,) if isinstance(queue_url, str) else tuple(queue_url)
        if not urls:
            raise ValueError("at least one dispatch queue URL is needed")
        self.queue_urls: tuple[str, ...] = urls
        #: The first queue (the only one in most deployments).
        self.queue_url = urls[0]
        self._sqs = sqs

    @classmethod
    def from_settings(cls, settings: Settings, *, sqs: Any | None = None) -> DispatchQueue:
        """Every dispatch queue the settings name (``DISPATCH_QUEUE_URLS``, else the one
        ``DISPATCH_QUEUE_URL``)."""
        return cls(settings.dispatch_queue_urls, sqs=sqs)

    @property
    def client(self) -> Any:
        return self._sqs if self._sqs is not None else sqs_client()

    def queue_for(self, schedule_id: str) -> str:
        """The URL of the queue a post's messages go to: ``crc32(schedule_id) % len(queues)``."""
        if len(self.queue_urls) == 1:
            return self.queue_url
        return self.queue_urls[zlib.crc32(schedule_id.encode()) % len(self.queue_urls)]

    def send_batch(self, outgoing: Sequence[Outgoing]) -> list[bool]:
        """Send messages in batches of 10; returns, per input message, whether SQS accepted it.

        Raises
        ------
        QueueSendError
            When a whole ``SendMessageBatch`` call fails (network, throttling after retries).
            Batches before it may have been sent (the caller treats the whole call as failed
            and sends again later; the claim drops what arrives twice).
        """
        by_queue: dict[str, list[int]] = {}
        for index, item in enumerate(outgoing):
            by_queue.setdefault(self.queue_for(item.message.schedule_id), []).append(index)
        flags: dict[int, bool] = {}
        for url, indexes in by_queue.items():
            for start in range(0, len(indexes), SQS_MAX_BATCH):
                chunk = indexes[start : start + SQS_MAX_BATCH]
                entries = [
                    {
                        "Id": str(i),
                        "MessageBody": outgoing[i].message.model_dump_json(),
                        "DelaySeconds": max(
                            0, min(SQS_MAX_DELAY_SECONDS, outgoing[i].delay_seconds)
                        ),
                    }
                    for i in chunk
                ]
                try:
                    response = self.client.send_message_batch(QueueUrl=url, Entries=entries)
                except (ClientError, BotoCoreError) as exc:
                    raise QueueSendError(f"SendMessageBatch failed: {exc}") from exc
                ok = {entry["Id"] for entry in response.get("Successful", [])}
                flags.update((i, str(i) in ok) for i in chunk)
        return [flags[i] for i in range(len(outgoing))]

    def send(self, message: DispatchMessage, delay_seconds: int = 0) -> None:
        """Send one message with ``DelaySeconds`` (clamped to 0-900).

        Raises
        ------
        QueueSendError
            When SQS does not accept it.
        """
        try:
            self.client.send_message(
                QueueUrl=self.queue_for(message.schedule_id),
                MessageBody=message.model_dump_json(),
                DelaySeconds=max(0, min(SQS_MAX_DELAY_SECONDS, delay_seconds)),
            )
        except (ClientError, BotoCoreError) as exc:
            raise QueueSendError(f"SendMessage failed: {exc}") from exc
