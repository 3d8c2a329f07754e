"""The media repository and bucket on moto: owner-keyed items, newest first, conditional
updates; the pre-signed POST policy's conditions (what S3 enforces in AWS)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from scheduled_posts.clock import epoch_seconds
from scheduled_posts.data.media import MediaRepository
from scheduled_posts.data.media_objects import S3MediaObjects
from scheduled_posts.errors import MediaNotFoundError, RetryableDeliveryError, StateConflictError
from scheduled_posts.models.media import (
    Media,
    MediaCreate,
    MediaStatus,
    Probed,
    RejectionReason,
    media_id_floor,
)
from tests.support.fixtures import create_resources

NOW = datetime(2026, 12, 2, 3, 0, tzinfo=UTC)
BUCKET = "media-test"


@pytest.fixture
def repo() -> Iterator[MediaRepository]:
    with mock_aws():
        resources = create_resources()
        yield MediaRepository(
            posts_table_name=resources.settings.POSTS_TABLE_NAME,
            dynamodb=boto3.resource("dynamodb", region_name="us-east-1"),
        )


@pytest.fixture
def objects() -> Iterator[S3MediaObjects]:
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        yield S3MediaObjects(BUCKET, client=client)


def new(owner: str = "alice", at: datetime = NOW, **fields: object) -> Media:
    body = {"content_type": "image/png", "size": 10, **fields}
    return Media.new(owner, MediaCreate.model_validate(body), at)


def test_another_users_id_is_not_found(repo: MediaRepository) -> None:
    media = new()
    repo.put_new(media)
    assert repo.get("alice", media.media_id) == media
    assert repo.get("bob", media.media_id) is None
    assert repo.get_many("bob", [media.media_id]) == {}
    assert repo.get_many("alice", [media.media_id, "nope"]) == {media.media_id: media}
    with pytest.raises(MediaNotFoundError):
        repo.delete("bob", media.media_id)
    with pytest.raises(MediaNotFoundError):
        repo.set_alt_text("bob", media.media_id, "x", version=1, now=NOW)


def test_the_list_is_newest_first_and_pages(repo: MediaRepository) -> None:
    made = [new(at=NOW + timedelta(seconds=i)) for i in range(5)]
    for media in made:
        repo.put_new(media)
    repo.put_new(new(owner="bob"))
    first, after = repo.list_page("alice", after=None, limit=3)
    second, end = repo.list_page("alice", after=after, limit=3)
    assert [m.media_id for m in first + second] == [m.media_id for m in reversed(made)]
    assert end is None


def test_pending_are_counted_within_the_last_day_only(repo: MediaRepository) -> None:
    for i in range(3):
        repo.put_new(new(at=NOW + timedelta(seconds=i)))
    ready = new(at=NOW + timedelta(seconds=5))
    repo.put_new(ready)
    repo.mark_probed("alice", ready.media_id, probed=probed(), reason=None, now=NOW)
    later = NOW + timedelta(hours=25)
    repo.put_new(new(at=later))
    count = repo.count_pending(
        "alice", since_id=media_id_floor(NOW), now_epoch=epoch_seconds(NOW), cap=100
    )
    assert count == 4  # three pending, the later one; not the ready one
    since = media_id_floor(later - timedelta(days=1))
    assert repo.count_pending("alice", since_id=since, now_epoch=epoch_seconds(later), cap=9) == 1


def probed() -> Probed:
    return Probed(content_type="image/png", size=10, sha256="a" * 64, width=1, height=1)


def test_a_probe_is_recorded_once_and_keeps_the_ttl_either_way(repo: MediaRepository) -> None:
    media = new()
    repo.put_new(media)
    done = repo.mark_probed("alice", media.media_id, probed=probed(), reason=None, now=NOW)
    assert done.status == MediaStatus.READY and done.version == 2
    assert done.expires_at == media.expires_at and done.attached_at is None
    with pytest.raises(StateConflictError):
        repo.mark_probed(
            "alice", media.media_id, probed=None, reason=RejectionReason.EMPTY, now=NOW
        )
    other = new()
    repo.put_new(other)
    refused = repo.mark_probed(
        "alice", other.media_id, probed=None, reason=RejectionReason.EMPTY, now=NOW
    )
    assert refused.status == MediaStatus.REJECTED and refused.expires_at == other.expires_at


def test_attaching_removes_the_ttl_once_and_only_from_an_unexpired_ready_upload(
    repo: MediaRepository,
) -> None:
    pending, ready, late = new(), new(), new()
    for media in (pending, ready, late):
        repo.put_new(media)
    for media in (ready, late):
        repo.mark_probed("alice", media.media_id, probed=probed(), reason=None, now=NOW)
    later = NOW + timedelta(hours=23)
    kept = repo.mark_attached("alice", ready.media_id, now=later)
    assert (kept.expires_at, kept.attached_at, kept.version) == (None, later, 3)
    assert repo.get("alice", ready.media_id) == kept
    with pytest.raises(StateConflictError):  # already attached: no TTL to remove
        repo.mark_attached("alice", ready.media_id, now=later)
    with pytest.raises(StateConflictError):  # not ready
        repo.mark_attached("alice", pending.media_id, now=later)
    with pytest.raises(StateConflictError):  # past its TTL (DynamoDB deletes it late)
        repo.mark_attached("alice", late.media_id, now=NOW + timedelta(days=1))
    with pytest.raises(MediaNotFoundError):
        repo.mark_attached("bob", late.media_id, now=later)


def test_alt_text_is_set_and_cleared_on_the_version_read(repo: MediaRepository) -> None:
    media = new(alt_text="old")
    repo.put_new(media)
    now = NOW
    assert repo.set_alt_text("alice", media.media_id, "new", version=1, now=now).alt_text == "new"
    with pytest.raises(StateConflictError):
        repo.set_alt_text("alice", media.media_id, "lost", version=1, now=now)
    assert repo.set_alt_text("alice", media.media_id, None, version=2, now=now).alt_text is None


def test_a_video_duration_round_trips(repo: MediaRepository) -> None:
    media = new(content_type="video/mp4")
    repo.put_new(media)
    video = Probed(content_type="video/mp4", size=10, sha256="b" * 64, duration_seconds=1.5)
    repo.mark_probed("alice", media.media_id, probed=video, reason=None, now=NOW)
    stored = repo.get("alice", media.media_id)
    assert stored is not None and stored.probed == video


def _policy(form: dict) -> dict:
    return json.loads(base64.b64decode(form["fields"]["policy"]))


def test_the_post_policy_fixes_size_type_and_key(objects: S3MediaObjects) -> None:
    form = objects.presign_upload("media/m1", "image/png", 1234, 600)
    conditions = _policy(form)["conditions"]
    assert ["content-length-range", 1234, 1234] in conditions
    assert {"Content-Type": "image/png"} in conditions
    assert {"key": "media/m1"} in conditions and {"bucket": BUCKET} in conditions
    assert form["fields"]["Content-Type"] == "image/png" and form["fields"]["key"] == "media/m1"


def test_objects_are_read_headed_linked_and_deleted(objects: S3MediaObjects) -> None:
    objects.client.put_object(Bucket=BUCKET, Key="media/m1", Body=b"abc")
    assert objects.head("media/m1")["ContentLength"] == 3
    ready = new().model_copy(update={"status": MediaStatus.READY, "probed": probed()})
    published = ready.published().model_copy(update={"object_key": "media/m1"})
    assert objects.read(published) == b"abc"
    assert "media/m1" in objects.download_url(published, expires_seconds=60)
    objects.delete("media/m1")
    assert objects.head("media/m1") is None
    with pytest.raises(RetryableDeliveryError):
        objects.read(published)


def test_keep_removes_the_pending_tag_and_says_when_no_object_is_there(
    objects: S3MediaObjects,
) -> None:
    objects.client.put_object(Bucket=BUCKET, Key="media/m1", Body=b"abc", Tagging="state=pending")
    assert objects.keep("media/m1") is True
    assert objects.client.get_object_tagging(Bucket=BUCKET, Key="media/m1")["TagSet"] == []
    assert objects.keep("media/m1") is True  # idempotent

    class Gone:
        """S3's answer for a key the lifecycle rule removed (moto 5.2 crashes on it instead)."""

        def delete_object_tagging(self, **_: object) -> None:
            error = {"Error": {"Code": "NoSuchKey", "Message": "The specified key does not exist."}}
            raise ClientError(error, "DeleteObjectTagging")  # type: ignore[arg-type]

    assert S3MediaObjects(BUCKET, client=Gone()).keep("media/m2") is False
