"""The due index (``DueIndexTable``): due entries per hour bucket x write shard, late markers,
sweep watermarks and enqueue marks. See ``docs/data-model.md``.

The sweeper's only table: nothing here reads or writes posts. Every read is a Query on one
partition (never a Scan) and reports its ``ScannedCount``, so callers can show that reads grow
with the posts due in a window, not with all pending posts.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from boto3.dynamodb.conditions import Key
from botocore.exceptions import ClientError

from scheduled_posts import keys
from scheduled_posts.clock import format_instant, instant_from_storage
from scheduled_posts.data.aws import TableStore
from scheduled_posts.data.dynamo import is_condition_failure
from scheduled_posts.models.messages import DueEntry


@dataclass(frozen=True)
class DuePage:
    """One Query page: the entries read and DynamoDB's ``ScannedCount`` for it.

    ``last`` is True when the partition range has no further page.
    """

    entries: list[DueEntry]
    scanned_count: int
    last: bool


@dataclass(frozen=True)
class LateMarker:
    """A ``LATE#<shard>`` item: points at a due entry written behind a sweeper's watermark."""

    shard: int
    due: str
    entry_bucket: str
    schedule_id: str
    publish_at: datetime
    version: int


def _entry(item: dict[str, Any]) -> DueEntry:
    return DueEntry(
        bucket=item["bucket"],
        due=item["due"],
        schedule_id=item["schedule_id"],
        publish_at=instant_from_storage(item["publish_at"]),
        version=int(item["version"]),
        shard=int(item["shard"]),
        enqueued_version=(
            int(item["enqueued_version"]) if item.get("enqueued_version") is not None else None
        ),
    )


class DueIndex(TableStore):
    """Operations on ``DueIndexTable``.

    Parameters
    ----------
    table_name:
        ``Settings.DUE_INDEX_TABLE_NAME``.
    table:
        A boto3 DynamoDB ``Table`` (or a wrapper with the same methods); default: one from the
        process's lazily created resource.
    page_size:
        ``Limit`` of each Query page (default 500 items).
    """

    def __init__(self, table_name: str, *, table: Any | None = None, page_size: int = 500) -> None:
        super().__init__(table_name, table=table)
        self.page_size = page_size

    @property
    def _table(self) -> Any:
        return self.table

    # -- reads ---------------------------------------------------------------------------------

    def query_bucket(self, bucket: str, low: str, high: str) -> Iterator[DuePage]:
        """Due entries of one partition with ``low <= due <= high``, page by page, in due order.

        ``bucket`` is ``<YYYY-MM-DDTHH>#<shard>``; ``low``/``high`` are ``due`` sort-key bounds
        (e.g. ``<instant>`` and ``<instant>#~``). Consistent reads.
        """
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": Key("bucket").eq(bucket) & Key("due").between(low, high),
            "ConsistentRead": True,
            "Limit": self.page_size,
        }
        while True:
            response = self._table.query(**kwargs)
            last_key = response.get("LastEvaluatedKey")
            yield DuePage(
                entries=[_entry(item) for item in response.get("Items", [])],
                scanned_count=int(response.get("ScannedCount", 0)),
                last=last_key is None,
            )
            if last_key is None:
                return
            kwargs["ExclusiveStartKey"] = last_key

    def query_late_markers(self, shard: int) -> tuple[list[LateMarker], int]:
        """Every late marker of ``LATE#<shard>`` and the total ``ScannedCount`` of reading them."""
        markers: list[LateMarker] = []
        scanned = 0
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": Key("bucket").eq(keys.late_bucket(shard)),
            "ConsistentRead": True,
        }
        while True:
            response = self._table.query(**kwargs)
            scanned += int(response.get("ScannedCount", 0))
            markers.extend(
                LateMarker(
                    shard=shard,
                    due=item["due"],
                    entry_bucket=item["entry_bucket"],
                    schedule_id=item["schedule_id"],
                    publish_at=instant_from_storage(item["publish_at"]),
                    version=int(item["version"]),
                )
                for item in response.get("Items", [])
            )
            if "LastEvaluatedKey" not in response:
                return markers, scanned
            kwargs["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def get_entry(self, bucket: str, due: str) -> DueEntry | None:
        """The due entry at ``(bucket, due)`` (consistent read), or None when it is gone."""
        item = self._table.get_item(Key={"bucket": bucket, "due": due}, ConsistentRead=True).get(
            "Item"
        )
        return _entry(item) if item else None

    def read_watermark(self, shard: int) -> datetime | None:
        """``swept_through`` of a shard (consistent read), or None when no sweep completed yet."""
        item = self._table.get_item(
            Key={"bucket": keys.WATERMARK_BUCKET, "due": str(shard)}, ConsistentRead=True
        ).get("Item")
        if not item or not item.get("swept_through"):
            return None
        return instant_from_storage(item["swept_through"])

    # -- writes --------------------------------------------------------------------------------

    def advance_watermark(self, shard: int, swept_through: datetime) -> bool:
        """Move a shard's watermark forward to ``swept_through``, never back.

        Condition ``attribute_not_exists(swept_through) OR swept_through < :new``, so overlapping
        sweepers cannot move it backwards. Returns False when it was already at or past it.
        """
        try:
            self._table.update_item(
                Key={"bucket": keys.WATERMARK_BUCKET, "due": str(shard)},
                UpdateExpression="SET swept_through = :new",
                ConditionExpression="attribute_not_exists(swept_through) OR swept_through < :new",
                ExpressionAttributeValues={":new": format_instant(swept_through)},
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return False
            raise
        return True

    def mark_enqueued(self, entry: DueEntry, now: datetime) -> bool:
        """Record that a message for ``entry.version`` was sent (after SQS accepted it).

        Condition ``version = :v AND (attribute_not_exists(enqueued_version) OR
        enqueued_version < :v)``. Returns False when it fails: another sender already marked
        this version (a harmless duplicate message) or the entry was edited or deleted.
        """
        try:
            self._table.update_item(
                Key={"bucket": entry.bucket, "due": entry.due},
                UpdateExpression="SET enqueued_version = :v, enqueued_at = :at",
                ConditionExpression=(
                    "version = :v AND "
                    "(attribute_not_exists(enqueued_version) OR enqueued_version < :v)"
                ),
                ExpressionAttributeValues={":v": entry.version, ":at": format_instant(now)},
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return False
            raise
        return True

    def delete_late_marker(self, shard: int, due: str) -> None:
        """Delete a late marker once its entry has been sent (idempotent)."""
        self._table.delete_item(Key={"bucket": keys.late_bucket(shard), "due": due})
