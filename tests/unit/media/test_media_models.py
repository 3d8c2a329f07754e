"""The media resource's models: what ``POST /v1/media`` accepts, ids that sort by time, and the
adapters' view of a ready upload."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from scheduled_posts.models.media import (
    MAX_MEDIA_BYTES,
    Media,
    MediaCreate,
    MediaOut,
    MediaPatch,
    MediaStatus,
    Probed,
    media_id_floor,
    new_media_id,
)

NOW = datetime(2026, 12, 2, 3, 0, tzinfo=UTC)


def test_a_create_takes_the_five_kinds_and_lowercases_the_sha256() -> None:
    for kind in ("image/jpeg", "image/png", "image/gif", "image/webp", "video/mp4"):
        assert MediaCreate(content_type=kind, size=1).content_type == kind
    assert MediaCreate(content_type="image/png", size=1, sha256="AB" * 32).sha256 == "ab" * 32


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"content_type": "image/svg+xml", "size": 10}, "content_type"),
        ({"content_type": "image/heic", "size": 10}, "content_type"),
        ({"content_type": "image/png", "size": 0}, "size"),
        ({"content_type": "image/png", "size": MAX_MEDIA_BYTES + 1}, "size"),
        ({"content_type": "image/png", "size": "10"}, "size"),
        ({"content_type": "image/png", "size": 10, "sha256": "z" * 64}, "sha256"),
        ({"content_type": "image/png", "size": 10, "sha256": "a" * 63}, "sha256"),
        ({"content_type": "image/png", "size": 10, "alt_text": "x" * 2001}, "alt_text"),
        ({"content_type": "image/png", "size": 10, "alt_text": "a\x00b"}, "alt_text"),
        ({"content_type": "image/png", "size": 10, "filename": "a.png"}, "filename"),
    ],
)
def test_a_create_refuses_each_bad_field_by_name(body: dict, field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        MediaCreate.model_validate(body)
    assert [e["loc"][0] for e in caught.value.errors()] == [field]


def test_a_patch_clears_with_null_and_needs_the_field() -> None:
    assert MediaPatch.model_validate({"alt_text": None}).alt_text is None
    assert MediaPatch.model_validate({"alt_text": "a cat"}).alt_text == "a cat"
    with pytest.raises(ValidationError):
        MediaPatch.model_validate({})


def test_ids_sort_by_creation_time_and_the_floor_is_below_them() -> None:
    earlier, later = new_media_id(NOW), new_media_id(NOW + timedelta(milliseconds=1))
    assert earlier < later
    assert media_id_floor(NOW) <= earlier < media_id_floor(NOW + timedelta(milliseconds=1))
    assert earlier[14] == "7"  # UUID version 7


def test_a_pending_upload_expires_in_a_day_and_cannot_be_published() -> None:
    media = Media.new("alice", MediaCreate(content_type="image/png", size=3), NOW)
    assert media.status == MediaStatus.PENDING and media.object_key == f"media/{media.media_id}"
    assert not media.is_expired(NOW + timedelta(hours=23))
    assert media.is_expired(NOW + timedelta(days=1))
    with pytest.raises(ValueError, match="not ready"):
        media.published()


def test_a_ready_upload_is_published_with_the_probed_facts_not_the_declared_ones() -> None:
    media = Media.new("alice", MediaCreate(content_type="image/png", size=3, alt_text="a"), NOW)
    probed = Probed(content_type="image/png", size=99, sha256="c" * 64, width=2, height=1)
    ready = media.model_copy(update={"status": MediaStatus.READY, "probed": probed})
    published = ready.published()
    assert (published.size, published.width, published.alt_text) == (99, 2, "a")
    assert published.object_key == f"media/{media.media_id}"
    out = MediaOut.of(ready)
    assert (out.size, out.declared.size, out.reason_detail) == (99, 3, None)
