"""The media half of the Mastodon stand-in (``local/mastodon.py``): uploads, their processing,
and the checks ``POST /api/v1/statuses`` makes on ``media_ids``, written to the documentation
(https://docs.joinmastodon.org/methods/media/, https://docs.joinmastodon.org/entities/MediaAttachment/)
and to Mastodon's own words (``config/locales/en.yml`` ``media_attachments.validations``,
``app/controllers/api/v1/media_controller.rb``).

- ``POST /api/v2/media`` (multipart ``file``, optional ``description`` and ``focus``): an
  image answers 200 with its attachment; a video or a GIF (Mastodon turns GIFs into ``gifv``
  video) answers 202 with ``url: null`` while it is processing. The kind is read from the
  bytes (magic numbers), as Mastodon does, not from the part's declared type.
- ``GET /api/v1/media/:id``: 206 while processing, 200 when done, 422 when processing failed;
  404 for another account's media or one already attached to a status.
- ``PUT /api/v1/media/:id``: ``description`` and ``focus``, before it is attached.

**Processing model.** A video or GIF is processed once it has answered
:attr:`MediaStore.processing_polls` ``GET``\\ s with 206 (default 1: the first ``GET`` answers
206, the next 200), or, when :attr:`MediaStore.processing_seconds` is set, once the stand-in's
injectable clock has passed that many seconds since the upload, whichever comes first; no real
time passes in tests. :meth:`MediaStore.fail_next_processing` makes the next video fail.

The limits are an instance's (``/api/v2/instance`` ``configuration.media_attachments``):
16 MiB images, 99 MiB video and GIF, 1,500-character descriptions, 4 attachments a status.
:attr:`MediaStore.uploads` counts the uploads of each file's SHA-256 (the fault suite's "no
item uploaded twice").
"""

from __future__ import annotations

import hashlib
import io
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
VIDEO_TYPES = ("video/mp4", "video/quicktime", "video/webm")
#: Mastodon's defaults (``MAX_IMAGE_SIZE``, ``MAX_VIDEO_SIZE``; docs "Posting > Attachments").
IMAGE_SIZE_LIMIT = 16 * 1024 * 1024
VIDEO_SIZE_LIMIT = 99 * 1024 * 1024
DESCRIPTION_LIMIT = 1500
MAX_MEDIA_ATTACHMENTS = 4

#: Mastodon's words (config/locales/en.yml, media_attachments.validations, and the media
#: controller); the size and description ones are its model validations' messages.
NOT_READY = "Cannot attach files that have not finished processing. Try again in a moment!"
NOT_FOUND = "Media {ids} not found or already attached to another post"
TOO_MANY = "Cannot attach more than {limit} files"
IMAGES_AND_VIDEO = "Cannot attach a video to a post that already contains images"
CONTENT_TYPE_INVALID = "Validation failed: File content type is invalid, File is invalid"
FILE_BLANK = "Validation failed: File can't be blank"
FILE_TOO_LARGE = "Validation failed: File file size must be less than {limit}"
DESCRIPTION_TOO_LONG = "Validation failed: Description is too long (maximum is {limit} characters)"
PROCESSING_ERROR = "Error processing thumbnail for uploaded media"
NOT_FOUND_RECORD = "Record not found"


@dataclass(frozen=True)
class FilePart:
    """One file field of a multipart body: its bytes, file name and declared type."""

    data: bytes
    filename: str | None = None
    content_type: str | None = None


def parse_multipart(raw: bytes, content_type: str) -> dict[str, Any]:
    """A ``multipart/form-data`` body as a dict: a file part (one with a file name) is a
    :class:`FilePart`, any other part its UTF-8 text; a field named ``x[]`` keeps every value
    in a list. Raises ``ValueError`` when the body is not multipart or a text part not UTF-8."""
    message = BytesParser(policy=HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + raw
    )
    if not message.is_multipart():
        raise ValueError("the body is not multipart/form-data")
    fields: dict[str, Any] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str):
            continue
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        filename = part.get_filename()
        value: Any = (
            FilePart(data, filename, part.get_content_type())
            if filename is not None
            else data.decode("utf-8")
        )
        if name.endswith("[]"):
            fields.setdefault(name, []).append(value)
        else:
            fields[name] = value
    return fields


def sniff(data: bytes) -> str | None:
    """The media type the bytes' magic numbers say (JPEG, PNG, GIF, WebP, MP4/QuickTime,
    WebM), else ``None``."""
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[4:8] == b"ftyp":
        return "video/quicktime" if data[8:10] == b"qt" else "video/mp4"
    if data.startswith(b"\x1a\x45\xdf\xa3"):
        return "video/webm"
    return None


