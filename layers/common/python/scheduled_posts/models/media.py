"""Media uploads: the resource (:class:`Media`), its states and the API's shapes.

An upload is created ``pending`` by ``POST /v1/media`` (the client then sends the bytes straight
to S3 with a pre-signed POST policy), probed by ``POST /v1/media/{id}/complete`` and becomes
``ready`` or ``rejected`` (with a :class:`RejectionReason`). Only a ``ready`` upload is published
(:meth:`Media.published`). Items live in the posts table at ``pk = OWNER#<sub>``,
``sk = MEDIA#<media_id>``; the bytes at S3 key ``media/<media_id>``.

Kinds (``MEDIA_KINDS``): JPEG, PNG, GIF, WebP images and MP4 video; one entry per kind is the
only place a new kind is added (the API's enum, the probe and the docs read it).
"""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt, StrictStr

from scheduled_posts.clock import epoch_seconds, format_instant
from scheduled_posts.platforms.base import PublishedMedia

#: Largest upload, in bytes: 100 MiB, above Mastodon's default video limit (99 MiB,
#: ``configuration.media_attachments.video_size_limit`` of ``/api/v2/instance``); each network's
#: own, smaller limits are checked per channel when a post names the upload.
MAX_MEDIA_BYTES = 100 * 1024 * 1024
#: Longest alt text, in code points: the Bluesky app's cap (its lexicon sets none); Mastodon's
#: ``description_limit`` (1,500 by default) is checked per channel when a post names the upload.
MAX_ALT_TEXT_CHARS = 2000
#: How long an upload never attached to a post or recurring schedule lives (its DynamoDB TTL
#: ``expires_at``, set at create and removed at the first attach): one day. The media bucket's
#: lifecycle rule expires such objects (still tagged pending) one day after their creation,
#: rounded up to the next midnight UTC (S3 User Guide, "Lifecycle configuration elements"), so
#: an object lives 24 to 48 hours: an upload is attachable while its item is younger than this,
#: and never after (decision "Uploads never attached expire after a day").
PENDING_LIFETIME = timedelta(days=1)


@dataclass(frozen=True)
class MediaKind:
    """One accepted kind: its ``content_type`` (RFC 6838 media type), the Pillow ``format``
    name that identifies its bytes (``None`` for video, read by its ``ftyp`` box) and whether
    it is a video."""

    content_type: str
    pillow_format: str | None
    is_video: bool = False


#: Every accepted kind, by content type.
MEDIA_KINDS: dict[str, MediaKind] = {
    kind.content_type: kind
    for kind in (
        MediaKind("image/jpeg", "JPEG"),
        MediaKind("image/png", "PNG"),
        MediaKind("image/gif", "GIF"),
        MediaKind("image/webp", "WEBP"),
        MediaKind("video/mp4", None, is_video=True),
    )
}


class MediaStatus(StrEnum):
    """``pending`` (created, bytes not yet probed), ``ready`` (probed, publishable), ``rejected``
    (probed and refused: see :class:`RejectionReason`)."""

    PENDING = "pending"
    READY = "ready"
    REJECTED = "rejected"


class RejectionReason(StrEnum):
    """Why the probe refused an upload (``Media.reason``); :data:`REJECTION_MESSAGES` says it in
    words a creator understands."""

    EMPTY = "empty"
    UNSUPPORTED_TYPE = "unsupported_type"
    TYPE_MISMATCH = "type_mismatch"
    TRUNCATED = "truncated"
    TOO_MANY_PIXELS = "too_many_pixels"
    SIZE_MISMATCH = "size_mismatch"
    SHA256_MISMATCH = "sha256_mismatch"


REJECTION_MESSAGES: dict[RejectionReason, str] = {
    RejectionReason.EMPTY: "the uploaded file is empty",
    RejectionReason.UNSUPPORTED_TYPE: (
        "the file is not a JPEG, PNG, GIF or WebP image or an MP4 video (SVG, HEIC, PDF and "
        "other files are not accepted, whatever their name)"
    ),
    RejectionReason.TYPE_MISMATCH: (
        "the file's bytes are of another type than the content_type you declared: create the "
        "upload again with its real type"
    ),
    RejectionReason.TRUNCATED: "the file is damaged or incomplete (it cannot be decoded)",
    RejectionReason.TOO_MANY_PIXELS: "the image has too many pixels",
    RejectionReason.SIZE_MISMATCH: "the file's size is not the size you declared",
    RejectionReason.SHA256_MISMATCH: "the file's SHA-256 is not the sha256 you declared",
}


