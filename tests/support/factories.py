"""Create channels and posts directly in DynamoDB (as the API would), so dispatch tests do not
wait for the API. Posts are written with ``Post.to_item()`` plus their due entry (and a late
marker when due within ``LOOKAHEAD_SECONDS + LATE_MARGIN_SECONDS``), in one transaction, exactly
as ``docs/data-model.md`` describes the API's writes. Edit and cancel mirror the API's
transactions too (``status = scheduled AND version = :v``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

import boto3

from scheduled_posts import keys
from scheduled_posts.clock import epoch_seconds, format_instant
from scheduled_posts.logic.promotion import due_entry_for
from scheduled_posts.models.messages import DueEntry
from scheduled_posts.models.post import Channel, Delivery, Post, PostStatus
from scheduled_posts.settings import Settings


def _client() -> Any:
    return boto3.resource("dynamodb", region_name="us-east-1").meta.client


def create_channel(
    settings: Settings,
    *,
    owner: str = "alice",
    channel_id: str | None = None,
    url: str = "https://hooks.example.com/in",
    platform: str = "webhook",
    now: datetime,
    signing_secret: str = "s3cret-signing-key",
) -> Channel:
    """Put a channel item ``OWNER#<owner> / CHANNEL#<id>``; returns the channel."""
    channel = Channel(
        channel_id=channel_id or f"ch-{uuid.uuid4().hex[:8]}",
        owner=owner,
        platform=platform,
        name="test channel",
        url=url,
        signing_secret=signing_secret,
        created_at=now,
    )
    item = channel.model_dump(mode="json", exclude_none=True)
    item["created_at"] = format_instant(now)
    item.update({"pk": keys.owner_pk(owner), "sk": keys.channel_sk(channel.channel_id)})
    boto3.resource("dynamodb", region_name="us-east-1").Table(settings.POSTS_TABLE_NAME).put_item(
        Item=item
    )
    return channel


def _entry_item(post: Post, settings: Settings) -> dict[str, Any]:
    grace = timedelta(seconds=settings.MISFIRE_GRACE_SECONDS) + timedelta(days=1)
    return {
        "bucket": keys.due_bucket(post.publish_at, post.shard),
        "due": keys.order_key(post.publish_at, post.schedule_id),
        "schedule_id": post.schedule_id,
        "publish_at": format_instant(post.publish_at),
        "version": post.version,
        "shard": post.shard,
        "expires_at": epoch_seconds(post.publish_at + grace),
    }


def _late_marker_item(post: Post) -> dict[str, Any]:
    return {
        "bucket": keys.late_bucket(post.shard),
        "due": keys.order_key(post.publish_at, post.schedule_id),
        "entry_bucket": keys.due_bucket(post.publish_at, post.shard),
        "schedule_id": post.schedule_id,
        "publish_at": format_instant(post.publish_at),
        "version": post.version,
    }


def _needs_marker(publish_at: datetime, now: datetime, settings: Settings) -> bool:
    margin = settings.LOOKAHEAD_SECONDS + keys.LATE_MARGIN_SECONDS
    return publish_at <= now + timedelta(seconds=margin)


def due_entry(post: Post) -> DueEntry:
    """The :class:`DueEntry` of a post (what the API passes to the promoter)."""
    return due_entry_for(post)


def create_post(
    settings: Settings,
    *,
    now: datetime,
    publish_at: datetime,
    channel_ids: Iterable[str],
    owner: str = "alice",
    content: str = "Hello",
    schedule_id: str | None = None,
    media_ids: Iterable[str] = (),
) -> Post:
    """Write a ``scheduled`` post, its due entry and (when due soon) its late marker in one
    transaction; returns the post."""
    sid = schedule_id or uuid.uuid4().hex
    channels = list(channel_ids)
    shard = keys.shard_for(sid, settings.WRITE_SHARD_COUNT)
    post = Post(
        schedule_id=sid,
        owner=owner,
        status=PostStatus.SCHEDULED,
        content=content,
        media_ids=list(media_ids),
        publish_at=publish_at,
        channel_ids=channels,
        deliveries={cid: Delivery(channel_id=cid) for cid in channels},
        version=1,
        created_at=now,
        updated_at=now,
        shard=shard,
    )
    items: list[dict[str, Any]] = [
        {"Put": {"TableName": settings.POSTS_TABLE_NAME, "Item": post.to_item()}},
        {"Put": {"TableName": settings.DUE_INDEX_TABLE_NAME, "Item": _entry_item(post, settings)}},
    ]
    if _needs_marker(publish_at, now, settings):
        items.append(
            {"Put": {"TableName": settings.DUE_INDEX_TABLE_NAME, "Item": _late_marker_item(post)}}
        )
    _client().transact_write_items(TransactItems=items)
    return post


