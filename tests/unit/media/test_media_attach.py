"""``attach_media`` on moto's table with a scripted bucket: the first attach keeps the item
(no TTL) and untags the object, every attach untags again, an upload never attached for a day
or whose object is gone is a 422 naming ``media_ids[i]``, and nothing else is touched; a
thread part's and a variant's uploads are kept as the post's own (``attach_named``)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduled_posts.data.media import MediaRepository
from scheduled_posts.errors import StateConflictError, ValidationFailedError
from scheduled_posts.logic.media_attach import attach_media, attach_named
from scheduled_posts.models.api import PostCreate
from scheduled_posts.models.media import Media, MediaStatus, Probed
from scheduled_posts.models.variants import named_media
from tests.unit.media.test_media_complete import ScriptedBucket, deps_for, pending, png, stores

__all__ = ["stores"]  # the fixture, shared


def ready(repo: MediaRepository, clock: Any) -> Media:
    media = pending(repo, clock, 68)
    probed = Probed(content_type="image/png", size=68, sha256="a" * 64, width=2, height=2)
    return repo.mark_probed("alice", media.media_id, probed=probed, reason=None, now=clock.now())


def test_the_first_attach_keeps_the_item_and_every_attach_untags(stores: Any) -> None:
    repo, _, clock = stores
    bucket = ScriptedBucket(png())
    media = ready(repo, clock)
    clock.advance(3600)
    deps = deps_for(stores, bucket)
    attach_media("alice", [media.media_id, media.media_id], deps=deps)
    kept = repo.get("alice", media.media_id)
    assert kept is not None and kept.expires_at is None and kept.attached_at == clock.now()
    attach_media("alice", [media.media_id], deps=deps)
    assert bucket.kept == [media.object_key] * 3  # each name untagged, idempotently
    again = repo.get("alice", media.media_id)
    assert again is not None and again.version == kept.version  # one item write only


def test_an_upload_never_attached_within_a_day_is_refused_by_index(stores: Any) -> None:
    repo, _, clock = stores
    bucket = ScriptedBucket(png())
    fresh, old = ready(repo, clock), ready(repo, clock)
    deps = deps_for(stores, bucket)
    attach_media("alice", [fresh.media_id], deps=deps)
    clock.advance(86_400)
    with pytest.raises(ValidationFailedError) as refused:
        attach_media("alice", ["not-an-upload", fresh.media_id, old.media_id], deps=deps)
    [error] = refused.value.errors
    assert error["loc"] == ["body", "media_ids", 2] and error["type"] == "media_expired"
    assert "24 hours" in str(error["msg"])
    assert bucket.kept == [fresh.object_key]  # nothing kept for the refused request
    stored = repo.get("alice", old.media_id)
    assert stored is not None and stored.expires_at is not None


def test_an_attached_upload_whose_object_is_gone_is_refused(stores: Any) -> None:
    repo, _, clock = stores
    bucket = ScriptedBucket(png())
    media = ready(repo, clock)
    bucket.gone.add(media.object_key)
    with pytest.raises(ValidationFailedError) as refused:
        attach_media("alice", [media.media_id], deps=deps_for(stores, bucket))
    [error] = refused.value.errors
    assert error["type"] == "media_expired" and "no longer stored" in str(error["msg"])


def test_pending_foreign_and_earlier_ready_uploads_are_left_alone(stores: Any) -> None:
    repo, _, clock = stores
    bucket = ScriptedBucket(png())
    waiting = pending(repo, clock, 68)
    earlier = ready(repo, clock)
    repo._table.update_item(  # made ready before attaching existed: no TTL, untagged then
        Key={"pk": "OWNER#alice", "sk": f"MEDIA#{earlier.media_id}"},
        UpdateExpression="REMOVE expires_at",
    )
    deps = deps_for(stores, bucket)
    attach_media("alice", [waiting.media_id, earlier.media_id], deps=deps)
    attach_media("bob", [earlier.media_id], deps=deps)
    attach_media("alice", [], deps=deps)
    attach_media("alice", [waiting.media_id], deps=None)
    assert bucket.kept == []
    assert repo.get("alice", waiting.media_id).status == MediaStatus.PENDING  # type: ignore[union-attr]


def test_a_concurrent_attach_that_kept_it_first_still_untags(
    stores: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, _, clock = stores
    bucket = ScriptedBucket(png())
    media = ready(repo, clock)
    original = repo.mark_attached

    def raced(owner: str, media_id: str, *, now: Any) -> Media:
        original(owner, media_id, now=now)  # the other request's write
        raise StateConflictError("the media changed during this request; try again")

    monkeypatch.setattr(repo, "mark_attached", raced)
    attach_media("alice", [media.media_id], deps=deps_for(stores, bucket))
    assert bucket.kept == [media.object_key]


def test_a_thread_part_and_a_variant_keep_their_uploads_like_the_post_s_own(stores: Any) -> None:
    # Given three fresh uploads, one named by a thread part, one by a variant, one by a
    # variant's part (the post itself names none)
    repo, _, clock = stores
    bucket = ScriptedBucket(png())
    in_part, in_variant, in_variant_part = (ready(repo, clock) for _ in range(3))
    request = PostCreate.model_validate(
        {
            "content": "one",
            "parts": [{"content": "two", "media_ids": [in_part.media_id]}],
            "publish_at": "2026-12-30T12:00:00Z",
            "channel_ids": ["c1", "c2"],
            "variants": {
                "c2": {
                    "media_ids": [in_variant.media_id],
                    "parts": [{"content": "2", "media_ids": [in_variant_part.media_id]}],
                }
            },
        }
    )
    # When the create attaches what it names
    attach_named("alice", request, deps=deps_for(stores, bucket))
    # Then every one is kept (no TTL) and untagged, as a post's own upload is
    for media in (in_part, in_variant, in_variant_part):
        kept = repo.get("alice", media.media_id)
        assert kept is not None and kept.expires_at is None, media.media_id
    assert sorted(bucket.kept) == sorted(
        m.object_key for m in (in_part, in_variant, in_variant_part)
    )
    # and a refusal names where the request named it
    assert [loc for loc, _ in named_media(request)] == [
        ["body", "parts", 0, "media_ids", 0],
        ["body", "variants", "c2", "media_ids", 0],
        ["body", "variants", "c2", "parts", 0, "media_ids", 0],
    ]


def test_an_expired_upload_named_by_a_part_is_refused_at_the_part(stores: Any) -> None:
    repo, _, clock = stores
    old = ready(repo, clock)
    clock.advance(86_400 + 1)
    request = PostCreate.model_validate(
        {
            "content": "one",
            "parts": [{"content": "two", "media_ids": [old.media_id]}],
            "publish_at": "2026-12-30T12:00:00Z",
            "channel_ids": ["c1"],
        }
    )
    with pytest.raises(ValidationFailedError) as refused:
        attach_named("alice", request, deps=deps_for(stores, ScriptedBucket(png())))
    [error] = refused.value.errors
    assert error["loc"] == ["body", "parts", 0, "media_ids", 0]
    assert error["type"] == "media_expired"
