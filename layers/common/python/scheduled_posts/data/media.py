"""Media uploads: their items in the posts table and their bytes in the media bucket.

Items: ``pk = OWNER#<sub>``, ``sk = MEDIA#<media_id>`` (keyed by owner, so another user's id is
simply not found, like channels). Bytes: S3 key ``media/<media_id>`` in ``MEDIA_BUCKET_NAME``,
sent by the client with a pre-signed POST policy (:meth:`S3MediaObjects.presign_upload`).
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal
from typing import Any

from boto3.dynamodb.conditions import Attr, Key
from botocore.exceptions import ClientError

from scheduled_posts import keys
from scheduled_posts.clock import epoch_seconds, format_instant, instant_from_storage
from scheduled_posts.data.aws import dynamodb_resource
from scheduled_posts.data.dynamo import is_condition_failure
from scheduled_posts.errors import MediaNotFoundError, StateConflictError
from scheduled_posts.models.media import Media, MediaStatus, Probed, RejectionReason

MEDIA_PREFIX = "MEDIA#"
_CREATING = threading.Lock()


def media_sk(media_id: str) -> str:
    """The sort key of an upload under ``OWNER#<sub>``: ``MEDIA#<media_id>``."""
    return f"{MEDIA_PREFIX}{media_id}"


def _key(owner: str, media_id: str) -> dict[str, str]:
    return {"pk": keys.owner_pk(owner), "sk": media_sk(media_id)}


def _probed_item(probed: Probed | None) -> dict[str, Any] | None:
    if probed is None:
        return None
    item = {k: v for k, v in probed.model_dump().items() if v is not None}
    if "duration_seconds" in item:
        item["duration_seconds"] = Decimal(str(round(probed.duration_seconds or 0.0, 3)))
    return item


def media_to_item(media: Media) -> dict[str, Any]:
    """The DynamoDB item of an upload (boto3 resource types)."""
    item: dict[str, Any] = {
        **_key(media.owner, media.media_id),
        "media_id": media.media_id,
        "owner": media.owner,
        "status": media.status.value,
        "content_type": media.content_type,
        "size": media.size,
        "sha256": media.sha256,
        "probed": _probed_item(media.probed),
        "alt_text": media.alt_text,
        "reason": media.reason.value if media.reason else None,
        "created_at": format_instant(media.created_at),
        "updated_at": format_instant(media.updated_at),
        "version": media.version,
    }
    if media.expires_at is not None:
        item["expires_at"] = media.expires_at
    if media.attached_at is not None:
        item["attached_at"] = format_instant(media.attached_at)
    return item


def _number(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value) if value % 1 else int(value)
    return value


def media_from_item(item: dict[str, Any]) -> Media:
    """A :class:`Media` from its DynamoDB item."""
    probed = item.get("probed")
    return Media(
        media_id=item["media_id"],
        owner=item["owner"],
        status=MediaStatus(item["status"]),
        content_type=item["content_type"],
        size=int(item["size"]),
        sha256=item.get("sha256"),
        probed=Probed(**{k: _number(v) for k, v in probed.items()}) if probed else None,
        alt_text=item.get("alt_text"),
        reason=RejectionReason(item["reason"]) if item.get("reason") else None,
        created_at=instant_from_storage(item["created_at"]),
        updated_at=instant_from_storage(item["updated_at"]),
        expires_at=int(item["expires_at"]) if item.get("expires_at") is not None else None,
        attached_at=instant_from_storage(item["attached_at"]) if item.get("attached_at") else None,
        version=int(item.get("version", 1)),
    )