def _old_index_deletes(post: Post, settings: Settings) -> list[dict[str, Any]]:
    due = keys.order_key(post.publish_at, post.schedule_id)
    return [
        {
            "Delete": {
                "TableName": settings.DUE_INDEX_TABLE_NAME,
                "Key": {"bucket": keys.due_bucket(post.publish_at, post.shard), "due": due},
            }
        },
        {
            "Delete": {
                "TableName": settings.DUE_INDEX_TABLE_NAME,
                "Key": {"bucket": keys.late_bucket(post.shard), "due": due},
            }
        },
    ]


def move_post(settings: Settings, post: Post, *, publish_at: datetime, now: datetime) -> Post:
    """PATCH ``publish_at`` as the API does: version + 1, old entry and marker deleted, new entry
    (and marker) put, all under ``status = scheduled AND version = :v``. Returns the new post."""
    moved = post.model_copy(
        update={
            "publish_at": publish_at,
            "version": post.version + 1,
            "updated_at": now,
        }
    )
    items: list[dict[str, Any]] = [
        {
            "Put": {
                "TableName": settings.POSTS_TABLE_NAME,
                "Item": moved.to_item(),
                "ConditionExpression": "#s = :scheduled AND version = :v",
                "ExpressionAttributeNames": {"#s": "status"},
                "ExpressionAttributeValues": {":scheduled": "scheduled", ":v": post.version},
            }
        },
        *_old_index_deletes(post, settings),
        {"Put": {"TableName": settings.DUE_INDEX_TABLE_NAME, "Item": _entry_item(moved, settings)}},
    ]
    if _needs_marker(publish_at, now, settings):
        items.append(
            {"Put": {"TableName": settings.DUE_INDEX_TABLE_NAME, "Item": _late_marker_item(moved)}}
        )
    _client().transact_write_items(TransactItems=items)
    return moved


def cancel_post(settings: Settings, post: Post, *, now: datetime) -> Post:
    """DELETE as the API does: ``cancelled``, version + 1, due entry and marker deleted."""
    cancelled = post.model_copy(
        update={
            "status": PostStatus.CANCELLED,
            "version": post.version + 1,
            "updated_at": now,
            "expires_at": epoch_seconds(now + timedelta(days=settings.RETENTION_DAYS)),
        }
    )
    _client().transact_write_items(
        TransactItems=[
            {
                "Put": {
                    "TableName": settings.POSTS_TABLE_NAME,
                    "Item": cancelled.to_item(),
                    "ConditionExpression": "#s = :scheduled AND version = :v",
                    "ExpressionAttributeNames": {"#s": "status"},
                    "ExpressionAttributeValues": {":scheduled": "scheduled", ":v": post.version},
                }
            },
            *_old_index_deletes(post, settings),
        ]
    )
    return cancelled


def seed_far_future_entries(settings: Settings, *, count: int, after: datetime) -> None:
    """BatchWriteItem ``count`` due entries spread over the month after ``after + 2 days``
    (outside any sweep window), to show sweep reads do not grow with them."""
    table = boto3.resource("dynamodb", region_name="us-east-1").Table(settings.DUE_INDEX_TABLE_NAME)
    start = after + timedelta(days=2)
    with table.batch_writer() as batch:
        for i in range(count):
            sid = f"far-{i:06d}"
            publish_at = start + timedelta(minutes=4 * i)
            shard = keys.shard_for(sid, settings.WRITE_SHARD_COUNT)
            batch.put_item(
                Item={
                    "bucket": keys.due_bucket(publish_at, shard),
                    "due": keys.order_key(publish_at, sid),
                    "schedule_id": sid,
                    "publish_at": format_instant(publish_at),
                    "version": 1,
                    "shard": shard,
                }
            )
