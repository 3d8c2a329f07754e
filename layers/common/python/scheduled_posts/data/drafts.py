"""DynamoDB writes of drafts (decision "Drafts"): a draft is a ``POST#<id>`` item with status
``draft`` and no due entry, so neither the sweeper (it reads only hour buckets and late
markers) nor a worker ever sees it; the owner's ``DRAFTS`` counter item (``drafts``, under
``MAX_DRAFTS``) is counted in the same transaction as every write that makes or ends a draft.

* create: put the post (``attribute_not_exists(pk)``) and ``ADD drafts 1`` under
  ``attribute_not_exists(drafts) OR drafts < :max``.
* edit: the post's update under ``status = draft AND version = v`` (``lifecycle.drafts``).
* schedule: the post's update to ``scheduled`` under the same guard, its due entry (and late
  marker), ``ADD pending 1`` under ``MAX_PENDING_POSTS`` (a full counter folds the release shards
  once, as a create does) and ``ADD drafts -1``: one transaction, so a draft is counted as
  either a draft or a pending post, never both and never neither.
* delete: the post deleted under ``status = draft AND version = v`` and ``ADD drafts -1``.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from scheduled_posts import keys
from scheduled_posts.data.dynamo import (
    TransactionConflictExhaustedError,
    cancellation_reasons,
    is_cancelled,
    transact,
)
from scheduled_posts.data.post_store import render_change
from scheduled_posts.data.posts import PostRepository, TransactionConflictError
from scheduled_posts.errors import (
    LimitExceededError,
    PostNotFoundError,
    ServiceError,
    StateConflictError,
    VersionConflictError,
)
from scheduled_posts.lifecycle import drafts as arrows
from scheduled_posts.lifecycle.states import PostStatus
from scheduled_posts.models.post import Post

_FAILED = "ConditionalCheckFailed"


class DraftStore:
    """The draft writes over a :class:`PostRepository`'s tables."""

    def __init__(self, posts: PostRepository) -> None:
        self._posts = posts
        self._table = posts.posts_table

    def create(self, post: Post, *, max_drafts: int) -> Post:
        """Write the new draft and count it. Returns the stored draft (the one already stored
        under the id when an earlier try of the same idempotent create had committed).

        Raises
        ------
        LimitExceededError
            The owner already has ``max_drafts`` drafts (``MAX_DRAFTS``; 429 like the pending
            limit).
        """
        put = {
            "Put": {
                "TableName": self._table.name,
                "Item": post.to_item(),
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        }
        try:
            self._transact([put, self._counted(post.owner, 1, max_drafts)])
        except ClientError as exc:
            reasons = cancellation_reasons(exc) if is_cancelled(exc) else []
            if reasons[:1] == [_FAILED]:
                stored = self._posts.get(post.schedule_id)
                if stored is not None and stored.owner == post.owner:
                    return stored
                raise StateConflictError("a post with this id already exists") from exc
            if reasons[-1:] == [_FAILED]:
                raise _full(max_drafts) from exc
            raise
        return post

    def edit(self, old: Post, new: Post) -> None:
        """Replace the draft ``old`` by the draft ``new``.

        Raises
        ------
        PostNotFoundError, StateConflictError, VersionConflictError
            The draft was deleted, scheduled or edited meanwhile.
        """
        change = arrows.edit_draft(old, new)
        self._guarded(old, [{"Update": {"TableName": self._table.name, **render_change(change)}}])

    def schedule(self, old: Post, new: Post, *, late: bool, max_pending: int) -> None:
        """The draft ``old`` becomes the ``scheduled`` post ``new``, counted as pending.

        Raises
        ------
        PostNotFoundError, StateConflictError, VersionConflictError
            The draft changed meanwhile.
        LimitExceededError
            The owner already has ``max_pending`` posts scheduled (``MAX_PENDING_POSTS``).
        """
        change = arrows.schedule_draft(old, new)
        items = [
            {"Update": {"TableName": self._table.name, **render_change(change)}},
            *self._posts.entry_items(new, late=late),
            self._counted(new.owner, -1, None),
            {
                "Update": {
                    "TableName": self._table.name,
                    "Key": {"pk": keys.owner_pk(new.owner), "sk": keys.PENDING_SK},
                    "UpdateExpression": "ADD pending :one",
                    "ConditionExpression": "attribute_not_exists(pending) OR pending < :max",
                    "ExpressionAttributeValues": {":one": 1, ":max": max_pending},
                }
            },
        ]
        for attempt in (1, 2):
            try:
                self._guarded(old, items)
                return
            except ClientError as exc:
                if not is_cancelled(exc) or cancellation_reasons(exc)[-1:] != [_FAILED]:
                    raise
                if attempt == 1 and self._posts.fold_releases(new.owner) > 0:
                    continue
                raise LimitExceededError(
                    f"you already have {max_pending} scheduled posts (MAX_PENDING_POSTS); "
                    "cancel one or wait until one is published"
                ) from exc

    def delete(self, post: Post) -> None:
        """Delete the draft ``post`` and uncount it.

        Raises
        ------
        PostNotFoundError, StateConflictError, VersionConflictError
            The draft changed meanwhile.
        """
        arrows.check_delete_draft(post)
        delete = {
            "Delete": {
                "TableName": self._table.name,
                "Key": {"pk": keys.post_pk(post.schedule_id), "sk": keys.POST_SK},
                "ConditionExpression": "#s = :draft AND #v = :v",
                "ExpressionAttributeNames": {"#s": "status", "#v": "version"},
                "ExpressionAttributeValues": {":draft": PostStatus.DRAFT.value, ":v": post.version},
            }
        }
        self._guarded(post, [delete, self._counted(post.owner, -1, None)])

    def count(self, owner: str) -> int:
        """The owner's drafts as counted (``DRAFTS.drafts``; 0 when never counted)."""
        item = self._table.get_item(
            Key={"pk": keys.owner_pk(owner), "sk": keys.DRAFTS_SK}, ConsistentRead=True
        ).get("Item")
        return int(item.get("drafts", 0)) if item else 0

    # -------------------------------------------------------------- internals

    def _counted(self, owner: str, delta: int, max_drafts: int | None) -> dict[str, Any]:
        update: dict[str, Any] = {
            "TableName": self._table.name,
            "Key": {"pk": keys.owner_pk(owner), "sk": keys.DRAFTS_SK},
            "UpdateExpression": "ADD drafts :d",
            "ExpressionAttributeValues": {":d": delta},
        }
        if max_drafts is not None:
            update["ConditionExpression"] = "attribute_not_exists(drafts) OR drafts < :max"
            update["ExpressionAttributeValues"][":max"] = max_drafts
        return {"Update": update}

    def _guarded(self, old: Post, items: list[dict[str, Any]]) -> None:
        """Run ``items`` (the draft's own action first); a lost guard on it is re-read."""
        try:
            self._transact(items)
        except ClientError as exc:
            if is_cancelled(exc) and cancellation_reasons(exc)[:1] == [_FAILED]:
                raise self._conflict_for(old) from exc
            raise

    def _transact(self, items: list[dict[str, Any]]) -> None:
        try:
            transact(self._table.meta.client, items)
        except TransactionConflictExhaustedError as exc:
            raise TransactionConflictError(
                "the draft is being changed by another request; try again"
            ) from exc

    def _conflict_for(self, old: Post) -> ServiceError:
        current = self._posts.get(old.schedule_id)
        if current is None or current.owner != old.owner:
            return PostNotFoundError("scheduled post not found")
        if current.status != PostStatus.DRAFT:
            return StateConflictError(f"the post is {current.status.value}, no longer a draft")
        return VersionConflictError(
            f"the draft changed meanwhile (version {current.version}, expected {old.version})"
        )


def _full(max_drafts: int) -> LimitExceededError:
    return LimitExceededError(
        f"you already have {max_drafts} drafts (MAX_DRAFTS); schedule or delete one first"
    )
