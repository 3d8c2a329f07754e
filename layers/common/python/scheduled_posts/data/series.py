"""DynamoDB access for recurring schedules: series items, the owner's open-series
counter, the materialization index and occurrence writes. See ``docs/data-model.md``. The reads
are ``data/series_reads.py`` (the base class); the guards of a save come from
``lifecycle/series_transitions.py``.

* A series is ``pk = SERIES#<id>, sk = SERIES`` in ``PostsTable``; its open-series counter is
  ``pk = OWNER#<sub>, sk = SERIES_COUNT`` (``open``), counted up on create under
  ``open < MAX_SERIES_PER_USER`` in the create transaction and down when it ends or is deleted.
* The materialization index lives in ``DueIndexTable``, keyed like the due index:
  ``bucket = SERIES#<YYYY-MM-DDTHH>#<shard>`` of the instant the series next needs extending
  (``extend_at``), ``due = <extend_at>#<series_id>``. Every change of a series moves its entry
  in the same transaction, so the materializer reads only the series due for extension.
* An occurrence is written like any post (post, due entry, late marker, pending counter) plus a
  write to the series item under the condition that it is still ``active`` at the version the
  occurrence was computed from: once an edit has bumped the version, no occurrence computed
  under the old rule can be written. A new occurrence counts itself there
  (``ADD occurrence_count 1``, under ``occurrence_count < max_occurrences``), so the count is
  exact when a run crashes halfway or two run at once, and never passes ``max_occurrences``.
  A save of the series never writes ``occurrence_count``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from scheduled_posts import keys
from scheduled_posts.clock import format_instant
from scheduled_posts.data.dynamo import (
    TransactionConflictExhaustedError,
    UpdateExpression,
    cancellation_reasons,
    is_cancelled,
    is_condition_failure,
    transact,
)
from scheduled_posts.data.posts import PostRepository, TransactionConflictError
from scheduled_posts.data.series_reads import SeriesReader
from scheduled_posts.errors import LimitExceededError, ServiceError, VersionConflictError
from scheduled_posts.lifecycle import series_transitions, transitions
from scheduled_posts.models.post import Post
from scheduled_posts.models.series import Series

_KEY_ATTRIBUTES = frozenset({"pk", "sk"})
#: Written only by the occurrence writes themselves (``ADD``), never by a save of the series
#: read earlier, which would overwrite the counts of writes made since.
_COUNTED_ATTRIBUTES = frozenset({"occurrence_count"})


class SeriesChangedError(VersionConflictError):
    """The series is no longer at the version (or materialization point) a write assumed."""


class OccurrencesExhaustedError(Exception):
    """The series has written ``max_occurrences`` occurrence posts (RFC 5545 COUNT, decision
    "Bounds follow RFC 5545"): no further occurrence may be written."""


class SeriesLimitError(ServiceError):
    """The owner already has ``MAX_SERIES_PER_USER`` open series (a 422 with ``series_limit``)."""

    status = 422
    title = "Validation failed"


class SeriesRepository(SeriesReader):
    """Series items, the open-series counter, the materialization index and occurrences: the
    reads of :class:`~scheduled_posts.data.series_reads.SeriesReader` and the writes.

    ``posts`` is the :class:`PostRepository` whose transaction items an occurrence reuses.
    """

    def __init__(
        self,
        *,
        posts_table_name: str,
        due_table_name: str,
        posts: PostRepository,
        dynamodb: Any | None = None,
    ) -> None:
        super().__init__(
            posts_table_name=posts_table_name, due_table_name=due_table_name, dynamodb=dynamodb
        )
        self._posts = posts

    # ------------------------------------------------------------------ watermark

    def advance_watermark(self, shard: int, through: datetime) -> None:
        """Move the shard's watermark forward to ``through`` (never back)."""
        try:
            self._due.update_item(
                Key={"bucket": keys.SERIES_WATERMARK_BUCKET, "due": str(shard)},
                UpdateExpression="SET through = :t",
                ConditionExpression="attribute_not_exists(through) OR through < :t",
                ExpressionAttributeValues={":t": format_instant(through)},
            )
        except ClientError as exc:
            if not is_condition_failure(exc):
                raise

    def start_watermark(self, shard: int, through: datetime) -> None:
        """Create the shard's watermark at ``through`` unless it exists (never moves it), so a
        shard's first materializer run reads back to the first series ever written to it."""
        self._due.update_item(
            Key={"bucket": keys.SERIES_WATERMARK_BUCKET, "due": str(shard)},
            UpdateExpression="SET through = if_not_exists(through, :t)",
            ExpressionAttributeValues={":t": format_instant(through)},
        )

    # ----------------------------------------------------------------- writes

    def create(self, series: Series, *, max_series: int) -> Series:
        """Write a new series, its index entry and count it as open, in one transaction.

        Returns the stored series: ``series`` itself, or the one already stored under its id
        (an idempotent create's retry).

        Raises
        ------
        SeriesLimitError
            The owner already has ``max_series`` open series.
        """
        items = [
            {
                "Put": {
                    "TableName": self._posts_name,
                    "Item": series.to_item(),
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
            *self._index_puts(series),
            self._count_update(series.owner, +1, max_series=max_series),
        ]
        try:
            self._transact(items)
        except ClientError as exc:
            reasons = cancellation_reasons(exc)
            if is_cancelled(exc) and reasons[:1] == ["ConditionalCheckFailed"]:
                stored = self.get(series.series_id)
                if stored is not None and stored.owner == series.owner:
                    return stored
                raise
            if is_cancelled(exc) and reasons[-1:] == ["ConditionalCheckFailed"]:
                raise SeriesLimitError(
                    f"you already have {max_series} active or paused recurring schedules "
                    "(MAX_SERIES_PER_USER); delete one first"
                ) from exc
            raise
        return series

    def save(self, old: Series, new: Series) -> None:
        """Replace ``old`` by ``new`` under ``version``, ``status`` and
        ``materialized_through`` unchanged since ``old`` was read; move the index entry; count
        the series down when it closes (ended or cancelled).

        Raises
        ------
        SeriesChangedError
            The series changed meanwhile (an edit, another materializer).
        """
        expression = UpdateExpression()
        expression.set_all(
            {
                (name,): value
                for name, value in sorted(new.to_item().items())
                if name not in _KEY_ATTRIBUTES | _COUNTED_ATTRIBUTES
            }
        )
        for name, value in series_transitions.save_guard(old).items():
            expression.require_equal(name, value)
        actions: list[dict[str, Any]] = [
            {
                "Update": {
                    "TableName": self._posts_name,
                    "Key": {"pk": keys.series_pk(old.series_id), "sk": keys.SERIES_SK},
                    **expression.kwargs(),
                }
            }
        ]
        old_keys, new_keys = old.index_keys(), new.index_keys()
        if old_keys is not None and old_keys != new_keys:
            actions.append(
                {
                    "Delete": {
                        "TableName": self._due_name,
                        "Key": {"bucket": old_keys[0], "due": old_keys[1]},
                    }
                }
            )
        actions += self._index_puts(new)
        if series_transitions.closes(old, new):
            actions.append(self._count_update(old.owner, -1))
        try:
            self._transact(actions)
        except ClientError as exc:
            if is_cancelled(exc) and cancellation_reasons(exc)[:1] == ["ConditionalCheckFailed"]:
                raise SeriesChangedError("the recurring schedule changed meanwhile") from exc
            raise

    def create_occurrence(
        self,
        post: Post,
        *,
        series_version: int,
        max_occurrences: int | None,
        late: bool,
        max_pending: int,
    ) -> bool:
        """Write an occurrence post unless it exists; ``True`` when this call wrote it.

        One transaction: the post (``attribute_not_exists``), its due entry and late marker,
        the pending counter (``MAX_PENDING_POSTS``; a full counter is folded once, as on
        create) and an update of the series that counts the occurrence (``ADD
        occurrence_count 1``) under the condition that the series is ``active`` at
        ``series_version`` and, with ``max_occurrences``, has written fewer than that.
        An existing post (even a cancelled one) is never written again, nor counted again.

        Raises
        ------
        SeriesChangedError
            The series was edited, paused or ended since ``series_version``.
        OccurrencesExhaustedError
            The series has written ``max_occurrences`` occurrences already.
        LimitExceededError
            The owner already has ``max_pending`` posts ``scheduled``.
        """
        return self._write_occurrence(
            lambda: self._posts.create_items(post, late=late, max_pending=max_pending),
            post,
            series_version=series_version,
            max_pending=max_pending,
            counted=True,
            max_occurrences=max_occurrences,
        )

    def revive_occurrence(
        self, old: Post, new: Post, *, series_version: int, late: bool, max_pending: int
    ) -> bool:
        """Schedule again an occurrence the series itself cancelled (a pause or a rule edit,
        never the owner: ``detached`` is false), under ``status = cancelled AND version``;
        ``True`` when this call did. Same transaction shape and errors as
        :meth:`create_occurrence`, except that the series is only checked (a
        ``ConditionCheck``): the occurrence was counted when it was first written."""

        change = transitions.revive_occurrence(old, new)

        def items() -> list[dict[str, Any]]:
            actions = self._posts.replace_items(change, old, new, old_late=False, new_late=late)
            pending = self._posts.create_items(new, late=False, max_pending=max_pending)[-1]
            return [*actions, pending]

        return self._write_occurrence(
            items, new, series_version=series_version, max_pending=max_pending, counted=False
        )

    def _write_occurrence(
        self,
        build: Callable[[], list[dict[str, Any]]],
        post: Post,
        *,
        series_version: int,
        max_pending: int,
        counted: bool,
        max_occurrences: int | None = None,
    ) -> bool:
        assert post.series_id is not None
        series_item: dict[str, Any] = {
            "TableName": self._posts_name,
            "Key": {"pk": keys.series_pk(post.series_id), "sk": keys.SERIES_SK},
            "ConditionExpression": "#v = :v AND #s = :active",
            "ExpressionAttributeNames": {"#v": "version", "#s": "status"},
            "ExpressionAttributeValues": {
                ":v": series_version,
                ":active": series_transitions.OCCURRENCE_WRITABLE.value,
            },
        }
        if counted:
            series_item["UpdateExpression"] = "ADD #c :one"
            series_item["ExpressionAttributeNames"]["#c"] = "occurrence_count"
            series_item["ExpressionAttributeValues"][":one"] = 1
            if max_occurrences is not None:
                series_item["ConditionExpression"] += " AND (attribute_not_exists(#c) OR #c < :max)"
                series_item["ExpressionAttributeValues"][":max"] = max_occurrences
        series_action = {"Update" if counted else "ConditionCheck": series_item}
        for attempt in (1, 2):
            try:
                self._transact([*build(), series_action])
                return True
            except ClientError as exc:
                if not is_cancelled(exc):
                    raise
                reasons = cancellation_reasons(exc)
                if reasons[-1:] == ["ConditionalCheckFailed"]:
                    raise self._series_refusal(post.series_id, series_version) from exc
                if reasons[:1] == ["ConditionalCheckFailed"]:
                    return False  # the post exists, or changed: never written twice
                if reasons[-2:-1] != ["ConditionalCheckFailed"]:
                    raise
                if attempt == 1:
                    self._posts.fold_releases(post.owner)
                    continue
                raise LimitExceededError(
                    f"MAX_PENDING_POSTS ({max_pending}) scheduled posts reached"
                ) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _series_refusal(self, series_id: str, series_version: int) -> Exception:
        """Why the series refused an occurrence: changed since ``series_version``, or (still
        ``active`` at that version) its ``max_occurrences`` are written."""
        current = self.get(series_id)
        if (
            current is not None
            and current.version == series_version
            and current.status == series_transitions.OCCURRENCE_WRITABLE
        ):
            return OccurrencesExhaustedError(
                f"series {series_id} has written its {current.max_occurrences} occurrences"
            )
        return SeriesChangedError("the recurring schedule changed meanwhile")

    # -------------------------------------------------------------- internals

    def _index_puts(self, series: Series) -> list[dict[str, Any]]:
        where = series.index_keys()
        if where is None or series.extend_at is None:
            return []
        return [
            {
                "Put": {
                    "TableName": self._due_name,
                    "Item": {
                        "bucket": where[0],
                        "due": where[1],
                        "series_id": series.series_id,
                        "extend_at": format_instant(series.extend_at),
                        "shard": series.shard,
                    },
                }
            }
        ]

    def _count_update(self, owner: str, delta: int, *, max_series: int = 0) -> dict[str, Any]:
        update: dict[str, Any] = {
            "TableName": self._posts_name,
            "Key": {"pk": keys.owner_pk(owner), "sk": keys.SERIES_COUNT_SK},
            "UpdateExpression": "ADD #o :d",
            "ExpressionAttributeNames": {"#o": "open"},
            "ExpressionAttributeValues": {":d": delta},
        }
        if delta > 0:
            update["ConditionExpression"] = "attribute_not_exists(#o) OR #o < :max"
            update["ExpressionAttributeValues"][":max"] = max_series
        return {"Update": update}

    def _transact(self, items: list[dict[str, Any]]) -> None:
        """:func:`data.dynamo.transact` on this table's client (``TransactionConflict`` retried).

        Raises
        ------
        TransactionConflictError
            Still colliding after the retries (409, as for posts).
        """
        try:
            transact(self._resource.meta.client, items)
        except TransactionConflictExhaustedError as exc:
            raise TransactionConflictError(
                "the recurring schedule is being changed by another request; try again"
            ) from exc
