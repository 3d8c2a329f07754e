"""DynamoDB access for posting schedules and their reserved slots (``docs/data-model.md``).

Both live under the owner (``pk = OWNER#<sub>``), so account export and erasure, which walk
that partition, take them with everything else:

* ``sk = POSTING#<channel_id>``: the channel's posting schedule (``timezone``, ``slots`` in the
  recurring schedules' weekly grammar, ``updated_at``).
* ``sk = QSLOT#<channel_id>#<instant>``: one reserved slot (``schedule_id``, ``reserved_at``).
  A reservation is a conditional put (``attribute_not_exists(sk) OR schedule_id = :mine``), so
  two posts never hold one slot and a retried create takes its own slot again; a post
  reserving several channels reserves their slots in one transaction (all or none).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from boto3.dynamodb.conditions import Key
from botocore.exceptions import ClientError

from scheduled_posts import keys
from scheduled_posts.clock import format_instant, instant_from_storage
from scheduled_posts.data.aws import dynamodb_resource
from scheduled_posts.data.dynamo import error_code

POSTING_PREFIX = "POSTING#"
SLOT_PREFIX = "QSLOT#"


def posting_sk(channel_id: str) -> str:
    """The sort key of ``channel_id``'s posting schedule."""
    return f"{POSTING_PREFIX}{channel_id}"


def slot_sk(channel_id: str, at: datetime) -> str:
    """The sort key of ``channel_id``'s slot at ``at`` (``QSLOT#<channel_id>#<instant>``)."""
    return f"{SLOT_PREFIX}{channel_id}#{format_instant(at)}"


def _holder(item: Mapping[str, Any] | None) -> str | None:
    """The ``schedule_id`` of a slot item a refused write returned (plain or typed values)."""
    value = (item or {}).get("schedule_id")
    if isinstance(value, Mapping):
        value = value.get("S")
    return str(value) if value else None


class SlotTaken(Exception):
    """A slot of the reservation is held by another post (``holders``: ``channel_id ->
    schedule_id``, where the transaction's answer names them; empty when it does not)."""

    def __init__(self, holders: Mapping[str, str]) -> None:
        super().__init__("slot taken")
        self.holders = dict(holders)


