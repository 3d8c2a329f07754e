"""DynamoDB access for channels: ``pk = OWNER#<sub>``, ``sk = CHANNEL#<channel_id>``.

Keyed by owner, so another user's channel is simply not found (see ``docs/data-model.md``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal
from typing import Any

from boto3.dynamodb.conditions import Key
from botocore.exceptions import ClientError
from pydantic import BaseModel

from scheduled_posts import keys
from scheduled_posts.clock import format_instant, instant_from_storage
from scheduled_posts.data.aws import dynamodb_resource
from scheduled_posts.data.dynamo import is_condition_failure
from scheduled_posts.errors import ChannelNotFoundError, StateConflictError
from scheduled_posts.models.network import ChannelAccount, ChannelLimits, ChannelStatus
from scheduled_posts.models.post import Channel

_CHANNEL_PREFIX = "CHANNEL#"
#: Platforms whose channels carry an account, limits and sealed credentials (issue 12).
NETWORK_PLATFORMS = frozenset({"mastodon", "bluesky"})


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
        "created_at": format_instant(channel.created_at),
    }
    if channel.platform in NETWORK_PLATFORMS:
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

    def put_new(self, channel: Channel) -> None:
        """Store a new channel.

        Raises
        ------
        StateConflictError
            When a channel with that id already exists for the owner (a UUID collision).
        """
        try:
            self._table.put_item(
                Item=channel_to_item(channel), ConditionExpression="attribute_not_exists(pk)"
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                raise StateConflictError("channel id already exists") from exc
            raise

    def get(self, owner: str, channel_id: str) -> Channel | None:
        """The owner's channel, or ``None`` (also for another user's channel id)."""
        return read_channel(self._table, owner, channel_id)

    def list(self, owner: str) -> list[Channel]:
        """Every channel of ``owner``, ordered by channel id (one Query, paginated)."""
        items: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": Key("pk").eq(keys.owner_pk(owner))
            & Key("sk").begins_with(_CHANNEL_PREFIX),
        }
        while True:
            page = self._table.query(**kwargs)
            items.extend(page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return [channel_from_item(item) for item in items]

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
        previous_expires_at: datetime,
    ) -> Channel:
        """Make ``new_secret`` the signing secret and keep ``current_secret`` as the previous
        one until ``previous_expires_at`` (any older previous secret is dropped).

        Condition ``signing_secret = :current``, so of two concurrent rotations one wins.

        Raises
        ------
        ChannelNotFoundError
            When the owner has no such channel.
        StateConflictError
            When the secret changed since it was read (a concurrent rotation).
        """
        try:
            response = self._table.update_item(
                Key={"pk": keys.owner_pk(owner), "sk": keys.channel_sk(channel_id)},
                UpdateExpression=(
                    "SET signing_secret = :new, previous_signing_secret = :current, "
                    "previous_secret_expires_at = :until"
                ),
                ConditionExpression="attribute_exists(pk) AND signing_secret = :current",
                ExpressionAttributeValues={
                    ":new": new_secret,
                    ":current": current_secret,
                    ":until": format_instant(previous_expires_at),
                },
                ReturnValues="ALL_NEW",
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                if self.get(owner, channel_id) is None:
                    raise ChannelNotFoundError("channel not found") from exc
                raise StateConflictError("the secret was rotated meanwhile; try again") from exc
            raise
        return channel_from_item(response["Attributes"])

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
        """Delete the owner's channel.

        Raises
        ------
        ChannelNotFoundError
            When the owner has no such channel.
        """
        try:
            self._table.delete_item(
                Key={"pk": keys.owner_pk(owner), "sk": keys.channel_sk(channel_id)},
                ConditionExpression="attribute_exists(pk)",
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                raise ChannelNotFoundError("channel not found") from exc
            raise
