"""Signing-secret storage shared by channels and notification endpoints: the stored shape of
the previous secrets and the conditional rotation write.

Both items keep ``signing_secret`` (the current one) and ``previous_secrets`` (a list of
``{"secret", "expires_at"}`` maps, ``expires_at`` an ISO 8601 UTC instant): the secrets still
accepted during a rotation's overlap (decision "Every replaced secret keeps its own overlap").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from botocore.exceptions import ClientError

from scheduled_posts.clock import format_instant, instant_from_storage
from scheduled_posts.data.dynamo import is_condition_failure
from scheduled_posts.errors import StateConflictError
from scheduled_posts.models.post import PreviousSecret


def secrets_to_item(secrets: Iterable[PreviousSecret]) -> list[dict[str, str]]:
    """``previous_secrets`` as stored: ``[{"secret": str, "expires_at": ISO 8601}, ...]``."""
    return [{"secret": p.secret, "expires_at": format_instant(p.expires_at)} for p in secrets]


def secrets_from_item(value: Any) -> tuple[PreviousSecret, ...]:
    """The stored ``previous_secrets`` list (or ``None``) back as models, in stored order."""
    return tuple(
        PreviousSecret(secret=str(p["secret"]), expires_at=instant_from_storage(p["expires_at"]))
        for p in value or []
    )


def rotate_signing_secret(
    table: Any,
    key: dict[str, str],
    *,
    current_secret: str,
    new_secret: str,
    previous_secrets: Iterable[PreviousSecret],
    exists: Callable[[], bool],
    not_found: Exception,
    remove: Sequence[str] = (),
) -> dict[str, Any]:
    """Set ``signing_secret = new_secret`` and ``previous_secrets`` on the item at ``key`` of
    ``table`` (a boto3 Table), removing the attributes ``remove``; returns the item as stored.

    Condition ``signing_secret = :current``, so of two concurrent rotations one wins.

    Raises
    ------
    Exception
        ``not_found`` when the write failed and ``exists()`` says the item is gone.
    StateConflictError
        When the secret changed since it was read (a concurrent rotation).
    """
    update = "SET signing_secret = :new, previous_secrets = :previous"
    if remove:
        update += " REMOVE " + ", ".join(remove)
    try:
        answer = table.update_item(
            Key=key,
            UpdateExpression=update,
            ConditionExpression="attribute_exists(pk) AND signing_secret = :current",
            ExpressionAttributeValues={
                ":new": new_secret,
                ":current": current_secret,
                ":previous": secrets_to_item(previous_secrets),
            },
            ReturnValues="ALL_NEW",
        )
    except ClientError as exc:
        if is_condition_failure(exc):
            if not exists():
                raise not_found from exc
            raise StateConflictError("the secret was rotated meanwhile; try again") from exc
        raise
    item: dict[str, Any] = answer["Attributes"]
    return item
