"""Media for tests: an in-memory :class:`~scheduled_posts.platforms.base.MediaObjects` for the
adapters' tests, written to that protocol (``read`` and ``download_url``), not to
``data/media_objects.py``'s S3 class (the bytes by ``object_key`` in a dict, and a loopback
download URL that names the key and its validity; :func:`png` makes a real PNG with Pillow and
:meth:`MemoryMediaObjects.add` stores it as a ready upload, probed facts computed from the
bytes); and :func:`ready_media`, for tests that need a post with media but not the upload
itself: the item a probe would leave (``POST /v1/media`` then ``complete``), written straight to
the table.
"""

from __future__ import annotations

import hashlib
import io
from datetime import UTC, datetime

from scheduled_posts.data.media import MediaRepository
from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.models.media import Media, MediaCreate, MediaStatus, Probed
from scheduled_posts.platforms.base import PublishedMedia
from scheduled_posts.settings import Settings

#: The origin of the fake's download URLs (nothing listens there: tests read the URL only).
DOWNLOAD_ORIGIN = "http://127.0.0.1:9"


def png(width: int, height: int, color: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A ``width`` x ``height`` PNG of one ``color`` (Pillow, imported here only)."""
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (width, height), color).save(out, format="PNG")
    return out.getvalue()


class MemoryMediaObjects:
    """``MediaObjects`` over a dict ``object_key -> bytes``.

    ``unavailable`` (a set of object keys) makes ``read`` of those raise
    ``RetryableDeliveryError``, as S3 not answering would; ``reads`` and ``urls`` keep every
    call, in order."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}
        self.unavailable: set[str] = set()
        self.reads: list[str] = []
        self.urls: list[tuple[str, int]] = []

    def add(
        self,
        data: bytes,
        *,
        media_id: str,
        content_type: str = "image/png",
        width: int | None = None,
        height: int | None = None,
        duration_seconds: float | None = None,
        alt_text: str | None = None,
    ) -> PublishedMedia:
        """Store ``data`` at ``media/<media_id>`` and return it as a ready upload."""
        key = f"media/{media_id}"
        self.objects[key] = data
        return PublishedMedia(
            media_id=media_id,
            content_type=content_type,
            size=len(data),
            sha256=hashlib.sha256(data).hexdigest(),
            width=width,
            height=height,
            duration_seconds=duration_seconds,
            alt_text=alt_text,
            object_key=key,
        )

    def read(self, media: PublishedMedia) -> bytes:
        self.reads.append(media.object_key)
        if media.object_key in self.unavailable:
            raise RetryableDeliveryError(f"media bucket unavailable for {media.object_key}")
        return self.objects[media.object_key]

    def download_url(self, media: PublishedMedia, *, expires_seconds: int) -> str:
        self.urls.append((media.object_key, expires_seconds))
        return f"{DOWNLOAD_ORIGIN}/{media.object_key}?X-Amz-Expires={expires_seconds}"


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
