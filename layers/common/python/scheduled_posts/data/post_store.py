"""The post store: reads ``POST`` items of ``PostsTable`` and applies the lifecycle's changes.

Every state change of a post is a :class:`scheduled_posts.lifecycle.transitions.PostChange`
(the changes and their guard, decided in ``lifecycle/transitions.py``); this store renders it
into one conditional ``UpdateItem`` (:meth:`PostStore.apply`) or one transaction with other
items (:meth:`PostStore.apply_with`). A lost guard is reported as ``None``/``False``, never as an
error: the caller drops the message or answers 409. The API's create/edit/cancel, which also
write due-index entries and the pending counter, go through ``data/posts.py``
(``PostRepository``), which renders the same changes into its transactions.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from boto3.dynamodb.conditions import Key
from botocore.exceptions import ClientError

from scheduled_posts import keys
from scheduled_posts.clock import format_instant
from scheduled_posts.data.aws import TableStore
from scheduled_posts.data.channels import read_channel
from scheduled_posts.data.counters import release_pending_best_effort
from scheduled_posts.data.dynamo import UpdateExpression, is_condition_failure
from scheduled_posts.lifecycle import transitions
from scheduled_posts.lifecycle.arrows import PostChange
from scheduled_posts.lifecycle.outcomes import Completion
from scheduled_posts.models.post import Attempt, Channel, Delivery, Post
from scheduled_posts.tables import BY_LEASE_INDEX

__all__ = ["Completion", "PostStore", "attempt_item", "read_post", "render_change"]


def read_post(table: Any, schedule_id: str) -> Post | None:
    """The post (strongly consistent read) from the boto3 ``table``, or None when there is none.
    The one reader of ``POST`` items."""
    item = table.get_item(
        Key={"pk": keys.post_pk(schedule_id), "sk": keys.POST_SK}, ConsistentRead=True
    ).get("Item")
    return Post.from_item(item) if item else None


def render_change(change: PostChange) -> dict[str, Any]:
    """``Key`` and the expressions of ``change`` (``UpdateItem`` keyword arguments, also the body
    of a transaction's ``Update``)."""
    builder = UpdateExpression()
    # A top-level attribute set to None is removed instead of stored as NULL (an absent
    # attribute reads as None; it keeps the item under 1 KB, decision "Post items store no NULLs and
    # nothing derived").
    nulls = [path[0] for path, value in change.sets.items() if value is None and len(path) == 1]
    builder.set_all({p: v for p, v in change.sets.items() if not (v is None and len(p) == 1)})
    removes = tuple(dict.fromkeys((*change.removes, *nulls)))
    if removes:
        builder.remove(*removes)
    guard = change.guard
    builder.require_equal("status", guard.status.value)
    if guard.version is not None:
        builder.require_equal("version", guard.version)
    if guard.lease_token is not None:
        builder.require_equal("lease_token", guard.lease_token)
    if guard.status_reason is not None:
        builder.require_equal("status_reason", guard.status_reason)
    for path, value in guard.paths:
        builder.require_path_equal(path, value)
    return {"Key": {"pk": keys.post_pk(change.schedule_id), "sk": keys.POST_SK}, **builder.kwargs()}


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
    if attempt.remote_id is not None:
        item["remote_id"] = attempt.remote_id
    if attempt.remote_url is not None:
        item["remote_url"] = attempt.remote_url
    if attempt.lag_seconds is not None:
        item["lag_seconds"] = Delivery(channel_id="-", lag_seconds=attempt.lag_seconds).to_item()[
            "lag_seconds"
        ]
    return item


class PostStore(TableStore):
    """Post, channel and attempt operations of the fire path, the watchdog and recovery.

    Parameters
    ----------
    table_name:
        ``Settings.POSTS_TABLE_NAME``.
    table:
        A boto3 DynamoDB ``Table`` (or a wrapper with the same methods and ``meta.client``);
        default: one from the process's lazily created resource.
    """

    # -- reads ---------------------------------------------------------------------------------

    def get_post(self, schedule_id: str) -> Post | None:
        """The post (strongly consistent read), or None when there is none."""
        return read_post(self.table, schedule_id)

    def get_channel(self, owner: str, channel_id: str) -> Channel | None:
        """``owner``'s channel (consistent read), or None when deleted or not theirs."""
        return read_channel(self.table, owner, channel_id)

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

    # -- applying transitions ------------------------------------------------------------------

    def apply(self, change: PostChange) -> Post | None:
        """Write ``change`` as one conditional ``UpdateItem``; the post after it, or None when
        its guard failed (another transition won)."""
        if change.extra_items:
            return self.get_post(change.schedule_id) if self.apply_with(change, []) else None
        try:
            response = self.table.update_item(ReturnValues="ALL_NEW", **render_change(change))
        except ClientError as exc:
            if is_condition_failure(exc):
                return None
            raise
        return Post.from_item(dict(response.get("Attributes") or {}))

    def apply_with(self, change: PostChange, items: list[dict[str, Any]]) -> bool:
        """Write ``change`` with further transaction ``items`` (and ``change.extra_items``) in one
        ``TransactWriteItems`` (at most 100 actions). False when the guard failed."""
        update = {"TableName": self.table.name, **render_change(change)}
        actions = [{"Update": update}, *change.extra_items, *items]
        try:
            self.table.meta.client.transact_write_items(TransactItems=actions)
        except ClientError as exc:
            if is_condition_failure(exc):
                return False
            raise
        return True

    def claim(
        self,
        post: Post,
        *,
        lease_token: str,
        lease_expires_at: datetime,
        now: datetime,
        starting: tuple[str, ...] = (),
    ) -> Post | None:
        """:func:`transitions.claim`: the claimed post, or None when the claim was lost."""
        return self.apply(
            transitions.claim(
                post,
                lease_token=lease_token,
                lease_expires_at=lease_expires_at,
                now=now,
                starting=starting,
            )
        )

    def mark_missed(self, post: Post, *, reason: str, now: datetime, expires_at: int) -> bool:
        """:func:`transitions.miss`; False when another transition won."""
        change = transitions.miss(post, reason=reason, now=now, expires_at=expires_at)
        return self.apply(change) is not None

    def renew_lease(
        self,
        post: Post,
        *,
        new_token: str,
        lease_expires_at: datetime,
        now: datetime,
        take_over: bool = False,
        starting: tuple[str, ...] = (),
    ) -> Post | None:
        """:func:`transitions.renew_lease` (the watchdog passes ``take_over=True``); None when
        the lease was lost."""
        change = transitions.renew_lease(
            post,
            new_token=new_token,
            lease_expires_at=lease_expires_at,
            now=now,
            take_over=take_over,
            starting=starting,
        )
        return self.apply(change)

    def hand_back_lease(self, post: Post, *, now: datetime) -> Post | None:
        """:func:`transitions.hand_back_lease`; None when the lease moved on meanwhile."""
        return self.apply(transitions.hand_back_lease(post, now=now))

    def use_rate_slot(self, post: Post, *, channel_id: str, slot: str, now: datetime) -> bool:
        """:func:`transitions.use_rate_slot`; False when the slot was used (or the lease lost)
        meanwhile."""
        change = transitions.use_rate_slot(post, channel_id=channel_id, slot=slot, now=now)
        return self.apply(change) is not None

    def put_attempt(self, schedule_id: str, attempt: Attempt, *, expires_at: int) -> None:
        """Write (or overwrite) one attempt row."""
        self.table.put_item(Item=attempt_item(schedule_id, attempt, expires_at))

    def save_round(
        self, change: PostChange, *, attempts: list[Attempt], attempts_expire_at: int
    ) -> bool:
        """Write one delivery round (``record_round`` or ``complete``) and its finished attempt
        rows in one transaction, under the lease token. False when the lease was lost.

        At most 10 channels, so at most 11 items (``TransactWriteItems`` allows 100). With no
        row to write (a round whose attempts are all folded into the post item), one conditional
        ``UpdateItem``: a transaction bills twice (decision "The round's attempts live on the post
        item where they can").
        """
        if not attempts and not change.extra_items:
            return self.apply(change) is not None
        rows = [
            {"Put": {"TableName": self.table.name, "Item": attempt_item(change.schedule_id, a, x)}}
            for a, x in ((a, attempts_expire_at) for a in attempts)
        ]
        return self.apply_with(change, rows)

    def fail_post(
        self,
        post: Post,
        *,
        last_error: str,
        deliveries: dict[str, Delivery],
        now: datetime,
        expires_at: int,
    ) -> bool:
        """:func:`transitions.fail_dead_lettered`; False when the post moved on meanwhile."""
        change = transitions.fail_dead_lettered(
            post, deliveries=deliveries, last_error=last_error, now=now, expires_at=expires_at
        )
        return self.apply(change) is not None

    def release_pending(self, *, owner: str, schedule_id: str) -> None:
        """Release one of ``owner``'s pending-post slots, best effort: never raises
        (``data/counters.release_pending_best_effort``)."""
        release_pending_best_effort(self.table, owner=owner, schedule_id=schedule_id)
