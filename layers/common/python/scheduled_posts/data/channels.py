"""DynamoDB access for channels: ``pk = OWNER#<sub>``, ``sk = CHANNEL#<channel_id>``.

Keyed by owner, so another user's channel is simply not found (see ``docs/data-model.md``).
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from boto3.dynamodb.conditions import Key
from botocore.exceptions import ClientError
from pydantic import BaseModel

from scheduled_posts import keys
from scheduled_posts.clock import format_instant, instant_from_storage
from scheduled_posts.data.aws import dynamodb_resource
from scheduled_posts.data.counted import put_counted
from scheduled_posts.data.dynamo import cancellation_reasons, is_cancelled, is_condition_failure
from scheduled_posts.data.signing_secrets import (
    rotate_signing_secret,
    secrets_from_item,
    secrets_to_item,
)
from scheduled_posts.errors import ChannelNotFoundError, LimitExceededError, StateConflictError
from scheduled_posts.models.network import ChannelAccount, ChannelLimits, ChannelStatus
from scheduled_posts.models.post import Channel, PreviousSecret

_CHANNEL_PREFIX = "CHANNEL#"


def channel_to_item(channel: Channel) -> dict[str, Any]:
    """The DynamoDB item of a channel (boto3 resource types)."""
    item: dict[str, Any] = {
        "pk": keys.owner_pk(channel.owner),
        "sk": keys.channel_sk(channel.channel_id),
        "channel_id": channel.channel_id,
        "owner": channel.owner,
        "platform": channel.platform,
        "name": channel.name,
        "url": channel.url,
        "rate_limit_per_minute": channel.rate_limit_per_minute,
        "signing_secret": channel.signing_secret,
        "previous_signing_secret": channel.previous_signing_secret,
        "previous_secret_expires_at": (
            format_instant(channel.previous_secret_expires_at)
            if channel.previous_secret_expires_at
            else None
        ),
        "previous_secrets": secrets_to_item(channel.previous_secrets),
        "created_at": format_instant(channel.created_at),
    }
    if channel.credentials is not None:  # a platform with credentials (its spec's check)
        item.update(
            {
                "status": channel.status.value,
                "status_reason": channel.status_reason,
                "account": _compact(channel.account),
                "limits": _compact(channel.limits),
                "credentials": channel.credentials,
                "session": channel.session,
            }
        )
    return item


def read_channel(table: Any, owner: str, channel_id: str) -> Channel | None:
    """``owner``'s channel from the boto3 ``table`` (consistent read), or None when deleted or
    not theirs. The one reader of channel items."""
    item = table.get_item(
        Key={"pk": keys.owner_pk(owner), "sk": keys.channel_sk(channel_id)}, ConsistentRead=True
    ).get("Item")
    return channel_from_item(item) if item else None


def _compact(model: BaseModel | None) -> dict[str, Any] | None:
    if model is None:
        return None
    return {k: v for k, v in model.model_dump().items() if v is not None}


def _ints(value: Any) -> dict[str, Any]:
    return {k: int(v) if isinstance(v, Decimal) else v for k, v in (value or {}).items()}


def channel_from_item(item: dict[str, Any]) -> Channel:
    """A :class:`Channel` from its DynamoDB item."""
    rate = item.get("rate_limit_per_minute")
    previous_expiry = item.get("previous_secret_expires_at")
    return Channel(
        channel_id=item["channel_id"],
        owner=item["owner"],
        platform=item["platform"],
        name=item["name"],
        url=item["url"],
        rate_limit_per_minute=int(rate) if rate is not None else None,
        signing_secret=item["signing_secret"],
        previous_signing_secret=item.get("previous_signing_secret"),
        previous_secret_expires_at=(
            instant_from_storage(previous_expiry) if previous_expiry else None
        ),
        previous_secrets=secrets_from_item(item.get("previous_secrets")),
        created_at=instant_from_storage(item["created_at"]),
        status=ChannelStatus(item.get("status") or ChannelStatus.ACTIVE),
        status_reason=item.get("status_reason"),
        account=ChannelAccount(**item["account"]) if item.get("account") else None,
        limits=ChannelLimits(**_ints(item["limits"])) if item.get("limits") else None,
        credentials=item.get("credentials"),
        session=item.get("session"),
    )


class ChannelRepository:
    """Channels of ``PostsTable``. ``dynamodb`` is a boto3 DynamoDB resource (default: lazy)."""

    def __init__(self, *, posts_table_name: str, dynamodb: Any | None = None) -> None:
        self._table_name = posts_table_name
        self._dynamodb = dynamodb

    @property
    def _table(self) -> Any:
        return (self._dynamodb or dynamodb_resource()).Table(self._table_name)

    @property
    def _client(self) -> Any:
        # A resource's client: transactions take plain Python values, like the Table calls.
        return (self._dynamodb or dynamodb_resource()).meta.client

    def put_new(self, channel: Channel, *, max_channels: int) -> None:
        """Store a new channel and count it, in one transaction: the owner's counter item
        (``sk = COUNT#CHANNELS``, attribute ``n``) must stay at most ``max_channels``.

        Raises
        ------
        LimitExceededError
            When the owner already has ``max_channels`` channels (429).
        StateConflictError
            When a channel with that id already exists for the owner (a UUID collision).
        """
        put_counted(
            self._client,
            table_name=self._table_name,
            item=channel_to_item(channel),
            counter_key={"pk": keys.owner_pk(channel.owner), "sk": keys.CHANNEL_COUNT_SK},
            limit=max_channels,
            over_limit=LimitExceededError(
                f"you have {max_channels} channels, the most allowed "
                "(MAX_CHANNELS_PER_USER); delete one first"
            ),
            exists=StateConflictError("channel id already exists"),
        )

    def get(self, owner: str, channel_id: str) -> Channel | None:
        """The owner's channel, or ``None`` (also for another user's channel id)."""
        return read_channel(self._table, owner, channel_id)

    def list(self, owner: str) -> list[Channel]:
        """Every channel of ``owner``, ordered by channel id (one Query, paginated)."""
        channels: list[Channel] = []
        after: str | None = None
        while True:
            page, after = self.list_page(owner, after=after, limit=100)
            channels.extend(page)
            if after is None:
                return channels

    def list_page(
        self, owner: str, *, after: str | None, limit: int
    ) -> tuple[builtins.list[Channel], str | None]:
        """Up to ``limit`` channels of ``owner`` by channel id, after the channel id ``after``;
        with the id to resume after, or ``None`` at the end."""
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": Key("pk").eq(keys.owner_pk(owner))
            & Key("sk").begins_with(_CHANNEL_PREFIX),
            "ConsistentRead": True,
            "Limit": limit + 1,
        }
        if after is not None:
            kwargs["ExclusiveStartKey"] = {
                "pk": keys.owner_pk(owner),
                "sk": keys.channel_sk(after),
            }
        items = self._table.query(**kwargs).get("Items", [])
        channels = [channel_from_item(item) for item in items[:limit]]
        more = len(items) > limit
        return channels, (channels[-1].channel_id if more and channels else None)

    def get_many(self, owner: str, channel_ids: Iterable[str]) -> dict[str, Channel]:
        """``channel_id -> Channel`` for those of ``channel_ids`` that are ``owner``'s (at most
        100 ids: one BatchGet, consistent reads)."""
        wanted = list(dict.fromkeys(channel_ids))
        if not wanted:
            return {}
        dynamodb = self._dynamodb or dynamodb_resource()
        request: dict[str, Any] = {
            self._table_name: {
                "Keys": [{"pk": keys.owner_pk(owner), "sk": keys.channel_sk(c)} for c in wanted],
                "ConsistentRead": True,
            }
        }
        found: dict[str, Channel] = {}
        for _ in range(10):
            answer = dynamodb.batch_get_item(RequestItems=request)
            for item in answer["Responses"].get(self._table_name, []):
                found[item["channel_id"]] = channel_from_item(item)
            request = answer.get("UnprocessedKeys") or {}
            if not request:
                break
        return found

    def existing_ids(self, owner: str, channel_ids: Iterable[str]) -> set[str]:
        """Which of ``channel_ids`` are channels of ``owner`` (at most 100 ids: one BatchGet)."""
        wanted = list(dict.fromkeys(channel_ids))
        if not wanted:
            return set()
        found: set[str] = set()
        dynamodb = self._dynamodb or dynamodb_resource()
        request: dict[str, Any] = {
            self._table_name: {
                "Keys": [{"pk": keys.owner_pk(owner), "sk": keys.channel_sk(c)} for c in wanted],
                "ProjectionExpression": "channel_id",
                "ConsistentRead": True,
            }
        }
        for _ in range(10):
            answer = dynamodb.batch_get_item(RequestItems=request)
            found.update(i["channel_id"] for i in answer["Responses"].get(self._table_name, []))
            request = answer.get("UnprocessedKeys") or {}
            if not request:
                break
        return found

    def rotate_secret(
        self,
        owner: str,
        channel_id: str,
        *,
        current_secret: str,
        new_secret: str,
        previous_secrets: Iterable[PreviousSecret],
    ) -> Channel:
        """Make ``new_secret`` the signing secret and store ``previous_secrets`` (the logic
        builds them: the replaced secret first, with its overlap) in place of the old list.

        Condition ``signing_secret = :current``, so of two concurrent rotations one wins.

        Raises
        ------
        ChannelNotFoundError
            When the owner has no such channel.
        StateConflictError
            When the secret changed since it was read (a concurrent rotation).
        """
        item = rotate_signing_secret(
            self._table,
            {"pk": keys.owner_pk(owner), "sk": keys.channel_sk(channel_id)},
            current_secret=current_secret,
            new_secret=new_secret,
            previous_secrets=previous_secrets,
            exists=lambda: self.get(owner, channel_id) is not None,
            not_found=ChannelNotFoundError("channel not found"),
            remove=("previous_signing_secret", "previous_secret_expires_at"),
        )
        return channel_from_item(item)

    def replace(self, channel: Channel) -> None:
        """Store ``channel`` over the existing one (``PATCH``: name, URL, credentials).

        Raises
        ------
        ChannelNotFoundError
            When the owner has no such channel (deleted meanwhile).
        """
        try:
            self._table.put_item(
                Item=channel_to_item(channel), ConditionExpression="attribute_exists(pk)"
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                raise ChannelNotFoundError("channel not found") from exc
            raise

    def _update_existing(
        self, owner: str, channel_id: str, condition: str = "attribute_exists(pk)", **update: Any
    ) -> bool:
        try:
            self._table.update_item(
                Key={"pk": keys.owner_pk(owner), "sk": keys.channel_sk(channel_id)},
                ConditionExpression=condition,
                **update,
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return False
            raise
        return True

    def set_status(
        self,
        owner: str,
        channel_id: str,
        status: ChannelStatus,
        *,
        reason: str | None,
        credentials: str | None = None,
    ) -> bool:
        """Set the channel's ``status`` and ``status_reason`` (and forget its cached session).

        With ``credentials``, only while the channel still holds those sealed credentials, so a
        refusal of the old credentials never marks a channel whose credentials were replaced
        meanwhile. Returns False when the channel is gone or its credentials changed.
        """
        values: dict[str, Any] = {":status": status.value, ":reason": reason}
        condition = "attribute_exists(pk)"
        if credentials is not None:
            condition += " AND credentials = :creds"
            values[":creds"] = credentials
        return self._update_existing(
            owner,
            channel_id,
            condition=condition,
            UpdateExpression="SET #status = :status, status_reason = :reason REMOVE #session",
            ExpressionAttributeNames={"#status": "status", "#session": "session"},
            ExpressionAttributeValues=values,
        )

    def put_session(self, owner: str, channel_id: str, sealed: str | None) -> bool:
        """Cache a sealed Bluesky session on the channel (``None`` removes it); False when the
        channel is gone."""
        if sealed is None:
            return self._update_existing(
                owner,
                channel_id,
                UpdateExpression="REMOVE #session",
                ExpressionAttributeNames={"#session": "session"},
            )
        return self._update_existing(
            owner,
            channel_id,
            UpdateExpression="SET #session = :session",
            ExpressionAttributeNames={"#session": "session"},
            ExpressionAttributeValues={":session": sealed},
        )

    def delete(self, owner: str, channel_id: str) -> None:
        """Delete the owner's channel and uncount it, in one transaction.

        Raises
        ------
        ChannelNotFoundError
            When the owner has no such channel.
        """
        owner_pk = keys.owner_pk(owner)
        try:
            self._client.transact_write_items(
                TransactItems=[
                    {
                        "Delete": {
                            "TableName": self._table_name,
                            "Key": {"pk": owner_pk, "sk": keys.channel_sk(channel_id)},
                            "ConditionExpression": "attribute_exists(pk)",
                        }
                    },
                    {
                        "Update": {
                            "TableName": self._table_name,
                            "Key": {"pk": owner_pk, "sk": keys.CHANNEL_COUNT_SK},
                            # Channels made before the counter existed were never counted.
                            "UpdateExpression": "ADD n :minus_one",
                            "ConditionExpression": "n > :zero",
                            "ExpressionAttributeValues": {":minus_one": -1, ":zero": 0},
                        }
                    },
                ]
            )
        except ClientError as exc:
            if not is_cancelled(exc):
                raise
            reasons = cancellation_reasons(exc)
            if reasons and reasons[0] == "ConditionalCheckFailed":
                raise ChannelNotFoundError("channel not found") from exc
            if len(reasons) > 1 and reasons[1] == "ConditionalCheckFailed":
                self._delete_uncounted(owner, channel_id)
                return
            raise

    def _delete_uncounted(self, owner: str, channel_id: str) -> None:
        try:
            self._table.delete_item(
                Key={"pk": keys.owner_pk(owner), "sk": keys.channel_sk(channel_id)},
                ConditionExpression="attribute_exists(pk)",
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                raise ChannelNotFoundError("channel not found") from exc
            raise
