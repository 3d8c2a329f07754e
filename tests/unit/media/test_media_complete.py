"""``complete`` on moto's table with a scripted bucket: a concurrent complete that records its
probe first wins, and an object larger than declared is never read."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from PIL import Image

from scheduled_posts.data.media import MediaRepository
from scheduled_posts.data.posts import PostRepository
from scheduled_posts.logic.media import MediaDeps, complete_media
from scheduled_posts.models.media import Media, MediaCreate, MediaStatus, RejectionReason
from scheduled_posts.settings import Settings
from tests.support.fixtures import create_resources


def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (2, 2)).save(buffer, format="PNG")
    return buffer.getvalue()


class ScriptedBucket:
    """An object of ``size`` bytes holding ``data``; ``on_read`` runs before a read answers."""

    def __init__(self, data: bytes, size: int | None = None) -> None:
        self.data, self.size = data, len(data) if size is None else size
        self.reads: list[str] = []
        self.deleted: list[str] = []
        self.kept: list[str] = []
        self.gone: set[str] = set()  # keys whose object the lifecycle rule removed
        self.on_read: Any = None

    def presign_upload(self, *args: Any) -> dict[str, Any]:
        raise AssertionError("not used")

    def head(self, key: str) -> dict[str, Any] | None:
        return {"ContentLength": self.size}

    def read_key(self, key: str) -> bytes:
        self.reads.append(key)
        if self.on_read:
            self.on_read()
        return self.data

    def keep(self, key: str) -> bool:
        self.kept.append(key)
        return key not in self.gone

    def delete(self, key: str) -> None:
        self.deleted.append(key)


@pytest.fixture
def stores(clock: Any) -> Iterator[tuple[MediaRepository, Settings, Any]]:
    with mock_aws():
        settings = create_resources().settings
        dynamodb = boto3.resource("dynamodb", region_name="us-east-1")
        yield (
            MediaRepository(posts_table_name=settings.POSTS_TABLE_NAME, dynamodb=dynamodb),
            settings,
            clock,
        )


def deps_for(stores: tuple[MediaRepository, Settings, Any], bucket: ScriptedBucket) -> MediaDeps:
    repo, settings, clock = stores
    posts = PostRepository(posts_table_name=settings.POSTS_TABLE_NAME, due_table_name="unused")
    return MediaDeps(media=repo, objects=bucket, posts=posts, settings=settings, clock=clock)


def pending(repo: MediaRepository, clock: Any, size: int) -> Media:
    media = Media.new("alice", MediaCreate(content_type="image/png", size=size), clock.now())
    repo.put_new(media)
    return media


def test_a_concurrent_complete_that_recorded_first_wins(stores: Any) -> None:
    repo, _, clock = stores
    data = png()
    bucket = ScriptedBucket(data)
    media = pending(repo, clock, len(data))
    bucket.on_read = lambda: repo.mark_probed(
        "alice", media.media_id, probed=None, reason=RejectionReason.EMPTY, now=clock.now()
    )
    done = complete_media("alice", media.media_id, deps=deps_for(stores, bucket))
    assert (done.status, done.reason) == (MediaStatus.REJECTED, RejectionReason.EMPTY)
    assert bucket.deleted == []  # the winner's outcome stands; this call deletes nothing


def test_a_ready_upload_keeps_its_ttl_and_pending_tag_until_attached(stores: Any) -> None:
    repo, _, clock = stores
    data = png()
    bucket = ScriptedBucket(data)
    media = pending(repo, clock, len(data))
    done = complete_media("alice", media.media_id, deps=deps_for(stores, bucket))
    assert done.status == MediaStatus.READY and done.expires_at == media.expires_at
    assert bucket.kept == []


def test_an_object_larger_than_declared_is_refused_unread(stores: Any) -> None:
    repo, _, clock = stores
    bucket = ScriptedBucket(png(), size=10**9)
    media = pending(repo, clock, 68)
    done = complete_media("alice", media.media_id, deps=deps_for(stores, bucket))
    assert (done.status, done.reason) == (MediaStatus.REJECTED, RejectionReason.SIZE_MISMATCH)
    assert bucket.reads == [] and bucket.deleted == [media.object_key]
