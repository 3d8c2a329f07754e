"""A create replayed after its post moved on (``PostRepository.create``, the same derived id: an
idempotent create whose answer was lost, an import row's chunk run again): it answers the
stored post and leaves the due index as the later write left it: no entry put back for a
cancelled post, none left at an edit's old instant, an edit's entry at the same instant never
overwritten by the replay's older version; and a create that fails after its entry takes the
entry back (fault seed 4 with the workflow world)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from scheduled_posts import keys
from scheduled_posts.data.posts import PostRepository
from scheduled_posts.lifecycle.states import PostStatus
from scheduled_posts.models.post import Delivery, Post
from tests.support.clock import SimClock
from tests.support.fixtures import AwsResources


def _repo(aws: AwsResources) -> PostRepository:
    return PostRepository(
        posts_table_name=aws.settings.POSTS_TABLE_NAME,
        due_table_name=aws.settings.DUE_INDEX_TABLE_NAME,
    )


def _entries(aws: AwsResources, schedule_id: str) -> list[dict[str, Any]]:
    table = boto3.resource("dynamodb", region_name="us-east-1").Table(
        aws.settings.DUE_INDEX_TABLE_NAME
    )
    items = table.scan()["Items"]  # a test may scan
    return [
        {"due": i["due"], "version": int(i["version"])}
        for i in items
        if i.get("schedule_id") == schedule_id
    ]


def _post(clock: SimClock, aws: AwsResources) -> Post:
    now = clock.now()
    sid = "9d2c6bb5-0b9e-5c34-9d5f-4a6a2f0f0a11"  # derived, as an idempotent create's is
    return Post(
        schedule_id=sid,
        owner="alice",
        status=PostStatus.SCHEDULED,
        content="Hello",
        publish_at=now + timedelta(hours=2),
        channel_ids=["c1"],
        deliveries={"c1": Delivery(channel_id="c1")},
        version=1,
        created_at=now,
        updated_at=now,
        shard=keys.shard_for(sid, aws.settings.WRITE_SHARD_COUNT),
    )


def _replay(aws: AwsResources, post: Post) -> Post:
    return _repo(aws).create(post, late=False, max_pending=100)


def test_a_create_replayed_after_a_cancel_puts_no_entry_back(
    aws: AwsResources, clock: SimClock
) -> None:
    post = _replay(aws, _post(clock, aws))
    cancelled = post.model_copy(update={"status": PostStatus.CANCELLED, "version": 2})
    _repo(aws).replace(post, cancelled, old_late=False, new_late=False)
    assert _entries(aws, post.schedule_id) == []

    stored = _replay(aws, post)

    assert (stored.status, stored.version) == (PostStatus.CANCELLED, 2)
    assert _entries(aws, post.schedule_id) == []


def test_a_create_replayed_after_an_edit_of_its_text_keeps_the_edits_entry(
    aws: AwsResources, clock: SimClock
) -> None:
    post = _replay(aws, _post(clock, aws))
    edited = post.model_copy(update={"content": "Hello again", "version": 2})
    _repo(aws).replace(post, edited, old_late=False, new_late=False)

    stored = _replay(aws, post)

    assert (stored.content, stored.version) == ("Hello again", 2)
    due = keys.order_key(post.publish_at, post.schedule_id)
    assert _entries(aws, post.schedule_id) == [{"due": due, "version": 2}]


def test_a_create_replayed_after_a_move_leaves_nothing_at_the_old_instant(
    aws: AwsResources, clock: SimClock
) -> None:
    post = _replay(aws, _post(clock, aws))
    later = post.publish_at + timedelta(hours=1)
    moved = post.model_copy(update={"publish_at": later, "version": 2})
    _repo(aws).replace(post, moved, old_late=False, new_late=False)

    _replay(aws, post)

    due = keys.order_key(later, post.schedule_id)
    assert _entries(aws, post.schedule_id) == [{"due": due, "version": 2}]


def test_a_create_replayed_before_anything_changed_keeps_its_entry(
    aws: AwsResources, clock: SimClock
) -> None:
    post = _replay(aws, _post(clock, aws))

    assert _replay(aws, post) == post
    due = keys.order_key(post.publish_at, post.schedule_id)
    assert _entries(aws, post.schedule_id) == [{"due": due, "version": 1}]


class _PostPutThrottled:
    """The posts table, its post ``PutItem`` refused as throttled (botocore's retries spent)."""

    def __init__(self, table: Any) -> None:
        self._table = table

    def __getattr__(self, name: str) -> Any:
        return getattr(self._table, name)

    def put_item(self, **kwargs: Any) -> Any:
        if str(kwargs["Item"].get("sk")) == keys.POST_SK:
            error = {"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "x"}}
            raise ClientError(error, "PutItem")
        return self._table.put_item(**kwargs)


def test_a_create_that_fails_after_its_entry_takes_the_entry_back(
    aws: AwsResources, clock: SimClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A retry may choose another instant (a queued post's next free slot): the failed try's
    # entry must not stay at the old one (fault seed 4 with the workflow world)
    repo = _repo(aws)
    throttled = _PostPutThrottled(repo.posts_table)
    monkeypatch.setattr(PostRepository, "posts_table", property(lambda self: throttled))
    with pytest.raises(ClientError):
        repo.create(_post(clock, aws), late=False, max_pending=100)
    assert _entries(aws, _post(clock, aws).schedule_id) == []
