"""A create's due-entry writes (``PostRepository.create``, step 2; decision W3 "Create is three
ordered single writes"): an entry is put over nothing or over its own version only, and the
entries a create put that are not its post's are taken back.

Why: the create's id may be derived (an idempotent create, an import row), so a create can be
replayed after its post moved on (edited, moved, cancelled), and a create that failed after its
entry may be retried at another instant (a queued post's next free slot). Neither may leave an
entry behind (fault seed 4 with the workflow world, 2026-12-04).
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from scheduled_posts.data.dynamo import is_condition_failure
from scheduled_posts.observability import logger


def put_entry(due: Any, entry: dict[str, Any]) -> None:
    """Put ``entry`` (a due-index item: ``bucket``, ``due``, ``version``...) on the due table
    ``due`` over nothing or over the same version, never over a later write's entry at its key.

    Raises
    ------
    botocore.exceptions.ClientError
        ``ConditionalCheckFailedException`` when another version's entry holds the key (the
        create's caller then re-reads the post: it was committed and moved on).
    """
    due.put_item(
        Item=entry,
        ConditionExpression="attribute_not_exists(#due) OR #version = :version",
        ExpressionAttributeNames={"#due": "due", "#version": "version"},
        ExpressionAttributeValues={":version": entry["version"]},
    )


def take_back(due: Any, entries: list[dict[str, Any]], *, best_effort: bool = False) -> None:
    """Delete ``entries`` (put by a create whose post moved on, or by a create that failed),
    each only while it still holds that version (a later write's entry at the same key stays).

    ``best_effort``: a refused delete is logged, not raised (an entry left names no post at its
    version, or waits for the post's own ``publish_at``: the worker gates on both).

    Raises
    ------
    botocore.exceptions.ClientError
        A refused delete other than the version's condition, unless ``best_effort``.
    """
    for entry in entries:
        try:
            due.delete_item(
                Key={"bucket": entry["bucket"], "due": entry["due"]},
                ConditionExpression="#version = :version",
                ExpressionAttributeNames={"#version": "version"},
                ExpressionAttributeValues={":version": entry["version"]},
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                continue
            if not best_effort:
                raise
            logger.warning(
                "a failed create's due entry stays", extra={"schedule_id": entry["schedule_id"]}
            )
