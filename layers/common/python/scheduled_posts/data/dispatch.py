"""The publish worker's and watchdog's operations on ``PostsTable`` (see ``docs/data-model.md``).

Every state change is a conditional write: the claim and ``missed`` on
``status = scheduled AND version = :v`` (the same condition as the API's cancel and edit, so
exactly one wins a race); everything during ``publishing`` on the lease token. A lost condition
is reported as ``None``/``False``, never as an error: the caller drops the message.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from boto3.dynamodb.conditions import Key
from botocore.exceptions import ClientError

from scheduled_posts import keys
from scheduled_posts.clock import format_instant
from scheduled_posts.data.aws import dynamodb_resource
from scheduled_posts.data.counters import release_pending
from scheduled_posts.models.post import Attempt, Channel, Delivery, Post, PostStatus
from scheduled_posts.tables import BY_LEASE_INDEX


@dataclass(frozen=True)
class Completion:
    """The terminal outcome of a publishing post.

    ``status`` is ``published``, ``partially_published`` or ``failed``; ``expires_at`` is the
    TTL (epoch seconds, finished + ``RETENTION_DAYS``).
    """

    status: PostStatus
    published_at: datetime | None
    publish_lag_seconds: float | None
    status_reason: str | None
    expires_at: int


def _conditional_failure(exc: ClientError) -> bool:
    error = exc.response.get("Error", {})
    if error.get("Code") == "ConditionalCheckFailedException":
        return True
    if error.get("Code") == "TransactionCanceledException":
        reasons = exc.response.get("CancellationReasons") or []
        codes = {r.get("Code") for r in reasons}
        if not reasons:
            return "ConditionalCheckFailed" in str(error.get("Message", ""))
        return "ConditionalCheckFailed" in codes
    return False


def attempt_item(schedule_id: str, attempt: Attempt, expires_at: int) -> dict[str, Any]:
    """The ``ATTEMPT#<started_at>#<channel_id>#<attempt:03d>`` item of one try."""
    item: dict[str, Any] = {
        "pk": keys.post_pk(schedule_id),
        "sk": keys.attempt_sk(attempt.started_at, attempt.channel_id, attempt.attempt),
        "schedule_id": schedule_id,
        "channel_id": attempt.channel_id,
        "attempt": attempt.attempt,
        "started_at": format_instant(attempt.started_at),
        "outcome": attempt.outcome,
        "expires_at": expires_at,
    }
    if attempt.finished_at is not None:
        item["finished_at"] = format_instant(attempt.finished_at)
    if attempt.http_status is not None:
        item["http_status"] = attempt.http_status
    if attempt.error is not None:
        item["error"] = attempt.error
    if attempt.lag_seconds is not None:
        item["lag_seconds"] = Delivery(channel_id="-", lag_seconds=attempt.lag_seconds).to_item()[
            "lag_seconds"
        ]
    return item


