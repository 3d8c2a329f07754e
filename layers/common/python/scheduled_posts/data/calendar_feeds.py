"""DynamoDB access for calendar feeds (``logic/calendar_feed.py``, ``docs/data-model.md``).

A feed's URL carries a secret token; only its SHA-256 is stored:

* ``pk = CALFEED#<sha256 hex of the token>``, ``sk = CALFEED``: ``owner``, ``created_at`` (the
  public feed route finds its owner by the token's hash, one ``GetItem``);
* ``pk = OWNER#<sub>``, ``sk = CALFEED``: ``token_hash``, ``created_at`` (the owner's current
  feed, for rotation, revocation and erasure).

Rotation and revocation change both in one transaction, so an old token stops working in the
same write that makes the new one work.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from scheduled_posts import keys
from scheduled_posts.clock import format_instant
from scheduled_posts.data.aws import dynamodb_resource
from scheduled_posts.data.dynamo import is_condition_failure, transact

CALENDAR_FEED_SK = "CALFEED"


def calendar_feed_pk(token_hash: str) -> str:
    """The partition key of the feed whose token hashes to ``token_hash``."""
    return f"CALFEED#{token_hash}"


class FeedChanged(Exception):
    """The owner's feed changed between the read and the write (a concurrent rotation)."""


class CalendarFeedStore:
    """Calendar feed items on the posts table."""

    def __init__(self, posts_table_name: str, *, dynamodb: Any | None = None) -> None:
        self.table_name = posts_table_name
        self._dynamodb = dynamodb

    @property
    def _table(self) -> Any:
        return (self._dynamodb or dynamodb_resource()).Table(self.table_name)

    def current(self, owner: str) -> str | None:
        """The token hash of ``owner``'s feed, or None."""
        item = self._table.get_item(
            Key={"pk": keys.owner_pk(owner), "sk": CALENDAR_FEED_SK}, ConsistentRead=True
        ).get("Item")
        return str(item["token_hash"]) if item else None

    def owner_of(self, token_hash: str) -> str | None:
        """The owner of the feed whose token hashes to ``token_hash``, or None (revoked,
        rotated away or never issued)."""
        item = self._table.get_item(
            Key={"pk": calendar_feed_pk(token_hash), "sk": CALENDAR_FEED_SK}, ConsistentRead=True
        ).get("Item")
        return str(item["owner"]) if item else None

    def replace(self, owner: str, *, old: str | None, new: str | None, now: Any) -> None:
        """Make ``new`` the owner's feed (None: no feed) in place of ``old``, in one transaction.

        Raises
        ------
        FeedChanged
            The owner's feed is no longer ``old``.
        """
        pointer_key = {"pk": keys.owner_pk(owner), "sk": CALENDAR_FEED_SK}
        items: list[dict[str, Any]] = []
        condition = (
            {"ConditionExpression": "attribute_not_exists(pk)"}
            if old is None
            else {
                "ConditionExpression": "token_hash = :old",
                "ExpressionAttributeValues": {":old": old},
            }
        )
        if new is None:
            items.append(
                {"Delete": {"TableName": self.table_name, "Key": pointer_key, **condition}}
            )
        else:
            at = format_instant(now)
            items.append(
                {
                    "Put": {
                        "TableName": self.table_name,
                        "Item": {**pointer_key, "token_hash": new, "created_at": at},
                        **condition,
                    }
                }
            )
            items.append(
                {
                    "Put": {
                        "TableName": self.table_name,
                        "Item": {
                            "pk": calendar_feed_pk(new),
                            "sk": CALENDAR_FEED_SK,
                            "owner": owner,
                            "created_at": at,
                        },
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                }
            )
        if old is not None:
            key = {"pk": calendar_feed_pk(old), "sk": CALENDAR_FEED_SK}
            items.append({"Delete": {"TableName": self.table_name, "Key": key}})
        try:
            transact(self._table.meta.client, items)
        except ClientError as exc:
            if is_condition_failure(exc):
                raise FeedChanged from exc
            raise