def new_media_id(now: datetime) -> str:
    """A UUIDv7 (RFC 9562 section 5.7: 48-bit Unix milliseconds, then random bits): ids sort by
    creation time, so ``MEDIA#<id>`` keys list newest first in reverse order."""
    millis = int(now.timestamp() * 1000) & ((1 << 48) - 1)
    rand = int.from_bytes(secrets.token_bytes(10), "big")
    value = (millis << 80) | (0x7 << 76) | ((rand >> 62) & 0xFFF) << 64
    value |= (0b10 << 62) | (rand & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))


def media_id_floor(instant: datetime) -> str:
    """The smallest UUIDv7 of ``instant``'s millisecond: ids of uploads created at or after it
    sort at or above it."""
    millis = int(instant.timestamp() * 1000) & ((1 << 48) - 1)
    return str(uuid.UUID(int=(millis << 80) | (0x7 << 76) | (0b10 << 62)))


def object_key(media_id: str) -> str:
    """The S3 key of an upload's bytes: ``media/<media_id>``."""
    return f"media/{media_id}"


class Probed(BaseModel):
    """What the probe read from the bytes: the real ``content_type``, ``size`` (bytes),
    ``sha256`` (lowercase hex), ``width``/``height`` (pixels) and ``duration_seconds`` (video);
    ``None`` where the bytes do not tell."""

    model_config = ConfigDict(frozen=True)

    content_type: str
    size: int
    sha256: str
    width: int | None = None
    height: int | None = None
    duration_seconds: float | None = None


class Media(BaseModel):
    """One upload of ``owner``. ``content_type``/``size``/``sha256`` are what the creator
    declared; ``probed`` what the bytes are (``None`` until probed, and for a refusal that could
    not read them). ``version`` counts writes (conditional updates). ``expires_at`` is the epoch
    TTL of an upload never attached (``None`` once a post or recurring schedule names it:
    :func:`logic.media.attach_media`; also ``None`` on uploads made ready before attaching
    existed, whose objects the probe untagged); ``attached_at`` when it was first attached."""

    model_config = ConfigDict(frozen=True)

    media_id: str
    owner: str
    status: MediaStatus
    content_type: str
    size: int
    sha256: str | None = None
    probed: Probed | None = None
    alt_text: str | None = None
    reason: RejectionReason | None = None
    created_at: datetime
    updated_at: datetime
    expires_at: int | None = None
    attached_at: datetime | None = None
    version: int = 1

    @property
    def object_key(self) -> str:
        return object_key(self.media_id)

    def is_expired(self, now: datetime) -> bool:
        """Past its TTL (DynamoDB deletes expired items lazily, so reads filter them)."""
        return self.expires_at is not None and self.expires_at <= epoch_seconds(now)

    def published(self) -> PublishedMedia:
        """The adapters' view: the probed facts and the alt text.

        Raises
        ------
        ValueError
            When the upload is not ``ready``.
        """
        if self.status != MediaStatus.READY or self.probed is None:
            raise ValueError(f"media {self.media_id} is {self.status.value}, not ready")
        return PublishedMedia(
            media_id=self.media_id,
            object_key=self.object_key,
            alt_text=self.alt_text,
            **self.probed.model_dump(),
        )

    @classmethod
    def new(cls, owner: str, request: MediaCreate, now: datetime) -> Media:
        """A ``pending`` upload of ``request`` created at ``now`` (TTL :data:`PENDING_LIFETIME`
        until it is attached)."""
        return cls(
            media_id=new_media_id(now),
            owner=owner,
            status=MediaStatus.PENDING,
            content_type=request.content_type,
            size=request.size,
            sha256=request.sha256,
            alt_text=request.alt_text,
            created_at=now,
            updated_at=now,
            expires_at=epoch_seconds(now + PENDING_LIFETIME),
        )


def _alt_text(value: str) -> str:
    from scheduled_posts.models.api import _clean_text

    return _clean_text(value)


def _known_type(value: str) -> str:
    if value not in MEDIA_KINDS:
        raise ValueError(f"must be one of {', '.join(MEDIA_KINDS)}")
    return value