class DispatchStore:
    """Post, channel and attempt operations of the fire path.

    Parameters
    ----------
    table_name:
        ``Settings.POSTS_TABLE_NAME``.
    table:
        A boto3 DynamoDB ``Table`` (or a wrapper with the same methods and ``meta.client``);
        default: one from the process's lazily created resource.
    """

    def __init__(self, table_name: str, *, table: Any | None = None) -> None:
        self.table_name = table_name
        self._table_override = table

    @property
    def table(self) -> Any:
        if self._table_override is not None:
            return self._table_override
        return dynamodb_resource().Table(self.table_name)

    # -- reads ---------------------------------------------------------------------------------

    def get_post(self, schedule_id: str) -> Post | None:
        """The post (strongly consistent read), or None when there is none."""
        item = self.table.get_item(
            Key={"pk": keys.post_pk(schedule_id), "sk": keys.POST_SK}, ConsistentRead=True
        ).get("Item")
        return Post.from_item(item) if item else None

    def get_channel(self, owner: str, channel_id: str) -> Channel | None:
        """``owner``'s channel (consistent read), or None when deleted or not theirs."""
        item = self.table.get_item(
            Key={"pk": keys.owner_pk(owner), "sk": keys.channel_sk(channel_id)},
            ConsistentRead=True,
        ).get("Item")
        if not item:
            return None
        return Channel.model_validate({k: v for k, v in item.items() if v is not None})

    def expired_leases(self, shard: int, now: datetime) -> list[str]:
        """Schedule ids whose lease in lease shard ``shard`` expired before ``now``.

        One Query on the sparse GSI ``by_lease`` (``lease_shard = LEASE#<shard> AND
        lease_expires_at < now``), paginated; eventually consistent, so callers re-read the post.
        """
        ids: list[str] = []
        kwargs: dict[str, Any] = {
            "IndexName": BY_LEASE_INDEX.name,
            "KeyConditionExpression": Key("lease_shard").eq(keys.lease_shard(shard))
            & Key("lease_expires_at").lt(format_instant(now)),
        }
        while True:
            response = self.table.query(**kwargs)
            ids.extend(item["pk"].removeprefix("POST#") for item in response.get("Items", []))
            if "LastEvaluatedKey" not in response:
                return ids
            kwargs["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    # -- transitions ---------------------------------------------------------------------------

    def _update(self, **kwargs: Any) -> dict[str, Any] | None:
        try:
            response = self.table.update_item(ReturnValues="ALL_NEW", **kwargs)
        except ClientError as exc:
            if _conditional_failure(exc):
                return None
            raise
        return dict(response.get("Attributes") or {})

    def claim(
        self, post: Post, *, lease_token: str, lease_expires_at: datetime, now: datetime
    ) -> Post | None:
        """``scheduled`` -> ``publishing`` with a lease, under ``status = scheduled AND
        version = :v``. Returns the claimed post, or None when the claim was lost."""
        item = self._update(
            Key={"pk": keys.post_pk(post.schedule_id), "sk": keys.POST_SK},
            UpdateExpression=(
                "SET #s = :publishing, lease_token = :t, lease_expires_at = :e, "
                "lease_shard = :ls, updated_at = :now"
            ),
            ConditionExpression="#s = :scheduled AND version = :v",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={
                ":publishing": PostStatus.PUBLISHING.value,
                ":scheduled": PostStatus.SCHEDULED.value,
                ":v": post.version,
                ":t": lease_token,
                ":e": format_instant(lease_expires_at),
                ":ls": keys.lease_shard(post.shard),
                ":now": format_instant(now),
            },
        )
        return Post.from_item(item) if item is not None else None

    def mark_missed(self, post: Post, *, reason: str, now: datetime, expires_at: int) -> bool:
        """``scheduled`` -> ``missed`` with ``status_reason``, under ``status = scheduled AND
        version = :v``. Returns False when another transition won."""
        item = self._update(
            Key={"pk": keys.post_pk(post.schedule_id), "sk": keys.POST_SK},
            UpdateExpression=(
                "SET #s = :missed, status_reason = :r, updated_at = :now, expires_at = :x"
            ),
            ConditionExpression="#s = :scheduled AND version = :v",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={
                ":missed": PostStatus.MISSED.value,
                ":scheduled": PostStatus.SCHEDULED.value,
                ":v": post.version,
                ":r": reason,
                ":now": format_instant(now),
                ":x": expires_at,
            },
        )
        return item is not None

    def renew_lease(
        self,
        schedule_id: str,
        *,
        old_token: str,
        new_token: str,
        lease_expires_at: datetime,
        now: datetime,
    ) -> Post | None:
        """Replace the lease token of a ``publishing`` post and set its expiry, under
        ``status = publishing AND lease_token = :old``. The worker renews when it continues a
        post; the watchdog when it takes an expired lease over. None when the lease was lost."""
        item = self._update(
            Key={"pk": keys.post_pk(schedule_id), "sk": keys.POST_SK},
            UpdateExpression="SET lease_token = :new, lease_expires_at = :e, updated_at = :now",
            ConditionExpression="#s = :publishing AND lease_token = :old",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={
                ":publishing": PostStatus.PUBLISHING.value,
                ":old": old_token,
                ":new": new_token,
                ":e": format_instant(lease_expires_at),
                ":now": format_instant(now),
            },
        )
        return Post.from_item(item) if item is not None else None

    def put_attempt(self, schedule_id: str, attempt: Attempt, *, expires_at: int) -> None:
        """Write (or overwrite) one attempt row."""
        self.table.put_item(Item=attempt_item(schedule_id, attempt, expires_at))

    def save_round(
        self,
        schedule_id: str,
        *,
        lease_token: str,
        deliveries: dict[str, Delivery],
        attempts: list[Attempt],
        attempts_expire_at: int,
        now: datetime,
        lease_expires_at: datetime | None = None,
        completion: Completion | None = None,
    ) -> bool:
        """Write one delivery round in one transaction, under ``status = publishing AND
        lease_token = :t``: the changed per-channel states, the finished attempt rows, and
        either the extended lease (``lease_expires_at``) or the terminal ``completion`` (which
        removes ``lease_shard``/``lease_expires_at``). Returns False when the lease was lost.

        At most 10 channels, so at most 11 items (``TransactWriteItems`` allows 100).
        """
        names: dict[str, str] = {"#s": "status"}
        values: dict[str, Any] = {
            ":publishing": PostStatus.PUBLISHING.value,
            ":t": lease_token,
            ":now": format_instant(now),
        }
        sets = ["updated_at = :now"]
        removes: list[str] = []
        for i, (channel_id, delivery) in enumerate(sorted(deliveries.items())):
            names[f"#c{i}"] = channel_id
            values[f":c{i}"] = delivery.to_item()
            sets.append(f"deliveries.#c{i} = :c{i}")
        if completion is not None:
            sets += [
                "#s = :final",
                "published_at = :pa",
                "publish_lag_seconds = :lag",
                "status_reason = :r",
                "expires_at = :x",
            ]
            values.update(
                {
                    ":final": completion.status.value,
                    ":pa": format_instant(completion.published_at)
                    if completion.published_at
                    else None,
                    ":lag": Delivery(
                        channel_id="-", lag_seconds=completion.publish_lag_seconds
                    ).to_item()["lag_seconds"],
                    ":r": completion.status_reason,
                    ":x": completion.expires_at,
                }
            )
            removes += ["lease_shard", "lease_expires_at"]
        elif lease_expires_at is not None:
            sets.append("lease_expires_at = :e")
            values[":e"] = format_instant(lease_expires_at)
        expression = "SET " + ", ".join(sets)
        if removes:
            expression += " REMOVE " + ", ".join(removes)
        items: list[dict[str, Any]] = [
            {
                "Update": {
                    "TableName": self.table.name,
                    "Key": {"pk": keys.post_pk(schedule_id), "sk": keys.POST_SK},
                    "UpdateExpression": expression,
                    "ConditionExpression": "#s = :publishing AND lease_token = :t",
                    "ExpressionAttributeNames": names,
                    "ExpressionAttributeValues": values,
                }
            }
        ]
        items += [
            {
                "Put": {
                    "TableName": self.table.name,
                    "Item": attempt_item(schedule_id, attempt, attempts_expire_at),
                }
            }
            for attempt in attempts
        ]
        try:
            self.table.meta.client.transact_write_items(TransactItems=items)
        except ClientError as exc:
            if _conditional_failure(exc):
                return False
            raise
        return True

    def fail_post(
        self,
        post: Post,
        *,
        reason: str,
        last_error: str,
        deliveries: dict[str, Delivery],
        now: datetime,
        expires_at: int,
    ) -> bool:
        """Turn a non-terminal post ``failed`` (a message about to be dead-lettered), under
        ``status = :current AND version = :v`` (and the lease token while ``publishing``).
        Returns False when the post moved on meanwhile."""
        names = {"#s": "status"}
        values: dict[str, Any] = {
            ":failed": PostStatus.FAILED.value,
            ":current": post.status.value,
            ":v": post.version,
            ":r": reason,
            ":err": last_error,
            ":now": format_instant(now),
            ":x": expires_at,
        }
        sets = [
            "#s = :failed",
            "status_reason = :r",
            "last_error = :err",
            "updated_at = :now",
            "expires_at = :x",
        ]
        for i, (channel_id, delivery) in enumerate(sorted(deliveries.items())):
            names[f"#c{i}"] = channel_id
            values[f":c{i}"] = delivery.to_item()
            sets.append(f"deliveries.#c{i} = :c{i}")
        condition = "#s = :current AND version = :v"
        if post.status == PostStatus.PUBLISHING:
            condition += " AND lease_token = :t"
            values[":t"] = post.lease_token
        item = self._update(
            Key={"pk": keys.post_pk(post.schedule_id), "sk": keys.POST_SK},
            UpdateExpression="SET " + ", ".join(sets) + " REMOVE lease_shard, lease_expires_at",
            ConditionExpression=condition,
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
        )
        return item is not None

    def release_pending(self, *, owner: str, schedule_id: str) -> None:
        """Release one of ``owner``'s pending-post slots (see ``data/counters.py``)."""
        release_pending(self.table, owner=owner, schedule_id=schedule_id)
