"""DynamoDB access for posts, their due-index entries, attempts and the pending counter.

Edit and cancel are one ``TransactWriteItems`` each (``docs/data-model.md``): the post and its
due entries (and late markers), so no request can leave a post the sweeper never sees or an
entry for a post that is not ``scheduled``. Create is three ordered single-item writes (counter,
entry, post; :meth:`PostRepository.create` says why every gap is safe), half the write units.

The reads are ``data/post_reads.py`` (the base class), the pending counter
``data/counters.py``. The post's own change is decided in ``lifecycle/transitions.py``
(``edit``, ``cancel``, ``reschedule_missed``) and rendered by ``data/post_store.py``; this
module adds the due-index and counter items to the same transaction. DynamoDB transaction
limits: at most 100 actions, no two on the same item (Amazon DynamoDB Developer Guide, "Amazon
DynamoDB Transactions: How it works"); ``TransactionConflict`` is retried by ``data/dynamo.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from scheduled_posts import keys
from scheduled_posts.clock import epoch_seconds, format_instant
from scheduled_posts.data import counters
from scheduled_posts.data.dynamo import (
    TransactionConflictExhaustedError,
    cancellation_reasons,
    is_cancelled,
    is_condition_failure,
    transact,
)
from scheduled_posts.data.entry_writes import put_entry, take_back
from scheduled_posts.data.post_reads import (  # noqa: F401  (data/account.py reads it here)
    PostReader,
    attempt_from_item,
)
from scheduled_posts.data.post_store import render_change
from scheduled_posts.errors import (
    LimitExceededError,
    PostNotFoundError,
    ServiceError,
    StateConflictError,
    VersionConflictError,
)
from scheduled_posts.lifecycle import transitions, waiting
from scheduled_posts.lifecycle.arrows import PostChange
from scheduled_posts.models.post import Attempt, DeliveryStatus, Post, PostStatus
from scheduled_posts.observability import logger


class TransactionConflictError(ServiceError):
    """A transaction kept colliding with others (``TransactionConflict``) after the retries."""

    status = 409
    title = "Conflict"


@dataclass(frozen=True)
class DueKeys:
    """Where a post's due entry (and, when written, its late marker) live in ``DueIndexTable``."""

    bucket: str
    due: str
    late_bucket: str | None


def due_keys(post: Post, *, late: bool) -> DueKeys:
    """The due-index keys of ``post`` (``late``: whether a late marker goes with the entry)."""
    return DueKeys(
        bucket=keys.due_bucket(post.publish_at, post.shard),
        due=keys.order_key(post.publish_at, post.schedule_id),
        late_bucket=keys.late_bucket(post.shard) if late else None,
    )