class MediaRepository:
    """Uploads of ``PostsTable``. ``dynamodb`` is a boto3 DynamoDB resource (default: lazy)."""

    def __init__(self, *, posts_table_name: str, dynamodb: Any | None = None) -> None:
        self._table_name = posts_table_name
        self._dynamodb = dynamodb

    @property
    def _resource(self) -> Any:
        return self._dynamodb or dynamodb_resource()

    @property
    def _table(self) -> Any:
        return self._resource.Table(self._table_name)

    def put_new(self, media: Media) -> None:
        """Store a new upload (condition: no item with its key).

        Raises
        ------
        StateConflictError
            When the id already exists (a UUID collision).
        """
        try:
            self._table.put_item(
                Item=media_to_item(media), ConditionExpression=Attr("pk").not_exists()
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                raise StateConflictError("media id already exists") from exc
            raise

    def get(self, owner: str, media_id: str) -> Media | None:
        """``owner``'s upload (consistent read), or ``None`` (also for another user's id)."""
        item = self._table.get_item(Key=_key(owner, media_id), ConsistentRead=True).get("Item")
        return media_from_item(item) if item else None

    def get_many(self, owner: str, media_ids: Iterable[str]) -> dict[str, Media]:
        """``media_id -> Media`` for those of ``media_ids`` that are ``owner``'s (at most 100
        ids: one BatchGet, consistent reads, unprocessed keys asked again up to 10 times)."""
        wanted = list(dict.fromkeys(media_ids))
        if not wanted:
            return {}
        request: dict[str, Any] = {
            self._table_name: {
                "Keys": [_key(owner, m) for m in wanted],
                "ConsistentRead": True,
            }
        }
        found: dict[str, Media] = {}
        for _ in range(10):
            answer = self._resource.batch_get_item(RequestItems=request)
            for item in answer["Responses"].get(self._table_name, []):
                found[item["media_id"]] = media_from_item(item)
            request = answer.get("UnprocessedKeys") or {}
            if not request:
                break
        return found

    def list_page(
        self, owner: str, *, after: str | None, limit: int
    ) -> tuple[builtins.list[Media], str | None]:
        """Up to ``limit`` uploads of ``owner``, newest first (ids are UUIDv7: reverse key
        order), after the id ``after``; with the id to resume after, or ``None`` at the end.
        Expired items are included (the logic filters them)."""
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": Key("pk").eq(keys.owner_pk(owner))
            & Key("sk").begins_with(MEDIA_PREFIX),
            "ConsistentRead": True,
            "ScanIndexForward": False,
            "Limit": limit + 1,
        }
        if after is not None:
            kwargs["ExclusiveStartKey"] = _key(owner, after)
        items = self._table.query(**kwargs).get("Items", [])
        found = [media_from_item(item) for item in items[:limit]]
        more = len(items) > limit
        return found, (found[-1].media_id if more and found else None)

    def count_pending(self, owner: str, *, since_id: str, now_epoch: int, cap: int) -> int:
        """How many unexpired ``pending`` uploads ``owner`` has with ids from ``since_id`` on
        (the ids of the last day: older ones have expired), counting at most up to ``cap``."""
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": Key("pk").eq(keys.owner_pk(owner))
            & Key("sk").between(media_sk(since_id), media_sk(keys.SK_HIGH)),
            "FilterExpression": Attr("status").eq(MediaStatus.PENDING.value)
            & Attr("expires_at").gt(now_epoch),
            "Select": "COUNT",
        }
        count = 0
        while count < cap:
            page = self._table.query(**kwargs)
            count += int(page.get("Count", 0))
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return count

    def _update(self, owner: str, media_id: str, condition: Any, **update: Any) -> Media:
        try:
            answer = self._table.update_item(
                Key=_key(owner, media_id),
                ConditionExpression=Attr("pk").exists() & condition,
                ReturnValues="ALL_NEW",
                **update,
            )
        except ClientError as exc:
            if not is_condition_failure(exc):
                raise
            if self.get(owner, media_id) is None:
                raise MediaNotFoundError("media not found") from exc
            raise StateConflictError("the media changed during this request; try again") from exc
        return media_from_item(answer["Attributes"])

    def set_alt_text(
        self, owner: str, media_id: str, alt_text: str | None, *, version: int, now: datetime
    ) -> Media:
        """Set (or, with ``None``, remove) the alt text; condition ``version = :version``.

        Raises
        ------
        MediaNotFoundError
            Missing or another user's.
        StateConflictError
            The upload changed since it was read (a concurrent write).
        """
        values: dict[str, Any] = {":one": 1, ":now": format_instant(now)}
        if alt_text is None:
            expression = "REMOVE alt_text SET version = version + :one, updated_at = :now"
        else:
            expression = "SET alt_text = :a, version = version + :one, updated_at = :now"
            values[":a"] = alt_text
        return self._update(
            owner,
            media_id,
            Attr("version").eq(version),
            UpdateExpression=expression,
            ExpressionAttributeValues=values,
        )

    def mark_probed(
        self,
        owner: str,
        media_id: str,
        *,
        probed: Probed | None,
        reason: RejectionReason | None,
        now: datetime,
    ) -> Media:
        """Record the probe: ``ready`` without ``reason``, else ``rejected``; either keeps its
        TTL (an upload is kept only once attached: :meth:`mark_attached`); condition
        ``status = pending``.

        Raises
        ------
        MediaNotFoundError
            Missing or another user's.
        StateConflictError
            No longer pending (a concurrent complete won).
        """
        status = MediaStatus.REJECTED if reason else MediaStatus.READY
        values: dict[str, Any] = {
            ":s": status.value,
            ":p": _probed_item(probed),
            ":r": reason.value if reason else None,
            ":one": 1,
            ":now": format_instant(now),
        }
        expression = "SET #s = :s, probed = :p, reason = :r, version = version + :one, "
        expression += "updated_at = :now"
        return self._update(
            owner,
            media_id,
            Attr("status").eq(MediaStatus.PENDING.value),
            UpdateExpression=expression,
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues=values,
        )

    def mark_attached(self, owner: str, media_id: str, *, now: datetime) -> Media:
        """Keep a ready upload a post or recurring schedule names: remove its TTL and set
        ``attached_at``; condition ``status = ready`` and its TTL not passed
        (``expires_at > now``: an expired item DynamoDB has not deleted yet stays expired).

        Raises
        ------
        MediaNotFoundError
            Missing or another user's.
        StateConflictError
            Not ready, already attached, or expired.
        """
        return self._update(
            owner,
            media_id,
            Attr("status").eq(MediaStatus.READY.value) & Attr("expires_at").gt(epoch_seconds(now)),
            UpdateExpression="SET attached_at = :now, version = version + :one, updated_at = :now "
            "REMOVE expires_at",
            ExpressionAttributeValues={":one": 1, ":now": format_instant(now)},
        )

    def delete(self, owner: str, media_id: str) -> None:
        """Delete ``owner``'s upload item.

        Raises
        ------
        MediaNotFoundError
            Missing or another user's.
        """
        try:
            self._table.delete_item(
                Key=_key(owner, media_id), ConditionExpression=Attr("pk").exists()
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                raise MediaNotFoundError("media not found") from exc
            raise
