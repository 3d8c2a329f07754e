"""Promotion: send one due entry to the dispatch queue at once (the API, after a create or edit
inside the lookahead), then mark it enqueued and delete its late marker.

Send, then mark (``docs/decisions.md`` item 3): a crash between the two makes a counted,
harmless duplicate message, never a lost post.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from scheduled_posts import keys
from scheduled_posts.clock import Clock, SystemClock
from scheduled_posts.data.due_index import DueIndex
from scheduled_posts.data.queue import DispatchQueue, delay_until
from scheduled_posts.lifecycle.metric_names import Metric
from scheduled_posts.models.messages import DispatchMessage, DispatchReason, DueEntry
from scheduled_posts.models.post import Post
from scheduled_posts.observability import logger, metrics
from scheduled_posts.settings import Settings


def promote_entry(
    entry: DueEntry, *, settings: Settings, due_index: DueIndex, queue: DispatchQueue, clock: Clock
) -> bool:
    """Send ``entry`` now with ``DelaySeconds = ceil(publish_at - now)`` (0-900), mark it
    enqueued, delete its ``LATE#<shard>`` marker.

    Returns True when a message was sent, False when the entry is beyond
    ``LOOKAHEAD_SECONDS + LATE_MARGIN_SECONDS`` (the sweeper will find it ahead of its
    watermark). A failed mark condition is counted as ``DuplicateEnqueued``.

    Raises
    ------
    scheduled_posts.errors.QueueSendError
        When SQS refuses the message (nothing marked; the late marker stays for the sweeper).
    botocore.exceptions.ClientError
        When DynamoDB fails after the send (the message is out; the sweeper may send a duplicate).
    """
    now = clock.now()
    window = timedelta(seconds=settings.LOOKAHEAD_SECONDS + keys.LATE_MARGIN_SECONDS)
    if entry.publish_at > now + window:
        return False
    message = DispatchMessage(
        schedule_id=entry.schedule_id,
        version=entry.version,
        publish_at=entry.publish_at,
        attempt=1,
        reason=DispatchReason.PROMOTE,
    )
    queue.send(message, delay_until(entry.publish_at, now))
    metrics.add_metric(name=Metric.ENQUEUED, unit=Metric.ENQUEUED.unit, value=1)
    if not due_index.mark_enqueued(entry, now):
        metrics.add_metric(
            name=Metric.DUPLICATE_ENQUEUED, unit=Metric.DUPLICATE_ENQUEUED.unit, value=1
        )
    due_index.delete_late_marker(entry.shard, entry.due)
    logger.info(
        "promoted",
        extra={"schedule_id": entry.schedule_id, "version": entry.version},
    )
    return True


def due_entry_for(post: Post) -> DueEntry:
    """The due entry of ``post`` as the promoter takes it: its bucket and order key, id,
    ``publish_at``, version and shard."""
    return DueEntry(
        bucket=keys.due_bucket(post.publish_at, post.shard),
        due=keys.order_key(post.publish_at, post.schedule_id),
        schedule_id=post.schedule_id,
        publish_at=post.publish_at,
        version=post.version,
        shard=post.shard,
    )


def promote_if_due(
    post: Post,
    now: datetime,
    *,
    promoter: Callable[[DueEntry], None] | None,
    settings: Settings,
) -> None:
    """Hand ``post``'s due entry to ``promoter`` when its ``publish_at`` is at most
    ``LOOKAHEAD_SECONDS`` after ``now`` (after a create, an edit or a materialized occurrence).

    Best effort: nothing without a promoter, and a promoter's failure is logged and swallowed
    (the post's late marker makes the next sweep send it). Raises nothing.
    """
    if promoter is None:
        return
    if post.publish_at > now + timedelta(seconds=settings.LOOKAHEAD_SECONDS):
        return
    try:
        promoter(due_entry_for(post))
    except Exception:  # best effort: the late marker makes the next sweep send it
        logger.exception("promotion failed", extra={"schedule_id": post.schedule_id})


def make_promoter(settings: Settings, clock: Clock | None = None) -> Callable[[DueEntry], None]:
    """A ``promote(entry)`` for the API to call after committing a create or an edit whose
    ``publish_at`` is within ``LOOKAHEAD_SECONDS`` (+ the 60 s late margin).

    Best effort: ``promote`` may raise (:class:`scheduled_posts.errors.QueueSendError`, botocore
    errors); the caller logs and swallows, and the sweeper sends the post from its late marker.
    """
    due_index = DueIndex(settings.DUE_INDEX_TABLE_NAME)
    queue = DispatchQueue.from_settings(settings)
    used_clock: Clock = clock if clock is not None else SystemClock()

    def promote(entry: DueEntry) -> None:
        promote_entry(entry, settings=settings, due_index=due_index, queue=queue, clock=used_clock)

    return promote
