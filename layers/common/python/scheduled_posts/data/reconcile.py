"""``PostsTable`` operations of the reconciler and the recovery actions (``docs/data-model.md``).

* BatchGet of the posts a due-index window names (at most 100 keys per call, the
  ``BatchGetItem`` quota; unprocessed keys are retried).
* The per-user pending counter: the count of the user's ``scheduled`` posts (GSI ``by_owner``
  with a filter, never a Scan) and a two-sighting repair of ``PENDING.pending``.
* Reopening a terminal post for more delivery (retry endpoint, DLQ redrive): one conditional
  update ``status = :current AND version = :v`` back to ``publishing`` with a new lease.
* Forgetting the stored final failure of a delivery in ``IdempotencyTable`` so a re-delivery
  really calls the destination again (a stored *success* is kept: it replays as published).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from boto3.dynamodb.conditions import Attr, Key
from botocore.exceptions import ClientError

from scheduled_posts import keys
from scheduled_posts.data.aws import dynamodb_resource
from scheduled_posts.data.dynamo import is_condition_failure
from scheduled_posts.models.post import Post, PostStatus
from scheduled_posts.tables import BY_OWNER_INDEX

#: ``BatchGetItem`` reads at most 100 items per call (Amazon DynamoDB quotas).
BATCH_GET_MAX = 100
#: The Powertools idempotency key prefix of the worker's deliveries (``logic/publish.py``).
DELIVERY_KEY_PREFIX = "deliver"


@dataclass(frozen=True)
class PendingState:
    """An owner's pending counter: ``pending`` (``PENDING.pending``), ``released`` (the sum of
    the release shards), and the drift recorded by the previous reconciler run (or None)."""

    pending: int
    released: int
    drift_seen: int | None

    @property
    def counted(self) -> int:
        """What the counter says is ``scheduled``: ``pending - released``."""
        return self.pending - self.released


def delivery_idempotency_id(schedule_id: str, channel_id: str) -> str:
    """The ``IdempotencyTable`` ``id`` of a delivery: Powertools' ``<prefix>#md5(json(key))``
    for the key ``<schedule_id>:<channel_id>`` (``event_key_jmespath="idempotency_key"``)."""
    data = json.dumps(f"{schedule_id}:{channel_id}", sort_keys=True).encode()
    return f"{DELIVERY_KEY_PREFIX}#{hashlib.md5(data, usedforsecurity=False).hexdigest()}"


class ReconcileStore:
    """See the module docstring.

    Parameters
    ----------
    posts_table_name, idempotency_table_name:
        ``Settings.POSTS_TABLE_NAME`` and ``Settings.IDEMPOTENCY_TABLE_NAME``.
    dynamodb:
        A boto3 DynamoDB resource (default: the process's, created lazily).
    """

    def __init__(
        self,
        posts_table_name: str,
        idempotency_table_name: str = "",
        *,
        dynamodb: Any | None = None,
    ) -> None:
        self.posts_table_name = posts_table_name
        self.idempotency_table_name = idempotency_table_name
        self._dynamodb = dynamodb

    @property
    def _resource(self) -> Any:
        return self._dynamodb or dynamodb_resource()

    @property
    def _posts(self) -> Any:
        return self._resource.Table(self.posts_table_name)

    # -- reads ---------------------------------------------------------------------------------

    def batch_get_posts(self, schedule_ids: list[str]) -> dict[str, Post]:
        """The posts of ``schedule_ids`` that exist, by id (consistent reads, 100 per call)."""
        found: dict[str, Post] = {}
        unique = list(dict.fromkeys(schedule_ids))
        for start in range(0, len(unique), BATCH_GET_MAX):
            request: dict[str, Any] = {
                self.posts_table_name: {
                    "Keys": [
                        {"pk": keys.post_pk(sid), "sk": keys.POST_SK}
                        for sid in unique[start : start + BATCH_GET_MAX]
                    ],
                    "ConsistentRead": True,
                }
            }
            for _ in range(10):
                answer = self._resource.batch_get_item(RequestItems=request)
                for item in answer.get("Responses", {}).get(self.posts_table_name, []):
                    post = Post.from_item(item)
                    found[post.schedule_id] = post
                request = answer.get("UnprocessedKeys") or {}
                if not request:
                    break
        return found

    def count_scheduled(self, owner: str) -> int:
        """How many of ``owner``'s posts are ``scheduled``: GSI ``by_owner`` with a filter on
        ``status`` (``Select=COUNT``, paginated). Eventually consistent."""
        kwargs: dict[str, Any] = {
            "IndexName": BY_OWNER_INDEX.name,
            "KeyConditionExpression": Key("gsi1pk").eq(keys.owner_posts_gsi_pk(owner)),
            "FilterExpression": Attr("status").eq(PostStatus.SCHEDULED.value),
            "Select": "COUNT",
        }
        total = 0
        while True:
            page = self._posts.query(**kwargs)
            total += int(page.get("Count", 0))
            if "LastEvaluatedKey" not in page:
                return total
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def pending_state(self, owner: str) -> PendingState:
        """``PENDING`` and its release shards for ``owner`` (one consistent Query)."""
        page = self._posts.query(
            KeyConditionExpression=Key("pk").eq(keys.owner_pk(owner))
            & Key("sk").begins_with(keys.PENDING_SK),
            ConsistentRead=True,
        )
        pending, released, seen = 0, 0, None
        for item in page.get("Items", []):
            if item["sk"] == keys.PENDING_SK:
                pending = int(item.get("pending", 0))
                if item.get("drift_seen") is not None:
                    seen = int(item["drift_seen"])
            else:
                released += int(item.get("released", 0))
        return PendingState(pending=pending, released=released, drift_seen=seen)

    # -- pending-counter repair ----------------------------------------------------------------

    def record_drift(self, owner: str, *, drift: int | None, pending: int) -> bool:
        """Remember ``drift`` (None: forget it) on ``PENDING``, under ``pending = :p`` (the
        value just read). False when the counter moved meanwhile."""
        if drift is None:
            expression, values = "REMOVE drift_seen", {":p": pending}
        else:
            expression, values = "SET drift_seen = :d", {":p": pending, ":d": drift}
        return self._update_pending(owner, expression, "pending = :p", values)

    def repair_pending(self, owner: str, *, drift: int, pending: int) -> bool:
        """Subtract ``drift`` from ``PENDING.pending`` and forget it, under ``pending = :p AND
        drift_seen = :d`` (the same drift seen by the previous run). False when anything moved."""
        return self._update_pending(
            owner,
            "SET pending = pending - :d REMOVE drift_seen",
            "pending = :p AND drift_seen = :d",
            {":p": pending, ":d": drift},
        )

    def _update_pending(
        self, owner: str, expression: str, condition: str, values: dict[str, Any]
    ) -> bool:
        try:
            self._posts.update_item(
                Key={"pk": keys.owner_pk(owner), "sk": keys.PENDING_SK},
                UpdateExpression=expression,
                ConditionExpression=condition,
                ExpressionAttributeValues=values,
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return False
            raise
        return True

    # -- idempotency records ---------------------------------------------------------------------

    def forget_failed_delivery(self, schedule_id: str, channel_id: str) -> bool:
        """Delete the delivery's idempotency record when it stores a final *failure*
        (``status = COMPLETED`` and an outcome other than ``published``), so the next delivery
        calls the destination again. A stored success or an in-progress record is kept.
        Returns True when a record was deleted."""
        table = self._resource.Table(self.idempotency_table_name)
        record_id = delivery_idempotency_id(schedule_id, channel_id)
        item = table.get_item(Key={"id": record_id}, ConsistentRead=True).get("Item")
        if not item or item.get("status") != "COMPLETED":
            return False
        try:
            outcome = json.loads(item.get("data") or "{}").get("outcome")
        except ValueError:
            outcome = None
        if outcome == "published":
            return False
        try:
            table.delete_item(
                Key={"id": record_id},
                ConditionExpression="#st = :completed",
                ExpressionAttributeNames={"#st": "status"},
                ExpressionAttributeValues={":completed": "COMPLETED"},
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return False
            raise
        return True
