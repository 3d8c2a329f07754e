"""The owner's feed counter, which is also the erasure's marker and tombstone: one item of
``PostsTable`` per owner (``docs/data-model.md``; decisions, "Feed positions" and "Erasure
erases the feed").

``pk = FEEDSEQ#<SHA-256 hex of the owner>``, ``sk = FEEDSEQ``:

* ``seq``: the last position handed out (``feed_order.position_floor`` when created);
* ``erasing``: set while an erasure of the owner runs (``DELETE /v1/me``);
* ``erased_at`` (ms ISO instant) and ``expires_at`` (TTL): set when the erasure completes.

The relay takes positions with one conditional ``UpdateItem`` that refuses while ``erasing``
is set and, after the erasure, for any post or series created before ``erased_at`` (those were
erased: their stream records may still be on their way). The key is a one-way hash, so the
tombstone names no one; it expires after :data:`TOMBSTONE_SECONDS`, longer than the stream
keeps a record (24 h, DynamoDB Streams).
"""

from __future__ import annotations

import hashlib
from typing import Any

from botocore.exceptions import ClientError

from scheduled_posts.data.aws import TableStore
from scheduled_posts.data.dynamo import is_condition_failure
from scheduled_posts.feed_order import position_floor

COUNTER_PREFIX = "FEEDSEQ#"
COUNTER_SK = "FEEDSEQ"
#: How long the tombstone outlives the erasure: twice the stream's 24 h retention, seconds.
TOMBSTONE_SECONDS = 2 * 86_400
_ADMITS = (
    "attribute_not_exists(erasing) AND (attribute_not_exists(erased_at) OR erased_at < :origin)"
)


def counter_key(owner: str) -> dict[str, str]:
    """The counter item's key (the owner's SHA-256, hex)."""
    digest = hashlib.sha256(owner.encode()).hexdigest()
    return {"pk": f"{COUNTER_PREFIX}{digest}", "sk": COUNTER_SK}


def admits(item: dict[str, Any] | None, origin: str) -> bool:
    """Whether a counter item lets events of something created at ``origin`` (ms ISO) in."""
    if item is None:
        return True
    if "erasing" in item:
        return False
    erased = item.get("erased_at")
    return erased is None or str(erased) < origin


class FeedSequence(TableStore):
    """Takes feed positions; marks and checks erasures (``Settings.POSTS_TABLE_NAME``)."""

    def take(
        self, owner: str, count: int, *, origin: str, now_epoch: float
    ) -> tuple[int, bool] | None:
        """Take ``count`` consecutive positions for an event of something created at
        ``origin``: ``(first position, whether the counter was created now)``, or None when the
        owner is being erased or was erased after ``origin``."""
        floor = position_floor(now_epoch)
        try:
            answer = self.table.update_item(
                Key=counter_key(owner),
                UpdateExpression="SET seq = if_not_exists(seq, :floor) + :n",
                ConditionExpression=_ADMITS,
                ExpressionAttributeValues={":floor": floor, ":n": count, ":origin": origin},
                ReturnValues="UPDATED_OLD",
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return None
            raise
        old = answer.get("Attributes", {}).get("seq")
        return (int(old) if old is not None else floor) + 1, old is None

    def admits(self, owner: str, origin: str) -> bool:
        """Whether events of something created at ``origin`` may stay (consistent read)."""
        item = self.table.get_item(Key=counter_key(owner), ConsistentRead=True).get("Item")
        return admits(item, origin)

    def mark_erasing(self, owner: str, *, requested_at: str) -> None:
        """From now on the relay stores and sends nothing of ``owner``."""
        self.table.update_item(
            Key=counter_key(owner),
            UpdateExpression="SET erasing = :t",
            ExpressionAttributeValues={":t": requested_at},
        )

    def mark_erased(self, owner: str, *, erased_at: str, now_epoch: float) -> None:
        """The erasure completed at ``erased_at``: what was created before stays out; the
        tombstone expires after :data:`TOMBSTONE_SECONDS`. The counter starts again (above
        every earlier position, ``feed_order.position_floor``), so the next event is the first
        of its counter."""
        self.table.update_item(
            Key=counter_key(owner),
            UpdateExpression="SET erased_at = :t, expires_at = :e REMOVE erasing, seq",
            ExpressionAttributeValues={
                ":t": erased_at,
                ":e": int(now_epoch) + TOMBSTONE_SECONDS,
            },
        )
