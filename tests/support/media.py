"""Ready uploads for tests that need a post with media but not the upload itself: the item a
probe would leave (``POST /v1/media`` then ``complete``), written straight to the table."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from scheduled_posts.data.media import MediaRepository
from scheduled_posts.models.media import Media, MediaCreate, MediaStatus, Probed
from scheduled_posts.settings import Settings


def ready_media(
    settings: Settings, owner: str = "alice", *, alt_text: str | None = None, data: bytes = b"png"
) -> str:
    """Store a ``ready`` PNG upload of ``owner`` (3 x 2 pixels, ``data`` as its bytes' hash) in
    ``settings``' posts table; returns its ``media_id``."""
    request = MediaCreate(content_type="image/png", size=len(data), alt_text=alt_text)
    media = Media.new(owner, request, datetime.now(UTC))
    probed = Probed(
        content_type="image/png",
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        width=3,
        height=2,
    )
    ready = media.model_copy(update={"status": MediaStatus.READY, "probed": probed})
    MediaRepository(posts_table_name=settings.POSTS_TABLE_NAME).put_new(
        ready.model_copy(update={"expires_at": None})
    )
    return media.media_id
