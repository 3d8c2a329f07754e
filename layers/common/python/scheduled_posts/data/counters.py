"""The per-user pending-post counter's release side (see ``docs/data-model.md``)."""

from __future__ import annotations

from typing import Any

from scheduled_posts import keys


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
