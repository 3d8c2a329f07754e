"""The pure parts of Bluesky media (``platforms/bluesky_media.py``): the lexicons' rules, the embed
built from the blob refs, and blob refs checked before they are kept (a PDS's answer is
untrusted input)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from scheduled_posts.platforms.base import DeliveryRequest, PublishedMedia
from scheduled_posts.platforms.bluesky_media import (
    MAX_IMAGE_BYTES,
    blob_ref,
    embed_of,
    embedded_cids,
    media_violation,
)

CID = "bafkreibme22gw2h7y2h7tg2fhqotaqjucnbc24deqo72b6mkl2egezxhvy"
BLOB = {"$type": "blob", "ref": {"$link": CID}, "mimeType": "image/png", "size": 1234}


def item(media_id: str = "m1", **extra: object) -> PublishedMedia:
    fields: dict[str, object] = {
        "media_id": media_id,
        "content_type": "image/png",
        "size": 1234,
        "sha256": "0" * 64,
        "object_key": f"media/{media_id}",
        **extra,
    }
    return PublishedMedia.model_validate(fields)


def request_of(*media: PublishedMedia) -> DeliveryRequest:
    return DeliveryRequest(
        schedule_id="s",
        channel_id="c",
        content="x",
        media_ids=tuple(m.media_id for m in media),
        media=media,
        publish_at=datetime(2026, 12, 1, tzinfo=UTC),
        attempt=1,
        idempotency_key="s:c",
    )


def test_blob_ref_of_the_pds_answer_is_rebuilt_from_its_checked_fields() -> None:
    answer = {"blob": {**BLOB, "extra": "x" * 10_000}}
    assert blob_ref(answer) == BLOB


@pytest.mark.parametrize(
    "blob",
    [
        {**BLOB, "$type": "link"},
        {**BLOB, "ref": {"$link": "javascript:alert(1)"}},
        {**BLOB, "ref": {"$link": "b" + "a" * 5000}},
        {**BLOB, "ref": CID},
        {**BLOB, "mimeType": "image/png; x=<script>"},
        {**BLOB, "size": -1},
        {**BLOB, "size": True},
        "not an object",
    ],
)
def test_blob_ref_malformed_answer_is_none(blob: object) -> None:
    assert blob_ref({"blob": blob}) is None


def test_embed_of_images_has_empty_alt_and_aspect_ratio_only_with_both_dimensions() -> None:
    media = [item("m1", width=40, alt_text="red"), item("m2", width=16, height=64)]
    assert embed_of(media, [BLOB, BLOB]) == {
        "$type": "app.bsky.embed.images",
        "images": [
            {"image": BLOB, "alt": "red"},
            {"image": BLOB, "alt": "", "aspectRatio": {"width": 16, "height": 64}},
        ],
    }


def test_embed_of_a_video_without_alt_leaves_alt_out() -> None:
    video = item("v", content_type="video/mp4", width=1280, height=720)
    assert embed_of([video], [BLOB]) == {
        "$type": "app.bsky.embed.video",
        "video": BLOB,
        "aspectRatio": {"width": 1280, "height": 720},
    }


def test_embedded_cids_reads_well_formed_refs_of_at_most_four_images() -> None:
    images = [{"image": BLOB, "alt": ""}] * 6 + [{"image": {"$type": "blob"}}]
    value = {"embed": {"$type": "app.bsky.embed.images", "images": images}}
    assert embedded_cids(value) == (CID,) * 4
    assert embedded_cids({"embed": {"$type": "app.bsky.embed.external"}}) == ()


@pytest.mark.parametrize(
    ("media", "words"),
    [
        ((item(size=MAX_IMAGE_BYTES + 1),), "is 2000001 bytes, the limit is 2000000"),
        ((item(content_type="video/quicktime"),), "video is video/mp4, not video/quicktime"),
        ((item(content_type="application/pdf"),), "is application/pdf, not an image"),
    ],
)
def test_media_violation_names_the_lexicon_rule(
    media: tuple[PublishedMedia, ...], words: str
) -> None:
    assert words in (media_violation(request_of(*media)) or "")


def test_media_violation_none_for_four_images_at_the_limit() -> None:
    media = tuple(item(f"m{n}", size=MAX_IMAGE_BYTES) for n in range(4))
    assert media_violation(request_of(*media)) is None
