"""The events of one committed write of a media item (``OWNER#<sub>``, ``MEDIA#<media_id>``).

One event: ``media.rejected``, when the write moved the upload from ``pending`` to ``rejected``
(the probe's conditional write ``status = pending``, ``data/media.py`` ``mark_probed``). A
second ``complete`` finds the upload no longer pending and writes nothing, so no stream record
and no second event; a later write of a rejected upload (its alt text) leaves the status as it
was and reports nothing. The event id is the UUIDv5 of ``media.rejected|<media_id>|v<version>``.
Pure: reads the plain item values (``lifecycle/events.py`` hands them over), no boto3, no clock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from scheduled_posts.clock import instant_from_storage
from scheduled_posts.models.events import BaseEvent, EventType, MediaRejected
from scheduled_posts.models.media import REJECTION_MESSAGES, MediaStatus, RejectionReason

Item = Mapping[str, Any]


def media_events(old: Item | None, new: Item, event_id: Callable[..., str]) -> list[BaseEvent]:
    """``[MediaRejected]`` when ``old`` was not rejected and ``new`` is, else ``[]``;
    ``event_id`` makes the id from the fact's parts (``lifecycle.events.event_id``)."""
    rejected = MediaStatus.REJECTED.value
    if new.get("status") != rejected or (old is not None and old.get("status") == rejected):
        return []
    reason = RejectionReason(str(new["reason"]))
    probed = new.get("probed") or {}
    media_id = str(new["media_id"])
    detected_size = probed.get("size")
    return [
        MediaRejected(
            event_id=event_id(EventType.MEDIA_REJECTED, media_id, f"v{new.get('version', 1)}"),
            occurred_at=instant_from_storage(str(new.get("updated_at") or new["created_at"])),
            owner=str(new["owner"]),
            media_id=media_id,
            content_type=str(new["content_type"]),
            size=int(new["size"]),
            detected_content_type=probed.get("content_type"),
            detected_size=int(detected_size) if detected_size is not None else None,
            reason=reason.value,
            reason_detail=REJECTION_MESSAGES[reason],
        )
    ]
