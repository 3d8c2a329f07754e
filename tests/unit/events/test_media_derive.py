"""``media.rejected`` derived from a media item's old and new images (pure, no moto): once, on
``pending -> rejected``, with the declared and detected facts, valid against its schema in
``docs/events.md``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jsonschema

from scheduled_posts.data.media import media_to_item
from scheduled_posts.event_docs import schemas_in
from scheduled_posts.lifecycle.events import derive_events
from scheduled_posts.models.events import MediaRejected, event_body
from scheduled_posts.models.media import Media, MediaStatus, Probed, RejectionReason

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
DOC = Path(__file__).resolve().parents[3] / "docs" / "events.md"
SCHEMAS = schemas_in(DOC.parent / "events")


def media_item(status: MediaStatus = MediaStatus.PENDING, **kw: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "media_id": "0193a1b2-0000-7000-8000-000000000001",
        "owner": "alice",
        "status": status,
        "content_type": "image/jpeg",
        "size": 68,
        "created_at": NOW,
        "updated_at": NOW,
        "version": 1,
        **kw,
    }
    return media_to_item(Media.model_validate(fields))


def rejected(reason: RejectionReason, probed: Probed | None = None) -> dict[str, Any]:
    return media_item(
        MediaStatus.REJECTED,
        reason=reason,
        probed=probed,
        version=2,
        updated_at=NOW + timedelta(seconds=3),
    )


def test_media_rejected_from_pending_carries_declared_detected_and_reason() -> None:
    probed = Probed(content_type="image/png", size=68, sha256="ab" * 32, width=4, height=3)
    [event] = derive_events(media_item(), rejected(RejectionReason.TYPE_MISMATCH, probed))
    assert isinstance(event, MediaRejected)
    body = event_body(event)
    jsonschema.validate(body, SCHEMAS["media.rejected"])
    assert body["content_type"] == "image/jpeg" and body["detected_content_type"] == "image/png"
    assert (body["size"], body["detected_size"]) == (68, 68)
    assert body["reason"] == "type_mismatch" and "declared" in body["reason_detail"]
    assert body["occurred_at"] == "2026-12-01T12:00:03.000Z"
    assert "schedule_id" not in body and "sha256" not in body


def test_media_rejected_without_a_readable_file_has_no_detected_facts() -> None:
    [event] = derive_events(media_item(), rejected(RejectionReason.UNSUPPORTED_TYPE))
    body = event_body(event)
    jsonschema.validate(body, SCHEMAS["media.rejected"])
    assert "detected_content_type" not in body and "detected_size" not in body


def test_media_rejected_id_is_stable_and_only_the_refusal_reports() -> None:
    refusal = rejected(RejectionReason.TRUNCATED)
    assert derive_events(media_item(), refusal) == derive_events(media_item(), dict(refusal))
    later = {**refusal, "alt_text": "described later", "version": 3}
    assert derive_events(refusal, later) == []  # still rejected: no second event
    ready = media_item(MediaStatus.READY, version=2)
    assert derive_events(media_item(), ready) == []
    assert derive_events(None, media_item()) == []
    assert derive_events(refusal, None) == []  # TTL expiry or delete


def test_media_rejected_trail_is_in_the_owners_partition() -> None:
    [event] = derive_events(media_item(), rejected(RejectionReason.EMPTY))
    assert event.trail_pk() == "OWNER#alice"