class PostRepository(PostReader):
    """Posts, due entries, attempts and pending counters: the reads of
    :class:`~scheduled_posts.data.post_reads.PostReader` (same constructor) and the changes.
    """

    # ----------------------------------------------------------------- writes

    def create(self, post: Post, *, late: bool, max_pending: int) -> Post:
        """Count a new post, then write its due entry (and late marker, when ``late``), then
        the post: three ordered single-item writes, not one transaction (decision "Create is three
        ordered single writes": a transaction bills every item twice).

        Returns the stored post: ``post`` itself, or the one already stored under its id when an
        earlier try of the same create had committed (see below).

        1. The pending counter: ``ADD pending 1`` under ``attribute_not_exists(pending) OR
           pending < :max``. When that condition fails, the release shards are folded in and
           the count is tried once more (also when this fold found nothing: another request may
           have just folded them).
        2. The due entry (and marker): puts of the same item every time, under
           ``attribute_not_exists(due) OR version = :v`` (a replay never overwrites the entry of
           a later version: an edit's).
        3. The post, ``attribute_not_exists(pk)``.

        Why this order is safe (each gap is one a crash can leave): after 1 only, the counter
        over-counts (the safe side: the reconciler repairs it); after 2, an entry has no post,
        and the sweeper's message for it is dropped by the worker as stale; if that happened
        before the post was written (a post due within the lookahead), the API promotes the post
        after step 3, and failing that the reconciler sends it (a ``scheduled`` post overdue past
        its slack). The reverse order could leave a post no sweeper ever sees.

        Where the post's put fails its ``attribute_not_exists`` condition (botocore retrying a
        put whose answer was lost, or an idempotent create replayed), the post is re-read: it
        exists, and the id is a fresh UUID (or, for an idempotent create, derived from the
        caller's key and body), so the create committed; the extra count stays (safe side).
        When the stored post has moved on meanwhile (another version: edited, moved or
        cancelled), the entries this replay put back are deleted again (conditioned on their
        version), so a replay never leaves an entry behind (fault seed 4 with the workflow
        world: a cancelled post's entry put back by a replayed create).

        Raises
        ------
        LimitExceededError
            When the owner already has ``max_pending`` posts ``scheduled``.
        """
        self._count_pending(post.owner, max_pending)
        table = self.posts_table
        due = self._resource.Table(self._due_name)
        entries = [action["Put"]["Item"] for action in self._put_entry_items(post, late=late)]
        try:
            for entry in entries:
                put_entry(due, entry)
            table.put_item(Item=post.to_item(), ConditionExpression="attribute_not_exists(pk)")
        except ClientError as exc:
            stored = self._committed(post) if is_condition_failure(exc) else None
            if stored is not None:
                logger.info(
                    "create had committed before a retry", extra={"schedule_id": post.schedule_id}
                )
                if stored.version != post.version:
                    take_back(due, entries)
                return stored
            self._uncount(post)
            take_back(due, entries, best_effort=True)
            raise
        return post

    def _count_pending(self, owner: str, max_pending: int) -> None:
        """Step 1 of :meth:`create` (:func:`data.counters.count_pending`); raises
        :class:`LimitExceededError` when full."""
        counters.count_pending(
            self.posts_table, owner=owner, max_pending=max_pending, fold=self.fold_releases
        )

    def _uncount(self, post: Post) -> None:
        """Best effort: give back the count of a create that failed after counting (the
        reconciler repairs the counter when this fails too)."""
        counters.release_pending_best_effort(
            self.posts_table, owner=post.owner, schedule_id=post.schedule_id
        )

    def replace(
        self,
        old: Post,
        new: Post,
        *,
        old_late: bool,
        new_late: bool,
        now: datetime | None = None,
        attempts: list[Attempt] | None = None,
    ) -> None:
        """Edit or cancel: update the post from ``old`` to ``new`` in one transaction.

        The post's update is conditioned on ``status = scheduled AND version = old.version``
        (a ``publishing`` post waiting for its next attempt at ``now``: ``waiting.
        cancel_waiting``, or ``edit_waiting`` given its ``attempts``, on its lease token too).
        The old due entry (and the old late marker, when ``old_late``) is deleted; when ``new``
        is still ``scheduled``, its entry (and marker, when ``new_late``) is put. A
        ``publishing`` post's entry stays, at the new version, while it stays ``publishing`` or
        when one of its channels published (the reconciler and the verifier read that window).

        Raises
        ------
        PostNotFoundError, StateConflictError, VersionConflictError
            When the condition failed: the post was re-read and is gone, is no longer
            ``scheduled``, or has another version.
        """
        if old.status == PostStatus.PUBLISHING and new.status == PostStatus.CANCELLED:
            change = waiting.cancel_waiting(
                old, new, now=now or new.updated_at, attempts=attempts or []
            )
        elif old.status == PostStatus.PUBLISHING:
            change = waiting.edit_waiting(
                old, new, now=now or new.updated_at, attempts=attempts or []
            )
        elif new.status == PostStatus.CANCELLED:
            change = transitions.cancel(old, new)
        else:
            change = transitions.edit(old, new)
        try:
            self._transact(
                self._replace_items(change, old, new, old_late=old_late, new_late=new_late)
            )
        except ClientError as exc:
            if is_cancelled(exc) and cancellation_reasons(exc)[:1] == ["ConditionalCheckFailed"]:
                raise self._conflict_for(old) from exc
            raise

    def reschedule_missed(self, old: Post, new: Post, *, new_late: bool, max_pending: int) -> None:
        """A ``missed`` post given a new future ``publish_at``: ``new`` (``scheduled``) replaces
        ``old`` under ``status = missed AND version = old.version``, its TTL (``expires_at``)
        removed, the old due entry deleted, the new entry (and marker) put, and the owner's
        pending counter counted up under the ``MAX_PENDING_POSTS`` condition, in one
        transaction (a full counter is folded once, as on create).

        Raises
        ------
        PostNotFoundError, StateConflictError, VersionConflictError
            When the post changed meanwhile (re-read: gone, not ``missed``, another version).
        LimitExceededError
            When the owner already has ``max_pending`` posts ``scheduled``.
        """
        for attempt in (1, 2):
            change = transitions.reschedule_missed(old, new)
            items = self._replace_items(change, old, new, old_late=False, new_late=new_late)
            items.append(
                {
                    "Update": {
                        "TableName": self._posts_name,
                        "Key": {"pk": keys.owner_pk(new.owner), "sk": keys.PENDING_SK},
                        "UpdateExpression": "ADD pending :one",
                        "ConditionExpression": "attribute_not_exists(pending) OR pending < :max",
                        "ExpressionAttributeValues": {":one": 1, ":max": max_pending},
                    }
                }
            )
            try:
                self._transact(items)
                return
            except ClientError as exc:
                reasons = cancellation_reasons(exc)
                if not is_cancelled(exc):
                    raise
                if reasons[:1] == ["ConditionalCheckFailed"]:
                    current = self.get(old.schedule_id)
                    if current is not None and current.status == PostStatus.MISSED:
                        raise VersionConflictError(
                            f"the post changed meanwhile (version {current.version})"
                        ) from exc
                    raise self._conflict_for(old) from exc
                if reasons[-1:] != ["ConditionalCheckFailed"]:
                    raise
                if attempt == 1 and self.fold_releases(new.owner) > 0:
                    continue
                raise LimitExceededError(
                    f"you already have {max_pending} scheduled posts (MAX_PENDING_POSTS); "
                    "cancel one or wait until one is published"
                ) from exc

    def fold_releases(self, owner: str) -> int:
        """Fold the owner's release shards into ``PENDING.pending``
        (:func:`data.counters.fold_releases`); returns how many folded."""
        return counters.fold_releases(self.posts_table, owner=owner, transact=self._transact)

    # -------------------------------------------------------------- internals

    def _transact(self, items: list[dict[str, Any]], *, token: str | None = None) -> None:
        """``TransactWriteItems`` through :func:`data.dynamo.transact` (``TransactionConflict``
        retried).

        Raises
        ------
        TransactionConflictError
            Still colliding after the retries (409).
        """
        try:
            transact(self._resource.meta.client, items, token=token)
        except TransactionConflictExhaustedError as exc:
            raise TransactionConflictError(
                "the post is being changed by another request; try again"
            ) from exc

    def _entry_item(self, post: Post, bucket: str, due: str) -> dict[str, Any]:
        return {
            "bucket": bucket,
            "due": due,
            "schedule_id": post.schedule_id,
            "publish_at": format_instant(post.publish_at),
            "version": post.version,
            "shard": post.shard,
            "expires_at": epoch_seconds(post.publish_at) + self._entry_lifetime_seconds,
        }

    def _put_entry_items(self, post: Post, *, late: bool) -> list[dict[str, Any]]:
        where = due_keys(post, late=late)
        items = [
            {
                "Put": {
                    "TableName": self._due_name,
                    "Item": self._entry_item(post, where.bucket, where.due),
                }
            }
        ]
        if where.late_bucket is not None:
            marker = self._entry_item(post, where.late_bucket, where.due)
            marker["entry_bucket"] = where.bucket
            items.append({"Put": {"TableName": self._due_name, "Item": marker}})
        return items

    def entry_items(self, post: Post, *, late: bool) -> list[dict[str, Any]]:
        """The ``Put`` actions of ``post``'s due entry (and late marker, when ``late``)."""
        return self._put_entry_items(post, late=late)

    def create_items(self, post: Post, *, late: bool, max_pending: int) -> list[dict[str, Any]]:
        """The create transaction's actions (post first, pending counter last), for callers
        that add their own condition (``data.series``: an occurrence's series check)."""
        return self._create_items(post, late=late, max_pending=max_pending)

    def replace_items(
        self, change: PostChange, old: Post, new: Post, *, old_late: bool, new_late: bool
    ) -> list[dict[str, Any]]:
        """The actions of a replacing transition (``change`` on the post first, then the due
        entries moved), for callers that add their own condition."""
        return self._replace_items(change, old, new, old_late=old_late, new_late=new_late)

    def _create_items(self, post: Post, *, late: bool, max_pending: int) -> list[dict[str, Any]]:
        return [
            {
                "Put": {
                    "TableName": self._posts_name,
                    "Item": post.to_item(),
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
            *self._put_entry_items(post, late=late),
            {
                "Update": {
                    "TableName": self._posts_name,
                    "Key": {"pk": keys.owner_pk(post.owner), "sk": keys.PENDING_SK},
                    "UpdateExpression": "ADD pending :one",
                    "ConditionExpression": "attribute_not_exists(pending) OR pending < :max",
                    "ExpressionAttributeValues": {":one": 1, ":max": max_pending},
                }
            },
        ]

    def _replace_items(
        self, change: PostChange, old: Post, new: Post, *, old_late: bool, new_late: bool
    ) -> list[dict[str, Any]]:
        actions: list[dict[str, Any]] = [
            {"Update": {"TableName": self._posts_name, **render_change(change)}},
            *change.extra_items,
        ]
        old_where = due_keys(old, late=old_late)
        # A waiting post keeps its due entry (at the new version) while it stays publishing, or
        # when a channel published: the reconciler's and the verifier's windows read it, so an
        # edited waiting post is still rescued and a cancelled one's published channel read back.
        keeps_entry = new.status == PostStatus.SCHEDULED or (
            old.status == PostStatus.PUBLISHING
            and (
                new.status == PostStatus.PUBLISHING
                or any(d.status == DeliveryStatus.PUBLISHED for d in new.deliveries.values())
            )
        )
        new_late = new_late and new.status == PostStatus.SCHEDULED
        new_where = due_keys(new, late=new_late) if keeps_entry else None
        new_keys: set[tuple[str, str]] = set()
        if new_where is not None:
            puts = self._put_entry_items(new, late=new_late)
            new_keys = {(p["Put"]["Item"]["bucket"], p["Put"]["Item"]["due"]) for p in puts}
        old_keys = [(old_where.bucket, old_where.due)]
        if old_where.late_bucket is not None:
            old_keys.append((old_where.late_bucket, old_where.due))
        for bucket, due in old_keys:
            if (bucket, due) not in new_keys:  # a Put on the same key replaces it
                actions.append(
                    {"Delete": {"TableName": self._due_name, "Key": {"bucket": bucket, "due": due}}}
                )
        if new_where is not None:
            actions.extend(puts)
        return actions

    def _conflict_for(self, old: Post) -> ServiceError:
        current = self.get(old.schedule_id)
        if current is None or current.owner != old.owner:
            return PostNotFoundError("scheduled post not found")
        if old.status == PostStatus.PUBLISHING:  # waiting: a worker's new lease wins
            if current.status != old.status or current.lease_token != old.lease_token:
                return StateConflictError(
                    f"the post is {current.status.value}: a worker started its next attempt"
                )
        elif current.status != PostStatus.SCHEDULED:
            return StateConflictError(
                f"the post is {current.status.value}; only a scheduled post can be changed"
            )
        return VersionConflictError(
            f"the post changed meanwhile (version {current.version}, expected {old.version})"
        )
