"""Media uploads: create (a pending item and a pre-signed POST form), complete (the probe), read,
list, alt text and delete (decision "Media uploads and the probe").

The API never carries the bytes: the client posts them to S3 with the form
:func:`create_media` returns, then calls ``POST /v1/media/{id}/complete``, which probes the
stored object (``logic/media_probe.py``) and marks the upload ``ready`` or ``rejected``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from scheduled_posts.clock import Clock, format_instant
from scheduled_posts.data.media import MediaRepository
from scheduled_posts.data.posts import PostRepository
from scheduled_posts.errors import MediaNotFoundError, StateConflictError, ValidationFailedError
from scheduled_posts.logic.cursor import MEDIA_QUERY, CursorCodec
from scheduled_posts.logic.media_probe import probe
from scheduled_posts.models.media import (
    PENDING_LIFETIME,
    Media,
    MediaCreate,
    MediaStatus,
    Probed,
    RejectionReason,
    UploadForm,
    media_id_floor,
)
from scheduled_posts.models.post import PostStatus
from scheduled_posts.models.variants import named_media
from scheduled_posts.observability import logger
from scheduled_posts.settings import Settings

#: Posts in these states still publish their media: deleting one of their uploads is a 409.
IN_USE_STATUSES = frozenset({PostStatus.SCHEDULED, PostStatus.PUBLISHING})
#: Pages of 100 of the owner's posts read to look for a post using an upload before a delete
#: is refused as not checkable (a 409 too: never delete what may still be published).
MAX_IN_USE_PAGES = 50


class UploadObjects(Protocol):
    """What the media logic needs of the bucket (``data.media_objects.S3MediaObjects``)."""

    def presign_upload(
        self, key: str, content_type: str, size: int, expires_seconds: int
    ) -> dict[str, Any]: ...

    def head(self, key: str) -> dict[str, Any] | None: ...

    def read_key(self, key: str) -> bytes: ...

    def keep(self, key: str) -> bool: ...

    def delete(self, key: str) -> None: ...


@dataclass(frozen=True)
class MediaDeps:
    """The media logic's collaborators."""

    media: MediaRepository
    objects: UploadObjects
    posts: PostRepository
    settings: Settings
    clock: Clock


def _owned(owner: str, media_id: str, deps: MediaDeps, now: datetime) -> Media:
    media = deps.media.get(owner, media_id)
    if media is None or media.is_expired(now):
        raise MediaNotFoundError("media not found")
    return media


def create_media(request: MediaCreate, *, owner: str, deps: MediaDeps) -> tuple[Media, UploadForm]:
    """A ``pending`` upload and the form that sends its bytes to S3 (valid
    ``MEDIA_UPLOAD_EXPIRES_SECONDS``; the policy admits exactly ``size`` bytes of
    ``content_type``).

    Raises
    ------
    ValidationFailedError
        ``size`` over ``MAX_MEDIA_BYTES`` (422 at ``["body", "size"]``, type ``too_large``).
    StateConflictError
        The owner already has ``MAX_PENDING_MEDIA_PER_USER`` pending uploads (409).
    """
    settings, now = deps.settings, deps.clock.now()
    if request.size > settings.MAX_MEDIA_BYTES:
        raise ValidationFailedError(
            "the file is too large",
            [
                {
                    "loc": ["body", "size"],
                    "msg": f"is {request.size} bytes, the limit is {settings.MAX_MEDIA_BYTES} "
                    "(MAX_MEDIA_BYTES)",
                    "type": "too_large",
                }
            ],
        )
    cap = settings.MAX_PENDING_MEDIA_PER_USER
    pending = deps.media.count_pending(
        owner,
        since_id=media_id_floor(now - PENDING_LIFETIME),
        now_epoch=int(now.timestamp()),
        cap=cap,
    )
    if pending >= cap:
        raise StateConflictError(
            f"you have {pending} uploads waiting for their bytes, the most allowed "
            "(MAX_PENDING_MEDIA_PER_USER): complete or delete one first"
        )
    media = Media.new(owner, request, now)
    deps.media.put_new(media)
    expires = settings.MEDIA_UPLOAD_EXPIRES_SECONDS
    form = deps.objects.presign_upload(media.object_key, media.content_type, media.size, expires)
    logger.info("media created", extra={"media_id": media.media_id, "size": media.size})
    upload = UploadForm(
        url=form["url"],
        fields=dict(form["fields"]),
        expires_at=format_instant(now + timedelta(seconds=expires)),
    )
    return media, upload


def complete_media(owner: str, media_id: str, *, deps: MediaDeps) -> Media:
    """Probe the uploaded bytes: ``HeadObject`` then ``GetObject``, then ``ready`` or
    ``rejected`` with its reason (a rejected upload's object is deleted at once; the write of a
    rejection is the outbox's ``media.rejected``). A second call on a ready or rejected upload
    returns it unchanged. A ready upload keeps its TTL and its object's pending tag until a post
    or recurring schedule names it (:func:`attach_media`).

    An object larger than declared is refused from its ``HeadObject`` size (``size_mismatch``)
    without being read: S3's policy refuses it in AWS, an emulator may not.

    Raises
    ------
    MediaNotFoundError
        Missing, expired or another user's (404).
    StateConflictError
        Nothing was uploaded yet (409).
    """
    now = deps.clock.now()
    media = _owned(owner, media_id, deps, now)
    if media.status != MediaStatus.PENDING:
        return media
    head = deps.objects.head(media.object_key)
    if head is None:
        raise StateConflictError(
            "nothing was uploaded for this media yet: post the file with the upload form "
            "first, then complete"
        )
    outcome_probed, reason = _probe_object(media, int(head.get("ContentLength", 0)), deps)
    try:
        done = deps.media.mark_probed(
            owner, media_id, probed=outcome_probed, reason=reason, now=now
        )
    except StateConflictError:  # a concurrent complete recorded its probe first
        return _owned(owner, media_id, deps, now)
    if reason is not None:
        deps.objects.delete(media.object_key)
    logger.info(
        "media probed",
        extra={"media_id": media_id, "status": done.status.value, "reason": reason},
    )
    return done


