"""A post waiting for its next attempt (``publishing`` with ``next_attempt_at`` ahead, e.g. a
capped ``Retry-After``) can be cancelled like a scheduled one, safely against the worker: the
cancel is guarded by the lease token, which the worker's next round replaces first (decision
"A post waiting for its next attempt can be cancelled")."""

from __future__ import annotations

from datetime import timedelta

import boto3
import pytest

from scheduled_posts import keys
from scheduled_posts.data.posts import PostRepository
from scheduled_posts.errors import StateConflictError
from scheduled_posts.models.post import DeliveryStatus, Post, PostStatus
from tests.integration.dispatch.conftest import FirePath
from tests.support.api import ApiClient
from tests.support.receiver import Answer


def waiting_post(fire: FirePath, retry_after: str = "600", status: int = 503) -> Post:
    """A post whose only channel answered ``status`` (503: nothing published) with
    ``Retry-After``: it waits, ``publishing``."""
    fire.channel("c1")
    fire.receiver.script(
        Answer.error(status, retry_after=retry_after), url="https://hooks.example.com/c1"
    )
    post = fire.post(fire.clock.now() + timedelta(seconds=5), ["c1"])
    fire.driver.run_for(10)
    got = fire.read(post)
    assert got.status == PostStatus.PUBLISHING
    assert got.deliveries["c1"].status == DeliveryStatus.RETRY_SCHEDULED
    return got


def test_cancel_of_a_post_waiting_on_retry_after_cancels_it_and_nothing_is_sent(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    post = waiting_post(fire)
    answer = ApiClient("alice").delete(f"/v1/scheduled-posts/{post.schedule_id}")
    assert answer.status == 200, answer.json
    assert (answer.json["status"], answer.json["deliveries"][0]["status"]) == (
        "cancelled",
        "skipped",
    )
    fire.driver.run_for(900)  # the follow-up message arrives, finds the post cancelled
    assert len(fire.receiver.requests_for(f"{post.schedule_id}:c1")) == 1  # the 503 only
    got = fire.read(post)
    assert got.status == PostStatus.CANCELLED and got.lease_expires_at is None
    assert fire.driver.dlq_bodies() == []


def test_cancel_after_one_channel_published_keeps_it_and_the_due_entry_the_verifier_reads(
    api_fire,  # type: ignore[no-untyped-def]
) -> None:
    fire: FirePath = api_fire()
    fire.channel("c1")
    fire.channel("c2")
    fire.receiver.script(Answer.error(503, retry_after="600"), url="https://hooks.example.com/c2")
    post = fire.post(fire.clock.now() + timedelta(seconds=5), ["c1", "c2"])
    fire.driver.run_for(10)
    answer = ApiClient("alice").delete(f"/v1/scheduled-posts/{post.schedule_id}")
    assert answer.status == 200, answer.json
    statuses = {d["channel_id"]: d["status"] for d in answer.json["deliveries"]}
    assert (answer.json["status"], statuses) == ("cancelled", {"c1": "published", "c2": "skipped"})
    # the published delivery stays in the window the reconciler and the verifier read (fault
    # seed 7: a Bluesky delivery of such a post was never read back)
    entry = (
        boto3.resource("dynamodb", region_name="us-east-1")
        .Table(fire.settings.DUE_INDEX_TABLE_NAME)
        .get_item(
            Key={
                "bucket": keys.due_bucket(post.publish_at, post.shard),
                "due": keys.order_key(post.publish_at, post.schedule_id),
            }
        )
    )
    item = entry.get("Item", {})
    assert (item.get("schedule_id"), item.get("version")) == (
        post.schedule_id,
        fire.read(post).version,
    )
    fire.driver.run_for(900)
    assert len(fire.receiver.requests_for(f"{post.schedule_id}:c1")) == 1
    assert len(fire.receiver.requests_for(f"{post.schedule_id}:c2")) == 1  # the 503 only


def test_cancel_when_the_next_attempt_is_due_is_409(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    post = waiting_post(fire)
    next_at = post.deliveries["c1"].next_attempt_at
    assert next_at is not None
    fire.clock.advance_to(next_at - timedelta(seconds=1))  # within the clock-skew margin
    answer = ApiClient("alice").delete(f"/v1/scheduled-posts/{post.schedule_id}")
    assert answer.status == 409
    assert fire.read(post).status == PostStatus.PUBLISHING


def test_cancel_after_an_attempt_that_may_have_published_is_409_and_changes_nothing(  # type: ignore[no-untyped-def]
    api_fire,
) -> None:
    fire: FirePath = api_fire()
    post = waiting_post(fire, status=500)  # a 500 may come after the receiver stored the post
    answer = ApiClient("alice").delete(f"/v1/scheduled-posts/{post.schedule_id}")
    assert answer.status == 409, answer.json
    assert "attempt 1 (http_500) may have reached the network" in answer.json["detail"]
    got = fire.read(post)
    assert (got.status, got.version) == (PostStatus.PUBLISHING, post.version)
    fire.driver.run_for(900)  # its next attempt, same Idempotency-Key, settles it
    assert fire.read(post).status == PostStatus.PUBLISHED


def test_cancel_that_read_before_the_worker_renewed_loses_to_the_worker(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    stale = waiting_post(fire)  # what a cancel read while the post waited
    fire.driver.run_for(900)  # the worker's next round: a new lease token, then published
    assert fire.read(stale).status == PostStatus.PUBLISHED
    repo = PostRepository(
        posts_table_name=fire.settings.POSTS_TABLE_NAME,
        due_table_name=fire.settings.DUE_INDEX_TABLE_NAME,
    )
    cancelled = stale.model_copy(
        update={"status": PostStatus.CANCELLED, "version": stale.version + 1}
    )
    with pytest.raises(StateConflictError):
        repo.replace(stale, cancelled, old_late=False, new_late=False, now=stale.updated_at)
    assert fire.read(stale).status == PostStatus.PUBLISHED
