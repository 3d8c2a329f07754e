"""Recovery actions through the API: retry of failed channels, PATCH of a missed post, secret
rotation. The API handler runs on the fire path's moto tables and simulated clock."""

from __future__ import annotations

from datetime import timedelta

from scheduled_posts.clock import format_instant
from scheduled_posts.data.post_store import PostStore
from scheduled_posts.data.posts import PostRepository
from scheduled_posts.models.post import DeliveryStatus, Post, PostStatus
from scheduled_posts.platforms.signing import verify
from tests.integration.dispatch.conftest import FirePath
from tests.support.api import ApiClient
from tests.support.receiver import Answer


def _partially_published(fire: FirePath) -> Post:
    fire.channel("c1")
    fire.channel("c2")
    fire.receiver.script(Answer.reject(400), url="https://hooks.example.com/c2")
    post = fire.post(fire.clock.now() + timedelta(seconds=30), ["c1", "c2"])
    fire.driver.run_for(40)
    got = fire.read(post)
    assert got.status == PostStatus.PARTIALLY_PUBLISHED
    return got


def test_retry_partially_published_resends_only_failed_channel(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    post = _partially_published(fire)
    answer = ApiClient("alice").post(f"/v1/scheduled-posts/{post.schedule_id}/retry")
    assert answer.status == 202, answer.json
    assert answer.json["status"] == "publishing"
    fire.driver.run_for(10)
    assert len(fire.receiver.requests_for(f"{post.schedule_id}:c1")) == 1
    assert fire.receiver.accepted(f"{post.schedule_id}:c2") == 1
    got = fire.read(post)
    assert got.status == PostStatus.PUBLISHED
    # The budget was reset, the numbering goes on: attempts #1 (400) and #2 (the retry).
    assert (got.deliveries["c2"].attempts, got.deliveries["c2"].attempts_before_retry) == (2, 1)
    listed = ApiClient("alice").get(f"/v1/scheduled-posts/{post.schedule_id}/attempts").json
    numbers = [a["attempt"] for a in listed["items"] if a["channel_id"] == "c2"]
    assert numbers == [1, 2]


def test_retry_published_post_conflicts(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(seconds=5), ["c1"])
    fire.driver.run_for(10)
    answer = ApiClient("alice").post(f"/v1/scheduled-posts/{post.schedule_id}/retry")
    assert answer.status == 409


def test_retry_twice_second_conflicts_while_publishing(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    post = _partially_published(fire)
    alice = ApiClient("alice")
    assert alice.post(f"/v1/scheduled-posts/{post.schedule_id}/retry").status == 202
    assert alice.post(f"/v1/scheduled-posts/{post.schedule_id}/retry").status == 409


def test_retry_past_misfire_grace_conflicts(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire(MISFIRE_GRACE_SECONDS=120)
    post = _partially_published(fire)
    fire.clock.advance(200)
    answer = ApiClient("alice").post(f"/v1/scheduled-posts/{post.schedule_id}/retry")
    assert answer.status == 409


def test_retry_other_users_post_not_found(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    post = _partially_published(fire)
    assert ApiClient("bob").post(f"/v1/scheduled-posts/{post.schedule_id}/retry").status == 404


def _missed(fire: FirePath) -> Post:
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(days=2), ["c1"])
    store = PostStore(fire.settings.POSTS_TABLE_NAME)
    assert store.mark_missed(post, reason="test", now=fire.clock.now(), expires_at=2_000_000_000)
    return post  # the factory did not count it as pending, so nothing to release


def test_patch_missed_post_with_future_publish_at_scheduled_and_delivered(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    post = _missed(fire)
    new_at = fire.clock.now() + timedelta(seconds=120)
    answer = ApiClient("alice").patch(
        f"/v1/scheduled-posts/{post.schedule_id}", {"publish_at": format_instant(new_at)}
    )
    assert answer.status == 200, answer.json
    assert (answer.json["status"], answer.json["version"]) == ("scheduled", 2)
    repo = PostRepository(
        posts_table_name=fire.settings.POSTS_TABLE_NAME,
        due_table_name=fire.settings.DUE_INDEX_TABLE_NAME,
    )
    assert repo.pending_count("alice") == 1
    fire.driver.run_for(180, step=5)
    assert fire.receiver.accepted(f"{post.schedule_id}:c1") == 1
    got = fire.read(post)
    assert got.status == PostStatus.PUBLISHED
    assert got.deliveries["c1"].status == DeliveryStatus.PUBLISHED


def test_patch_missed_post_without_publish_at_conflicts(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    post = _missed(fire)
    answer = ApiClient("alice").patch(f"/v1/scheduled-posts/{post.schedule_id}", {"content": "x"})
    assert answer.status == 409


def test_patch_missed_post_over_pending_limit_refused(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire(MAX_PENDING_POSTS=1)
    post = _missed(fire)
    fire.post(fire.clock.now() + timedelta(days=1), ["c1"])
    PostRepository(  # the factory writes no counter: count the other post as the API would
        posts_table_name=fire.settings.POSTS_TABLE_NAME,
        due_table_name=fire.settings.DUE_INDEX_TABLE_NAME,
    ).posts_table.update_item(
        Key={"pk": "OWNER#alice", "sk": "PENDING"},
        UpdateExpression="SET pending = :p",
        ExpressionAttributeValues={":p": 2},
    )
    new_at = format_instant(fire.clock.now() + timedelta(hours=1))
    answer = ApiClient("alice").patch(
        f"/v1/scheduled-posts/{post.schedule_id}", {"publish_at": new_at}
    )
    assert answer.status == 429
    assert fire.read(post).status == PostStatus.MISSED


def _signature_checks(fire: FirePath, key: str, secrets: list[str]) -> list[bool]:
    request = fire.receiver.requests_for(key)[-1]
    now = int(request.at.timestamp())
    return [verify(request.signature or "", s, request.body, now=now) for s in secrets]


def test_rotate_secret_overlap_signs_with_both_then_only_new(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire(SECRET_OVERLAP_SECONDS=600)
    old = fire.channel("c1").signing_secret
    answer = ApiClient("alice").post("/v1/channels/c1/rotate-secret")
    assert answer.status == 200, answer.json
    new = answer.json["signing_secret"]
    assert new != old
    fire.receiver.add_secret("https://hooks.example.com/c1", new)
    # Within the overlap: either secret verifies
    during = fire.post(fire.clock.now() + timedelta(seconds=5), ["c1"])
    fire.driver.run_for(10)
    assert _signature_checks(fire, f"{during.schedule_id}:c1", [old, new]) == [True, True]
    # After it: only the new one
    fire.clock.advance(600)
    after = fire.post(fire.clock.now() + timedelta(seconds=5), ["c1"])
    fire.driver.run_for(10)
    assert _signature_checks(fire, f"{after.schedule_id}:c1", [old, new]) == [False, True]


def test_rotate_secret_other_users_channel_not_found(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    fire.channel("c1")
    assert ApiClient("bob").post("/v1/channels/c1/rotate-secret").status == 404