def _probe_object(
    media: Media, stored_size: int, deps: MediaDeps
) -> tuple[Probed | None, RejectionReason | None]:
    """The probe of the stored object. Its HeadObject size first: S3's policy refuses another
    size in AWS, an emulator may not, and an object larger than declared is never read."""
    if stored_size != media.size:
        return None, RejectionReason.SIZE_MISMATCH
    outcome = probe(
        deps.objects.read_key(media.object_key),
        declared_type=media.content_type,
        declared_size=media.size,
        declared_sha256=media.sha256,
        max_pixels=deps.settings.MEDIA_MAX_PIXELS,
    )
    return outcome.probed, outcome.reason


def get_media(owner: str, media_id: str, *, deps: MediaDeps) -> Media:
    """The owner's upload.

    Raises
    ------
    MediaNotFoundError
        Missing, expired or another user's (404).
    """
    return _owned(owner, media_id, deps, deps.clock.now())


def list_media(
    owner: str, *, limit: int, cursor: str | None, codec: CursorCodec, deps: MediaDeps
) -> tuple[list[Media], str | None]:
    """A page of the owner's uploads, newest first (expired pending ones left out), and the
    cursor of the next page (``None`` at the end).

    Raises
    ------
    InvalidCursorError
        The cursor was forged, altered or issued to another user or for another list (400).
    """
    after = codec.decode(cursor, owner=owner, query=MEDIA_QUERY) if cursor else None
    now = deps.clock.now()
    page, last = deps.media.list_page(owner, after=after, limit=limit)
    found = [m for m in page if not m.is_expired(now)]
    next_cursor = codec.encode(owner=owner, last_key=last, query=MEDIA_QUERY) if last else None
    return found, next_cursor


#: Tries of an alt-text write that loses its version condition to a concurrent write.
WRITE_ATTEMPTS = 3


def update_alt_text(owner: str, media_id: str, alt_text: str | None, *, deps: MediaDeps) -> Media:
    """Set (``None``: clear) the upload's alt text, in any state. A post already published keeps
    the text it was published with; a post still to publish takes the new one.

    Raises
    ------
    MediaNotFoundError
        Missing, expired or another user's (404).
    StateConflictError
        It kept changing during the request (409).
    """
    for _ in range(WRITE_ATTEMPTS):
        now = deps.clock.now()
        media = _owned(owner, media_id, deps, now)
        try:
            return deps.media.set_alt_text(
                owner, media_id, alt_text, version=media.version, now=now
            )
        except StateConflictError:
            continue
    raise StateConflictError("the media kept changing during this request; try again")


def posts_using(owner: str, media_id: str, *, deps: MediaDeps) -> list[str]:
    """Ids of ``owner``'s ``scheduled`` or ``publishing`` posts that name ``media_id`` (their
    own ``media_ids``, a thread part's or a variant's: ``named_media``), read from the owner's
    post index as ``GET /v1/scheduled-posts`` reads it, from ``MISFIRE_GRACE_SECONDS`` plus a
    day before now on (an older post is no longer due: missed, published or failed), at most
    :data:`MAX_IN_USE_PAGES` pages.

    Raises
    ------
    StateConflictError
        More posts than the bound to look through (409: the delete cannot be shown safe).
    """
    now = deps.clock.now()
    lower = format_instant(now - timedelta(seconds=deps.settings.MISFIRE_GRACE_SECONDS, days=1))
    after: str | None = None
    users: list[str] = []
    for _ in range(MAX_IN_USE_PAGES):
        page = deps.posts.query_owner(
            owner, lower=lower, upper=None, after=after, status=None, now=now, limit=100
        )
        users += [
            p.schedule_id
            for p in page.posts
            if p.status in IN_USE_STATUSES and media_id in {m for _, m in named_media(p)}
        ]
        after = page.last_key
        if after is None:
            return users
    raise StateConflictError("you have too many recent posts to check this media is unused")


def delete_media(owner: str, media_id: str, *, deps: MediaDeps) -> None:
    """Delete the upload's item and object, unless a ``scheduled`` or ``publishing`` post of the
    owner names it.

    A post created at the same moment may name it after the check: the worker resolves a post's
    ``media_ids`` before publishing and fails a delivery whose upload is gone rather than
    publishing without it (decision "Media uploads and the probe").

    Raises
    ------
    MediaNotFoundError
        Missing, expired or another user's (404).
    StateConflictError
        A post still to publish uses it (409, naming the posts).
    """
    media = _owned(owner, media_id, deps, deps.clock.now())
    users = posts_using(owner, media_id, deps=deps)
    if users:
        shown = ", ".join(users[:5]) + (" ..." if len(users) > 5 else "")
        raise StateConflictError(
            f"scheduled posts use this media ({shown}): remove it from them or cancel them first"
        )
    deps.media.delete(owner, media_id)
    deps.objects.delete(media.object_key)
    logger.info("media deleted", extra={"media_id": media_id})
