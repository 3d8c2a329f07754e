"""An in-memory :class:`~scheduled_posts.platforms.base.MediaObjects` for the adapters' tests,
written to that protocol (``read`` and ``download_url``), not to ``data/media.py``'s S3 class:
the bytes by ``object_key`` in a dict, and a loopback download URL that names the key and its
validity. :func:`png` makes a real PNG with Pillow and :meth:`MemoryMediaObjects.add` stores it
as a ready upload (probed facts computed from the bytes, as the probe would).
"""

from __future__ import annotations

import hashlib
import io

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.platforms.base import PublishedMedia

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