AltText = Annotated[
    StrictStr,
    Field(max_length=MAX_ALT_TEXT_CHARS, description="What the image shows, for screen readers"),
    AfterValidator(_alt_text),
]
ContentType = Annotated[
    StrictStr,
    Field(
        json_schema_extra={"enum": list(MEDIA_KINDS)},
        description="The file's media type: " + ", ".join(MEDIA_KINDS),
    ),
    AfterValidator(_known_type),
]


class MediaCreate(BaseModel):
    """``POST /v1/media`` body: what the file is (checked again against its bytes)."""

    model_config = ConfigDict(extra="forbid")

    content_type: ContentType
    size: Annotated[StrictInt, Field(ge=1, le=MAX_MEDIA_BYTES, description="Bytes")]
    sha256: Annotated[
        StrictStr | None,
        Field(pattern=r"^[0-9a-fA-F]{64}$", description="SHA-256 of the file, hex"),
        AfterValidator(lambda v: v.lower() if v else v),
    ] = None
    alt_text: AltText | None = None


class MediaPatch(BaseModel):
    """``PATCH /v1/media/{media_id}`` body: ``alt_text`` (``null`` clears it)."""

    model_config = ConfigDict(extra="forbid")

    alt_text: AltText | None


class MediaDeclared(BaseModel):
    """What the creator declared at ``POST /v1/media``."""

    content_type: str
    size: int
    sha256: str | None


class MediaOut(BaseModel):
    """An upload as every media endpoint returns it. ``content_type``, ``size``, ``sha256``,
    ``width``, ``height`` and ``duration_seconds`` are read from the bytes (``null`` until
    probed); ``declared`` is what the creator said; ``reason``/``reason_detail`` explain a
    rejection; ``expires_at``: when an upload no post or recurring schedule has named yet (any
    status) is forgotten, its item and its bytes; ``null`` once one names it."""

    media_id: str
    status: MediaStatus
    content_type: str | None
    size: int | None
    sha256: str | None
    width: int | None
    height: int | None
    duration_seconds: float | None
    alt_text: str | None
    declared: MediaDeclared
    reason: RejectionReason | None
    reason_detail: str | None
    created_at: str
    updated_at: str
    expires_at: str | None

    @classmethod
    def of(cls, media: Media) -> MediaOut:
        probed: dict[str, Any] = media.probed.model_dump() if media.probed else {}
        expires = (
            format_instant(datetime.fromtimestamp(media.expires_at, tz=UTC))
            if media.expires_at is not None
            else None
        )
        return cls(
            media_id=media.media_id,
            status=media.status,
            content_type=probed.get("content_type"),
            size=probed.get("size"),
            sha256=probed.get("sha256"),
            width=probed.get("width"),
            height=probed.get("height"),
            duration_seconds=probed.get("duration_seconds"),
            alt_text=media.alt_text,
            declared=MediaDeclared(
                content_type=media.content_type, size=media.size, sha256=media.sha256
            ),
            reason=media.reason,
            reason_detail=REJECTION_MESSAGES[media.reason] if media.reason else None,
            created_at=format_instant(media.created_at),
            updated_at=format_instant(media.updated_at),
            expires_at=expires,
        )


class UploadForm(BaseModel):
    """How to send the bytes: a ``multipart/form-data`` POST to ``url`` with every one of
    ``fields`` and then the file as field ``file`` (S3 "Browser-based uploads using POST");
    valid until ``expires_at``."""

    url: str
    fields: dict[str, str]
    expires_at: str


class MediaCreated(MediaOut):
    """``POST /v1/media`` 201 body: the pending upload and its ``upload`` form."""

    upload: UploadForm


class MediaList(BaseModel):
    """``GET /v1/media`` body: a page of the caller's uploads, newest first; only
    ``next_cursor: null`` ends the list."""

    items: list[MediaOut]
    next_cursor: str | None = None


__all__ = [
    "MAX_ALT_TEXT_CHARS",
    "MAX_MEDIA_BYTES",
    "MEDIA_KINDS",
    "Media",
    "MediaCreate",
    "MediaCreated",
    "MediaList",
    "MediaOut",
    "MediaPatch",
    "MediaStatus",
    "Probed",
    "RejectionReason",
    "UploadForm",
]
