"""Notify DLQ redrive (``make redrive REDRIVE_ARGS=--notify``): send dead-lettered
notifications back to the notify queue, unchanged (same event, same ``event_id``, so a receiver
that got one before deduplicates it), each with a fresh ``NOTIFY_MAX_ATTEMPTS``.

A message is sent back, then deleted from the DLQ, so a crash between the two sends it twice
(same ``Idempotency-Key``), never loses it. A body that is not a notify message is left in the
DLQ (shown). Whether the endpoint still exists is the notifier's check at send time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pydantic import ValidationError

from scheduled_posts.data.dlq import DeadLetterQueue
from scheduled_posts.data.notify_queue import NotifyQueue
from scheduled_posts.models.notifications import NotifyMessage


@dataclass(frozen=True)
class NotifyRedriveLine:
    """One DLQ message: ``action`` ``moved`` or ``left`` (``would-`` prefixed in a dry run)."""

    message_id: str
    action: str
    event_id: str | None
    endpoint_id: str | None
    receive_count: int

    def render(self) -> str:
        """One printable line."""
        return (
            f"{self.action:<12} message={self.message_id} event_id={self.event_id or '-'} "
            f"endpoint_id={self.endpoint_id or '-'} receives={self.receive_count}"
        )


def redrive_notifications(
    dlq: DeadLetterQueue,
    queue: NotifyQueue,
    *,
    dry_run: bool = False,
    max_messages: int = 1000,
    report: Callable[[NotifyRedriveLine], None] | None = None,
) -> list[NotifyRedriveLine]:
    """Move up to ``max_messages`` notify DLQ messages back to the notify queue.

    Raises
    ------
    QueueSendError
        When SQS refuses a send (the message stays in the DLQ).
    """
    lines: list[NotifyRedriveLine] = []
    seen: set[str] = set()
    prefix = "would-" if dry_run else ""
    while len(lines) < max_messages:
        letters = [letter for letter in dlq.receive() if letter.message_id not in seen]
        if not letters:
            break
        for letter in letters[: max_messages - len(lines)]:
            seen.add(letter.message_id)
            try:
                message = NotifyMessage.model_validate_json(letter.body)
            except ValidationError:
                line = NotifyRedriveLine(
                    letter.message_id, "left", None, None, letter.receive_count
                )
            else:
                if not dry_run:
                    queue.send_bodies([letter.body], queue_url=queue.queue_url)
                    dlq.delete(letter)
                line = NotifyRedriveLine(
                    letter.message_id,
                    f"{prefix}moved",
                    message.event_id,
                    message.endpoint_id,
                    letter.receive_count,
                )
            lines.append(line)
            if report is not None:
                report(line)
    return lines
