"""A new item counted against a per-owner limit, in one DynamoDB transaction: the put of the
item and the increment of the owner's counter item (attribute ``n``) succeed or fail together.
Shared by channels (``MAX_CHANNELS_PER_USER``) and notification endpoints
(``MAX_NOTIFICATION_ENDPOINTS_PER_USER``)."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from scheduled_posts.data.dynamo import cancellation_reasons, is_cancelled


def put_counted(
    client: Any,
    *,
    table_name: str,
    item: dict[str, Any],
    counter_key: dict[str, str],
    limit: int,
    over_limit: Exception,
    exists: Exception,
) -> None:
    """Put ``item`` (condition ``attribute_not_exists(pk)``) and ``ADD n 1`` on the counter at
    ``counter_key`` (condition ``n < limit``) in one ``TransactWriteItems``. ``client`` is a
    boto3 DynamoDB client.

    Raises
    ------
    Exception
        ``over_limit`` when the counter is at ``limit``; ``exists`` when the item exists.
    """
    try:
        client.transact_write_items(
            TransactItems=[
                {
                    "Put": {
                        "TableName": table_name,
                        "Item": item,
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
                {
                    "Update": {
                        "TableName": table_name,
                        "Key": counter_key,
                        "UpdateExpression": "ADD n :one",
                        "ConditionExpression": "attribute_not_exists(n) OR n < :max",
                        "ExpressionAttributeValues": {":one": 1, ":max": limit},
                    }
                },
            ]
        )
    except ClientError as exc:
        if not is_cancelled(exc):
            raise
        reasons = cancellation_reasons(exc)
        if len(reasons) > 1 and reasons[1] == "ConditionalCheckFailed":
            raise over_limit from exc
        if reasons and reasons[0] == "ConditionalCheckFailed":
            raise exists from exc
        raise