def _dimensions(data: bytes) -> tuple[int, int] | None:
    from PIL import Image, UnidentifiedImageError  # lazily: only an image upload needs it

    try:
        with Image.open(io.BytesIO(data)) as image:
            return int(image.width), int(image.height)
    except (UnidentifiedImageError, OSError, ValueError):
        return None


def _human(size: int) -> str:
    return f"{size // (1024 * 1024)} MB"


@dataclass
class MediaAttachment:
    """One uploaded file of an account (``kind``: ``image``, ``gifv`` or ``video``)."""

    id: str
    account_id: str
    kind: str
    content_type: str
    size: int
    sha256: str
    uploaded_at: datetime
    width: int | None = None
    height: int | None = None
    description: str | None = None
    focus: tuple[float, float] | None = None
    processed: bool = True
    failed: bool = False
    polls: int = 0
    status_id: str | None = None


@dataclass
class MediaStore:
    """The stand-in's media and their limits (see the module docstring)."""

    domain: str = "mastodon.local"
    processing_polls: int | None = 1
    processing_seconds: float | None = None
    image_size_limit: int = IMAGE_SIZE_LIMIT
    video_size_limit: int = VIDEO_SIZE_LIMIT
    description_limit: int = DESCRIPTION_LIMIT
    max_attachments: int = MAX_MEDIA_ATTACHMENTS
    items: dict[str, MediaAttachment] = field(default_factory=dict)
    #: Uploads received per file SHA-256 (refused ones too).
    uploads: Counter[str] = field(default_factory=Counter)
    _fail_next: int = 0

    # -- controls --------------------------------------------------------------------------------

    def upload_count(self, data: bytes) -> int:
        """How many times these exact bytes were uploaded (``POST /api/v2/media``)."""
        return self.uploads[hashlib.sha256(data).hexdigest()]

    def fail_next_processing(self, count: int = 1) -> None:
        """The next ``count`` videos or GIFs fail processing (``GET`` answers 422)."""
        self._fail_next += count

    def finish_processing(self, media_id: str | None = None) -> None:
        """End the processing of ``media_id`` (every media when ``None``) at once."""
        for media in self.items.values():
            if media_id in (None, media.id) and not media.failed:
                media.processed = True

    def configuration(self) -> dict[str, Any]:
        """``/api/v2/instance`` ``configuration.media_attachments``
        (https://docs.joinmastodon.org/entities/Instance/#media_attachments)."""
        return {
            "supported_mime_types": [*IMAGE_TYPES, *VIDEO_TYPES],
            "description_limit": self.description_limit,
            "image_size_limit": self.image_size_limit,
            "image_matrix_limit": 33_177_600,
            "video_size_limit": self.video_size_limit,
            "video_frame_rate_limit": 120,
            "video_matrix_limit": 8_294_400,
        }

    # -- the API ---------------------------------------------------------------------------------

    def _ready(self, media: MediaAttachment, now: datetime) -> bool:
        if not media.processed and not media.failed:
            by_polls = self.processing_polls is not None and media.polls >= self.processing_polls
            by_time = self.processing_seconds is not None and now >= media.uploaded_at + timedelta(
                seconds=self.processing_seconds
            )
            media.processed = by_polls or by_time
        return media.processed

    def upload(
        self, account_id: str, body: dict[str, Any], *, new_id: str, now: datetime
    ) -> tuple[int, Any]:
        """``POST /api/v2/media`` -> ``(status, body)``: 200 image, 202 video or GIF, 422."""
        part = body.get("file")
        if not isinstance(part, FilePart) or not part.data:
            return 422, {"error": FILE_BLANK}
        digest = hashlib.sha256(part.data).hexdigest()
        self.uploads[digest] += 1
        content_type = sniff(part.data)
        if content_type is None:
            return 422, {"error": CONTENT_TYPE_INVALID}
        kind = "image" if content_type in IMAGE_TYPES else "video"
        if content_type == "image/gif":
            kind = "gifv"
        limit = self.image_size_limit if kind == "image" else self.video_size_limit
        if len(part.data) > limit:
            return 422, {"error": FILE_TOO_LARGE.format(limit=_human(limit))}
        refused = self._check_fields(body)
        if refused is not None:
            return 422, {"error": refused}
        size = _dimensions(part.data) if kind != "video" else None
        if kind != "video" and size is None:
            return 422, {"error": CONTENT_TYPE_INVALID}
        media = MediaAttachment(
            id=new_id,
            account_id=account_id,
            kind=kind,
            content_type=content_type,
            size=len(part.data),
            sha256=digest,
            uploaded_at=now,
            width=size[0] if size else None,
            height=size[1] if size else None,
            processed=kind == "image",
        )
        if kind != "image" and self._fail_next > 0:
            self._fail_next -= 1
            media.failed = True
        self._apply_fields(media, body)
        self.items[media.id] = media
        return (200 if media.processed else 202), self.json(media)

    def _check_fields(self, body: dict[str, Any]) -> str | None:
        description = body.get("description")
        if isinstance(description, str) and len(description) > self.description_limit:
            return DESCRIPTION_TOO_LONG.format(limit=self.description_limit)
        return None

    @staticmethod
    def _apply_fields(media: MediaAttachment, body: dict[str, Any]) -> None:
        if isinstance(body.get("description"), str):
            media.description = body["description"] or None
        focus = body.get("focus")
        if isinstance(focus, str) and focus:
            try:
                x, y = (float(v) for v in focus.split(","))
            except ValueError:
                return
            media.focus = (max(-1.0, min(1.0, x)), max(-1.0, min(1.0, y)))

    def _own(self, account_id: str, media_id: str) -> MediaAttachment | None:
        media = self.items.get(media_id)
        if media is None or media.account_id != account_id or media.status_id is not None:
            return None
        return media

    def show(self, account_id: str, media_id: str, *, now: datetime) -> tuple[int, Any]:
        """``GET /api/v1/media/:id``: 206 while processing (a poll), 200 done, 422, 404."""
        media = self._own(account_id, media_id)
        if media is None:
            return 404, {"error": NOT_FOUND_RECORD}
        if media.failed:
            return 422, {"error": PROCESSING_ERROR}
        if not self._ready(media, now):
            media.polls += 1
            return 206, self.json(media)
        return 200, self.json(media)

    def update(
        self, account_id: str, media_id: str, body: dict[str, Any], *, now: datetime
    ) -> tuple[int, Any]:
        """``PUT /api/v1/media/:id`` (``description``, ``focus``): 200 or 206, 422, 404."""
        media = self._own(account_id, media_id)
        if media is None:
            return 404, {"error": NOT_FOUND_RECORD}
        if media.failed:
            return 422, {"error": PROCESSING_ERROR}
        refused = self._check_fields(body)
        if refused is not None:
            return 422, {"error": refused}
        self._apply_fields(media, body)
        return (200 if self._ready(media, now) else 206), self.json(media)

    def attachable(
        self, account_id: str, media_ids: list[str], *, now: datetime
    ) -> tuple[str | None, list[MediaAttachment]]:
        """The checks of ``POST /api/v1/statuses`` on ``media_ids``, in Mastodon's order
        (``PostStatusService#validate_media!``): ``(error, [])`` or ``(None, media in order)``."""
        if len(media_ids) > self.max_attachments:
            return TOO_MANY.format(limit=self.max_attachments), []
        found = [self._own(account_id, media_id) for media_id in media_ids]
        missing = [media_id for media_id, media in zip(media_ids, found, strict=True) if not media]
        if missing:
            return NOT_FOUND.format(ids=", ".join(missing)), []
        media = [m for m in found if m is not None]
        if len(media) > 1 and any(m.kind == "video" for m in media):
            return IMAGES_AND_VIDEO, []
        if any(m.failed for m in media):
            return PROCESSING_ERROR, []
        if not all(self._ready(m, now) for m in media):
            return NOT_READY, []
        return None, media

    def json(self, media: MediaAttachment) -> dict[str, Any]:
        """The MediaAttachment entity (https://docs.joinmastodon.org/entities/MediaAttachment/):
        ``url`` is ``null`` until processed; ``meta.original`` has the image's pixel size."""
        base = f"https://{self.domain}/system/media_attachments/files/{media.id}"
        extension = media.content_type.split("/")[1] if media.kind == "image" else "mp4"
        meta: dict[str, Any] = {}
        if media.width and media.height:
            meta["original"] = {
                "width": media.width,
                "height": media.height,
                "size": f"{media.width}x{media.height}",
                "aspect": media.width / media.height,
            }
        if media.focus is not None:
            meta["focus"] = {"x": media.focus[0], "y": media.focus[1]}
        return {
            "id": media.id,
            "type": media.kind,
            "url": f"{base}/original/{media.sha256[:16]}.{extension}" if media.processed else None,
            "preview_url": f"{base}/small/{media.sha256[:16]}.png",
            "remote_url": None,
            "preview_remote_url": None,
            "text_url": None,
            "meta": meta,
            "description": media.description,
            "blurhash": None,
        }
