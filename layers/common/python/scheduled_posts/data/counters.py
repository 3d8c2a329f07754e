"""The per-user pending-post counter, whole (see ``docs/data-model.md``, "Pending counter").

``PENDING.pending`` counts up on create under ``MAX_PENDING_POSTS`` (:func:`count_pending`);
a post that leaves ``scheduled`` (claim, cancel, missed) adds 1 to one of ``keys.RELEASE_SHARDS``
release items (:func:`release_pending`, or :func:`release_pending_best_effort` where a failure
must not fail the request); a full counter first folds the release shards back into it
(:func:`fold_releases`). What the counter says is :func:`pending_count`; the reconciler
(``data/reconcile.py``) repairs its drift.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from boto3.dynamodb.conditions import Key
from botocore.exceptions import ClientError

from scheduled_posts import keys
from scheduled_posts.data.dynamo import is_cancelled, is_condition_failure
from scheduled_posts.errors import LimitExceededError
from scheduled_posts.observability import logger

_RELEASE_PREFIX = f"{keys.PENDING_SK}#RELEASED#"


def release_pending(posts_table: Any, *, owner: str, schedule_id: str) -> None:
    """Record that one of ``owner``'s posts left ``scheduled`` (claim, cancel or missed).

    Adds 1 to one of ``keys.RELEASE_SHARDS`` release items, chosen by the schedule id, so a burst
    of one user's publishes does not contend on one item. Not transactional with the state
    change: a crash between the two leaves the counter over-counted (safe side), and the
    reconciler repairs it.

    ``posts_table`` is a boto3 DynamoDB ``Table`` resource for ``PostsTable``.
    """
    posts_table.update_item(
        Key={"pk": keys.owner_pk(owner), "sk": keys.release_sk(schedule_id)},
        UpdateExpression="ADD released :one",
        ExpressionAttributeValues={":one": 1},
    )


def release_pending_best_effort(posts_table: Any, *, owner: str, schedule_id: str) -> None:
    """:func:`release_pending`, never raising: a failure is logged and leaves the counter
    over-counted (the safe side: it refuses a create early, never admits one too many), which
    the reconciler repairs."""
    try:
        release_pending(posts_table, owner=owner, schedule_id=schedule_id)
    except Exception:  # the reconciler repairs the counter; never fail the caller for it
        logger.exception("pending release failed", extra={"schedule_id": schedule_id})


def count_pending(
    posts_table: Any, *, owner: str, max_pending: int, fold: Callable[[str], int]
) -> None:
    """Count one more ``scheduled`` post for ``owner`` under ``pending < max_pending``; when
    full, ``fold(owner)`` the release shards once and try again.

    Raises
    ------
    LimitExceededError
        Still ``max_pending`` after the fold (``MAX_PENDING_POSTS``).
    """
    for attempt in (1, 2):
        try:
            posts_table.update_item(
                Key={"pk": keys.owner_pk(owner), "sk": keys.PENDING_SK},
                UpdateExpression="ADD pending :one",
                ConditionExpression="attribute_not_exists(pending) OR pending < :max",
                ExpressionAttributeValues={":one": 1, ":max": max_pending},
            )
            return
        except ClientError as exc:
            if not is_condition_failure(exc):
                raise
            if attempt == 1:
                # Retry even when this fold found nothing: a rival create may have folded
                # the releases between our refusal and our fold, freeing slots.
                fold(owner)
                continue
            raise LimitExceededError(
                f"you already have {max_pending} scheduled posts (MAX_PENDING_POSTS); "
                "cancel one or wait until one is published"
            ) from exc


def fold_releases(
    posts_table: Any, *, owner: str, transact: Callable[[list[dict[str, Any]]], None]
) -> int:
    """Fold the owner's release shards into ``PENDING.pending``; returns how many folded.

    For each release item with ``released = x > 0``: one transaction (``transact``)
    ``released -= x`` (if ``released >= x``) and ``pending -= x``. A shard that changed
    meanwhile is skipped (the next fold takes it).
    """
    page = posts_table.query(
        KeyConditionExpression=Key("pk").eq(keys.owner_pk(owner))
        & Key("sk").begins_with(_RELEASE_PREFIX),
        ConsistentRead=True,
    )
    folded = 0
    for item in page.get("Items", []):
        released = int(item.get("released", 0))
        if released <= 0:
            continue
        try:
            transact(_fold_items(posts_table.name, owner, item, released))
            folded += released
        except ClientError as exc:
            if not is_cancelled(exc):
                raise
            logger.info("pending fold skipped", extra={"owner_shard": item["sk"]})
    return folded


def _fold_items(
    table_name: str, owner: str, shard: dict[str, Any], released: int
) -> list[dict[str, Any]]:
    return [
        {
            "Update": {
                "TableName": table_name,
                "Key": {"pk": shard["pk"], "sk": shard["sk"]},
                "UpdateExpression": "SET released = released - :x",
                "ConditionExpression": "released >= :x",
                "ExpressionAttributeValues": {":x": released},
            }
        },
        {
            "Update": {
                "TableName": table_name,
                "Key": {"pk": keys.owner_pk(owner), "sk": keys.PENDING_SK},
                "UpdateExpression": "ADD pending :minus",
                "ExpressionAttributeValues": {":minus": -released},
            }
        },
    ]


def pending_count(posts_table: Any, owner: str) -> int:
    """``PENDING.pending`` minus every release shard: the owner's ``scheduled`` posts."""
    page = posts_table.query(
        KeyConditionExpression=Key("pk").eq(keys.owner_pk(owner))
        & Key("sk").begins_with(keys.PENDING_SK),
        ConsistentRead=True,
    )
    total = 0
    for item in page.get("Items", []):
        if item["sk"] == keys.PENDING_SK:
            total += int(item.get("pending", 0))
        else:
            total -= int(item.get("released", 0))
    return total
