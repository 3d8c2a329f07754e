"""DynamoDB access for notification endpoints: ``pk = OWNER#<sub>``, ``sk = NOTIFY#<id>``,
counted in ``sk = COUNT#NOTIFY`` (attribute ``n``), like channels (``data/channels.py``).

Keyed by owner, so another user's endpoint is simply not found. These items never reach the
outbox relay: its stream filter passes only ``POST`` and series items (``infra/outbox.py``).
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import Any

from boto3.dynamodb.conditions import Key
from botocore.exceptions import ClientError

from scheduled_posts import keys
from scheduled_posts.clock import format_instant, instant_from_storage
from scheduled_posts.data.aws import dynamodb_resource
from scheduled_posts.data.counted import put_counted
from scheduled_posts.data.signing_secrets import (
    rotate_signing_secret,
    secrets_from_item,
    secrets_to_item,
)
from scheduled_posts.errors import (
    LimitExceededError,
    NotificationEndpointNotFoundError,
    StateConflictError,
)
from scheduled_posts.models.notifications import NotificationEndpoint
from scheduled_posts.models.post import PreviousSecret


def endpoint_to_item(endpoint: NotificationEndpoint) -> dict[str, Any]:
    """The DynamoDB item of an endpoint (boto3 resource types)."""
    return {
        "pk": keys.owner_pk(endpoint.owner),
        "sk": keys.notification_endpoint_sk(endpoint.endpoint_id),
        "endpoint_id": endpoint.endpoint_id,
        "owner": endpoint.owner,
        "url": endpoint.url,
        "event_types": list(endpoint.event_types),
        "signing_secret": endpoint.signing_secret,
        "previous_secrets": secrets_to_item(endpoint.previous_secrets),
        "created_at": format_instant(endpoint.created_at),
    }


def endpoint_from_item(item: dict[str, Any]) -> NotificationEndpoint:
    """A :class:`NotificationEndpoint` from its DynamoDB item."""
    return NotificationEndpoint(
        endpoint_id=item["endpoint_id"],
        owner=item["owner"],
        url=item["url"],
        event_types=tuple(str(t) for t in item.get("event_types") or []),
        signing_secret=item["signing_secret"],
        previous_secrets=secrets_from_item(item.get("previous_secrets")),
        created_at=instant_from_storage(item["created_at"]),
    )


class NotificationEndpointRepository:
    """Notification endpoints of ``PostsTable``. ``dynamodb`` is a boto3 DynamoDB resource
    (default: the process's, lazily)."""

    def __init__(self, *, posts_table_name: str, dynamodb: Any | None = None) -> None:
        self._table_name = posts_table_name
        self._dynamodb = dynamodb

    @property
    def _resource(self) -> Any:
        return self._dynamodb or dynamodb_resource()

    @property
    def _table(self) -> Any:
        return self._resource.Table(self._table_name)

    def _key(self, owner: str, endpoint_id: str) -> dict[str, str]:
        return {"pk": keys.owner_pk(owner), "sk": keys.notification_endpoint_sk(endpoint_id)}

    def put_new(self, endpoint: NotificationEndpoint, *, max_endpoints: int) -> None:
        """Store a new endpoint and count it in one transaction (at most ``max_endpoints``).

        Raises
        ------
        LimitExceededError
            When the owner already has ``max_endpoints`` endpoints (429).
        StateConflictError
            When an endpoint with that id exists (a UUID collision).
        """
        put_counted(
            self._resource.meta.client,
            table_name=self._table_name,
            item=endpoint_to_item(endpoint),
            counter_key={
                "pk": keys.owner_pk(endpoint.owner),
                "sk": keys.NOTIFICATION_ENDPOINT_COUNT_SK,
            },
            limit=max_endpoints,
            over_limit=LimitExceededError(
                f"you have {max_endpoints} notification endpoints, the most allowed "
                "(MAX_NOTIFICATION_ENDPOINTS_PER_USER); delete one first"
            ),
            exists=StateConflictError("endpoint id already exists"),
        )

    def get(self, owner: str, endpoint_id: str) -> NotificationEndpoint | None:
        """The owner's endpoint (consistent read), or ``None`` (also for another user's id)."""
        item = self._table.get_item(Key=self._key(owner, endpoint_id), ConsistentRead=True).get(
            "Item"
        )
        return endpoint_from_item(item) if item else None

    def list(self, owner: str) -> builtins.list[NotificationEndpoint]:
        """Every endpoint of ``owner`` by endpoint id (one Query per 1 MB page)."""
        found: builtins.list[NotificationEndpoint] = []
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": Key("pk").eq(keys.owner_pk(owner))
            & Key("sk").begins_with(keys.NOTIFICATION_ENDPOINT_PREFIX),
        }
        while True:
            answer = self._table.query(**kwargs)
            found.extend(endpoint_from_item(item) for item in answer.get("Items", []))
            if "LastEvaluatedKey" not in answer:
                return found
            kwargs["ExclusiveStartKey"] = answer["LastEvaluatedKey"]

    def rotate_secret(
        self,
        owner: str,
        endpoint_id: str,
        *,
        current_secret: str,
        new_secret: str,
        previous_secrets: Iterable[PreviousSecret],
    ) -> NotificationEndpoint:
        """Make ``new_secret`` the signing secret, keeping ``previous_secrets`` (built by
        ``logic/rotation.py``); condition ``signing_secret = :current`` (one of two concurrent
        rotations wins).

        Raises
        ------
        NotificationEndpointNotFoundError
            The owner has no such endpoint.
        StateConflictError
            The secret changed since it was read.
        """
        item = rotate_signing_secret(
            self._table,
            self._key(owner, endpoint_id),
            current_secret=current_secret,
            new_secret=new_secret,
            previous_secrets=previous_secrets,
            exists=lambda: self.get(owner, endpoint_id) is not None,
            not_found=NotificationEndpointNotFoundError("endpoint not found"),
        )
        return endpoint_from_item(item)

    def delete(self, owner: str, endpoint_id: str) -> None:
        """Delete the owner's endpoint and uncount it in one transaction.

        Raises
        ------
        NotificationEndpointNotFoundError
            The owner has no such endpoint.
        """
        try:
            self._resource.meta.client.transact_write_items(
                TransactItems=[
                    {
                        "Delete": {
                            "TableName": self._table_name,
                            "Key": self._key(owner, endpoint_id),
                            "ConditionExpression": "attribute_exists(pk)",
                        }
                    },
                    {
                        "Update": {
                            "TableName": self._table_name,
                            "Key": {
                                "pk": keys.owner_pk(owner),
                                "sk": keys.NOTIFICATION_ENDPOINT_COUNT_SK,
                            },
                            "UpdateExpression": "ADD n :minus_one",
                            "ConditionExpression": "n > :zero",
                            "ExpressionAttributeValues": {":minus_one": -1, ":zero": 0},
                        }
                    },
                ]
            )
        except ClientError as exc:
            reasons = _cancellation_reasons(exc)
            if reasons and reasons[0] == "ConditionalCheckFailed":
                raise NotificationEndpointNotFoundError("endpoint not found") from exc
            raise


def _cancellation_reasons(exc: ClientError) -> list[str | None]:
    """The per-item reason codes of a cancelled transaction (empty for any other error)."""
    if exc.response["Error"]["Code"] != "TransactionCanceledException":
        return []
    return [r.get("Code") for r in exc.response.get("CancellationReasons", [])]
