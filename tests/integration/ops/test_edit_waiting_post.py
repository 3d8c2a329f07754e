"""A post waiting for its next attempt can be edited when no attempt of it may have published:
it keeps waiting for the same ``next_attempt_at`` with the new text, under a new lease token the
old follow-up message and a racing worker lose to (decision "A post waiting for its next
attempt can be edited when nothing was sent")."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest

from scheduled_posts.data.posts import PostRepository
from scheduled_posts.errors import StateConflictError
from scheduled_posts.lifecycle import outcomes
from scheduled_posts.models.api import etag_for
from scheduled_posts.models.post import DeliveryStatus, Post, PostStatus
from tests.integration.dispatch.conftest import FirePath
from tests.support.api import ApiClient
from tests.support.receiver import Answer


def waiting_post(fire: FirePath, first: Answer) -> Post:
    """A post whose only channel answered ``first`` (with a ``Retry-After``): it waits."""
    fire.channel("c1")
    fire.receiver.script(first, url="https://hooks.example.com/c1")
    post = fire.post(fire.clock.now() + timedelta(seconds=5), ["c1"])
    fire.driver.run_for(10)
    got = fire.read(post)
    assert got.status == PostStatus.PUBLISHING
    assert got.deliveries["c1"].status == DeliveryStatus.RETRY_SCHEDULED
    return got


def patch(post: Post, body: dict[str, object]) -> tuple[int, dict]:
    answer = ApiClient("alice").patch(
        f"/v1/scheduled-posts/{post.schedule_id}",
        body,
        headers={"If-Match": etag_for(post)},
    )
    return answer.status, answer.json


def test_edit_of_a_post_waiting_on_a_503_keeps_its_wait_and_publishes_the_new_text_once(
    api_fire,  # type: ignore[no-untyped-def]
) -> None:
    fire: FirePath = api_fire()
    post = waiting_post(fire, Answer.error(503, retry_after="600"))
    next_at = post.deliveries["c1"].next_attempt_at
    status, body = patch(post, {"content": "the new text"})
    assert status == 200, body
    assert (body["status"], body["content"], body["version"]) == (
        "publishing",
        "the new text",
        post.version + 1,
    )
    edited = fire.read(post)
    assert edited.deliveries["c1"].next_attempt_at == next_at  # the 503's wait is kept
    assert edited.lease_token not in (None, post.lease_token)
    fire.driver.run_for(900)  # the old follow-up is dropped; the edit's own one publishes
    sent = fire.receiver.requests_for(f"{post.schedule_id}:c1")
    assert [r.payload["content"] for r in sent if r.payload] == [post.content, "the new text"]
    # at the wait's end by the edit's follow-up, not a lease later by the watchdog
    assert next_at <= sent[-1].at < next_at + timedelta(seconds=fire.settings.LEASE_SECONDS)
    assert fire.read(post).status == PostStatus.PUBLISHED
    assert fire.driver.dlq_bodies() == []


def test_edit_after_an_attempt_that_may_have_published_is_409_and_changes_nothing(
    api_fire,  # type: ignore[no-untyped-def]
) -> None:
    fire: FirePath = api_fire()
    # a 500 may come after the receiver stored the post: the old text may be out
    post = waiting_post(fire, Answer.error(500, retry_after="600"))
    status, body = patch(post, {"content": "the new text"})
    assert status == 409, body
    assert "attempt 1 (http_500) may have reached the network" in body["detail"]
    assert "cancel it instead" in body["detail"]
    assert fire.read(post) == post


def test_edit_moving_publish_at_of_a_waiting_post_is_409(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    post = waiting_post(fire, Answer.error(503, retry_after="600"))
    later = (fire.clock.now() + timedelta(hours=1)).isoformat().replace("+00:00", "Z")
    status, body = patch(post, {"publish_at": later})
    assert status == 409, body
    assert fire.read(post) == post


def test_edit_that_read_before_the_worker_renewed_loses_to_the_worker(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    stale = waiting_post(fire, Answer.error(503, retry_after="600"))  # what the edit read
    repo = PostRepository(
        posts_table_name=fire.settings.POSTS_TABLE_NAME,
        due_table_name=fire.settings.DUE_INDEX_TABLE_NAME,
    )
    attempts = outcomes.merge_attempts(
        repo.list_attempts(stale.schedule_id, now=stale.updated_at), stale
    )
    fire.driver.run_for(900)  # the worker's next round: a new lease token, then published
    assert fire.read(stale).status == PostStatus.PUBLISHED
    edited = stale.model_copy(
        update={"content": "late", "version": stale.version + 1, "lease_token": uuid.uuid4().hex}
    )
    with pytest.raises(StateConflictError):
        repo.replace(
            stale, edited, old_late=False, new_late=False, now=stale.updated_at, attempts=attempts
        )
    got = fire.read(stale)
    assert (got.status, got.content) == (PostStatus.PUBLISHED, stale.content)


def test_a_worker_that_read_before_the_edit_loses_its_lease_and_sends_nothing_old(
    api_fire,  # type: ignore[no-untyped-def]
) -> None:
    fire: FirePath = api_fire()
    post = waiting_post(fire, Answer.error(503, retry_after="600"))
    status, _ = patch(post, {"content": "the new text"})
    assert status == 200
    # the worker read the post before the edit: its renew is guarded by the old token
    renewed = fire.store.renew_lease(
        post,
        new_token="worker",
        lease_expires_at=fire.clock.now() + timedelta(seconds=60),
        now=fire.clock.now(),
    )
    assert renewed is None
    assert fire.read(post).content == "the new text"


def test_edit_giving_a_waiting_post_a_variant_sends_the_variant_text_in_the_signed_body(
    api_fire,  # type: ignore[no-untyped-def]
) -> None:
    """Decision "A text per channel: variants": the webhook body's ``content`` is the channel's
    effective text."""
    fire: FirePath = api_fire()
    post = waiting_post(fire, Answer.error(503, retry_after="600"))
    status, body = patch(post, {"variants": {"c1": {"content": "the webhook's own text"}}})
    assert status == 200, body
    assert body["deliveries"][0]["content"] == "the webhook's own text"
    fire.driver.run_for(900)
    sent = fire.receiver.requests_for(f"{post.schedule_id}:c1")
    contents = [r.payload["content"] for r in sent if r.payload]
    assert contents == [post.content, "the webhook's own text"]
    assert fire.read(post).status == PostStatus.PUBLISHED
