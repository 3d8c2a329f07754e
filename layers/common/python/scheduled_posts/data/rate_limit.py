"""Per-channel rate-limit slots: ``pk = RATE#<channel_id>``, ``sk = <YYYY-MM-DDTHH:MM>``.

One item per (channel, UTC minute) counts the delivery starts granted in that minute
(``docs/data-model.md``, "Rate-limit counter"). A slot is taken with one conditional
``UpdateItem`` (``ADD starts 1`` if ``attribute_not_exists(starts) OR starts < :limit``), so
every worker shares the same count without a lock. Items carry ``expires_at`` (DynamoDB TTL).
"""

from __future__ import annotations

from botocore.exceptions import ClientError

from scheduled_posts import keys
from scheduled_posts.data.aws import TableStore
from scheduled_posts.data.dynamo import is_condition_failure


class RateLimitStore(TableStore):
    """Rate-limit counter items of ``PostsTable``.

    Parameters
    ----------
    table_name:
        ``Settings.POSTS_TABLE_NAME``.
    table:
        A boto3 DynamoDB ``Table`` (or a wrapper with ``update_item``); default: one from the
        process's lazily created resource.
    """

    def take_slot(self, channel_id: str, minute: str, *, limit: int, expires_at: int) -> bool:
        """Take one delivery-start slot of ``channel_id`` in ``minute`` (``YYYY-MM-DDTHH:MM``).

        Returns True when granted (``starts`` was below ``limit`` and is now one more), False
        when the minute is full. ``expires_at`` is the item's TTL (epoch seconds).

        Raises
        ------
        botocore.exceptions.ClientError
            Any DynamoDB error other than the failed condition.
        """
        try:
            self.table.update_item(
                Key={"pk": keys.rate_pk(channel_id), "sk": minute},
                UpdateExpression="ADD starts :one SET expires_at = :x",
                ConditionExpression="attribute_not_exists(starts) OR starts < :limit",
                ExpressionAttributeValues={":one": 1, ":limit": limit, ":x": expires_at},
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return False
            raise
        return True

    def starts(self, channel_id: str, minute: str) -> int:
        """Slots granted so far in ``minute`` (consistent read; 0 when none)."""
        item = self.table.get_item(
            Key={"pk": keys.rate_pk(channel_id), "sk": minute}, ConsistentRead=True
        ).get("Item")
        return int(item.get("starts", 0)) if item else 0