class PostingQueueStore:
    """Posting schedules and slot reservations on the posts table."""

    def __init__(self, posts_table_name: str, *, dynamodb: Any | None = None) -> None:
        self.table_name = posts_table_name
        self._dynamodb = dynamodb

    @property
    def _table(self) -> Any:
        return (self._dynamodb or dynamodb_resource()).Table(self.table_name)

    # -- posting schedules ----------------------------------------------------------------------

    def put_schedule(
        self,
        owner: str,
        channel_id: str,
        *,
        timezone: str,
        slots: list[dict[str, Any]],
        now: datetime,
    ) -> None:
        """Store (or replace) ``channel_id``'s posting schedule."""
        self._table.put_item(
            Item={
                "pk": keys.owner_pk(owner),
                "sk": posting_sk(channel_id),
                "timezone": timezone,
                "slots": slots,
                "updated_at": format_instant(now),
            }
        )

    def get_schedule(self, owner: str, channel_id: str) -> dict[str, Any] | None:
        """``{"timezone", "slots", "updated_at"}`` or None when the channel has none."""
        item = self._table.get_item(
            Key={"pk": keys.owner_pk(owner), "sk": posting_sk(channel_id)}, ConsistentRead=True
        ).get("Item")
        if item is None:
            return None
        return {k: item[k] for k in ("timezone", "slots", "updated_at")}

    def delete_schedule(self, owner: str, channel_id: str) -> bool:
        """Remove the schedule; False when there was none. Reserved slots stay with their posts."""
        answer = self._table.delete_item(
            Key={"pk": keys.owner_pk(owner), "sk": posting_sk(channel_id)}, ReturnValues="ALL_OLD"
        )
        return "Attributes" in answer

    # -- slots ----------------------------------------------------------------------------------

    def reserved(
        self, owner: str, channel_id: str, first: datetime, last: datetime
    ) -> dict[datetime, str]:
        """``instant -> schedule_id`` of the slots reserved in ``[first, last]``."""
        condition = Key("pk").eq(keys.owner_pk(owner)) & Key("sk").between(
            slot_sk(channel_id, first), slot_sk(channel_id, last)
        )
        found: dict[datetime, str] = {}
        kwargs: dict[str, Any] = {"KeyConditionExpression": condition, "ConsistentRead": True}
        while True:
            page = self._table.query(**kwargs)
            for item in page.get("Items", []):
                at = instant_from_storage(str(item["sk"]).rsplit("#", 1)[1])
                found[at] = str(item["schedule_id"])
            if "LastEvaluatedKey" not in page:
                return found
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def reserved_at(self, owner: str, channel_id: str, at: datetime) -> datetime | None:
        """When the slot at ``at`` was reserved, or None when it is free."""
        item = self._table.get_item(
            Key={"pk": keys.owner_pk(owner), "sk": slot_sk(channel_id, at)}, ConsistentRead=True
        ).get("Item")
        return instant_from_storage(str(item["reserved_at"])) if item else None

    def reserve(
        self,
        owner: str,
        channel_ids: Iterable[str],
        at: datetime,
        *,
        schedule_id: str,
        now: datetime,
    ) -> None:
        """Reserve the slot at ``at`` in every channel for ``schedule_id``, all or none.

        Raises
        ------
        SlotTaken
            One of the slots is held by another post.
        """
        wanted = list(channel_ids)
        puts = [
            {
                "Put": {
                    "TableName": self.table_name,
                    "Item": {
                        "pk": keys.owner_pk(owner),
                        "sk": slot_sk(cid, at),
                        "schedule_id": schedule_id,
                        "reserved_at": format_instant(now),
                    },
                    "ConditionExpression": "attribute_not_exists(sk) OR schedule_id = :mine",
                    "ExpressionAttributeValues": {":mine": schedule_id},
                    "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                }
            }
            for cid in wanted
        ]
        client = self._table.meta.client  # a resource's client: plain Python values
        try:
            if len(puts) == 1:
                put = puts[0]["Put"]
                client.put_item(**put)
            else:
                client.transact_write_items(TransactItems=puts)
        except ClientError as exc:
            raise self._taken(exc, wanted) from exc

    @staticmethod
    def _taken(exc: ClientError, channel_ids: list[str]) -> Exception:
        code = error_code(exc)
        if code == "ConditionalCheckFailedException":
            holder = _holder(exc.response.get("Item"))
            return SlotTaken({channel_ids[0]: holder} if holder else {})
        if code == "TransactionCanceledException":
            holders: dict[str, str] = {}
            reasons = exc.response.get("CancellationReasons") or []
            for cid, reason in zip(channel_ids, reasons, strict=False):
                if reason.get("Code") == "ConditionalCheckFailed":
                    holders[cid] = _holder(reason.get("Item")) or ""
            if holders:
                return SlotTaken(holders)
        return exc

    def release(
        self, owner: str, channel_ids: Iterable[str], at: datetime, *, schedule_id: str
    ) -> None:
        """Free ``schedule_id``'s slots at ``at`` (a slot another post holds is left alone)."""
        for cid in channel_ids:
            try:
                self._table.delete_item(
                    Key={"pk": keys.owner_pk(owner), "sk": slot_sk(cid, at)},
                    ConditionExpression="schedule_id = :mine",
                    ExpressionAttributeValues={":mine": schedule_id},
                )
            except ClientError as exc:
                if error_code(exc) != "ConditionalCheckFailedException":
                    raise

    def take_over(
        self,
        owner: str,
        channel_id: str,
        at: datetime,
        *,
        holder: str,
        schedule_id: str,
        now: datetime,
    ) -> bool:
        """Give the slot held by ``holder`` (a post that no longer uses it) to ``schedule_id``;
        False when the slot changed hands meanwhile."""
        try:
            self._table.put_item(
                Item={
                    "pk": keys.owner_pk(owner),
                    "sk": slot_sk(channel_id, at),
                    "schedule_id": schedule_id,
                    "reserved_at": format_instant(now),
                },
                ConditionExpression="schedule_id = :holder",
                ExpressionAttributeValues={":holder": holder},
            )
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                return False
            raise
        return True
