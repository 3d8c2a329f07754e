"""A Bluesky post's media: the blobs the adapter (``platforms/bluesky.py``) uploads and the
record's ``embed`` built from them (decision "Publishing media to Bluesky and webhooks").

Each item of ``DeliveryRequest.media`` is read from the media bucket
(:class:`~scheduled_posts.platforms.base.MediaObjects`), checked against its probed size and
SHA-256 (bytes that changed since the probe are never published), and uploaded with
``com.atproto.repo.uploadBlob`` before the ``putRecord``, on every attempt that writes: a
blob's CID is the hash of its bytes, so the same bytes give the same blob ref and a retry
rebuilds a byte-identical record (which the PDS answers with 200 and no write). The embed:

- images (at most :data:`MAX_IMAGES`, each ``image/*`` of at most :data:`MAX_IMAGE_BYTES`:
  lexicon ``app.bsky.embed.images``)::

      {"$type": "app.bsky.embed.images",
       "images": [{"image": <blob ref>, "alt": "<alt text or ''>",
                   "aspectRatio": {"width": w, "height": h}}, ...]}

- one video (``video/mp4``: lexicon ``app.bsky.embed.video``)::

      {"$type": "app.bsky.embed.video", "video": <blob ref>, "alt": "...",
       "aspectRatio": {"width": w, "height": h}}

``alt`` is required on an image (empty allowed) and optional on a video (sent when given);
``aspectRatio`` only when both dimensions are known (lexicon ``app.bsky.embed.defs``: integers
of at least 1). Lexicons: https://github.com/bluesky-social/atproto/tree/main/lexicons/app/bsky/embed
(checked in the reference PDS 0.5.35's copy). The blob ref kept is rebuilt from the checked
fields of the answer (decision "Network answers are bounded before they are stored").
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.platforms.base import DeliveryRequest, MediaObjects, PublishedMedia
from scheduled_posts.platforms.http import HttpAnswer, RequestBodyTooLargeError
from scheduled_posts.platforms.network_adapter import answer_error

if TYPE_CHECKING:
    from scheduled_posts.platforms.bluesky_client import BlueskyClient, BlueskySession

IMAGES = "app.bsky.embed.images"
VIDEO = "app.bsky.embed.video"
#: ``app.bsky.embed.images``: ``images`` ``maxLength: 4``.
MAX_IMAGES = 4
#: ``app.bsky.embed.images#image``: ``image`` blob ``maxSize: 2000000`` (bytes).
MAX_IMAGE_BYTES = 2_000_000
#: ``app.bsky.embed.video``: ``video`` blob ``accept: ["video/mp4"]``.
VIDEO_TYPE = "video/mp4"
#: A CID as the PDS writes it: multibase base32 (``b`` then ``a-z2-7``); a CIDv1 of a SHA-256
#: is 59 characters, 128 leaves room for other hashes.
_CID = re.compile(r"b[a-z2-7]{8,127}")
_MIME = re.compile(r"[a-z0-9.+-]{1,64}/[a-z0-9.+-]{1,64}")


class MediaRefusedError(Exception):
    """The post's media cannot be published: the network refused a blob (``http_status`` set,
    the message quoting it), the bytes are not the probed upload's, or the media break the
    lexicon's rules. Retrying cannot help: the delivery fails."""

    def __init__(self, message: str, *, http_status: int | None = None) -> None:
        super().__init__(message)
        self.http_status = http_status


def media_violation(request: DeliveryRequest) -> str | None:
    """Why the request's media cannot be one Bluesky post, or ``None``: every one of its
    ``media_ids`` must be a ready upload (never the text alone: a post made before uploads
    existed has opaque ids only), and the lexicons' rules (module docstring) hold: at most 4
    images or one ``video/mp4``, never both, each image ``image/*`` of at most 2,000,000
    bytes."""
    media = request.media
    if len(media) < len(request.media_ids):
        return (
            f"media_unresolved: the post has {len(request.media_ids)} media_ids but"
            f" {len(media)} ready uploads; it is not published without them"
        )
    videos = [m for m in media if m.is_video]
    if videos and len(media) > 1:
        return f"media_refused: a Bluesky post takes one video alone, this one has {len(media)}"
    if videos and videos[0].content_type != VIDEO_TYPE:
        return f"media_refused: a Bluesky video is {VIDEO_TYPE}, not {videos[0].content_type}"
    if len(media) > MAX_IMAGES:
        return f"media_refused: a Bluesky post takes at most {MAX_IMAGES} images, not {len(media)}"
    for item in media:
        if item.is_video:
            continue
        if not item.content_type.startswith("image/"):
            return f"media_refused: media {item.media_id} is {item.content_type}, not an image"
        if item.size > MAX_IMAGE_BYTES:
            return (
                f"media_refused: image {item.media_id} is {item.size} bytes,"
                f" the limit is {MAX_IMAGE_BYTES}"
            )
    return None


def read_checked(objects: MediaObjects | None, media: Sequence[PublishedMedia]) -> list[bytes]:
    """The bytes of each item of ``media``, in order, each checked against its probed ``size``
    and ``sha256``.

    Raises
    ------
    MediaRefusedError
        When there is no media store (the worker was built without ``media=``) or an object's
        bytes are not the probed upload's.
    RetryableDeliveryError
        From ``objects.read`` when the bucket cannot answer now.
    """
    if not media:
        return []
    if objects is None:
        raise MediaRefusedError("media_unavailable: the adapter was built without a media store")
    found = []
    for item in media:
        data = objects.read(item)
        if len(data) != item.size or hashlib.sha256(data).hexdigest() != item.sha256:
            raise MediaRefusedError(
                f"media_changed: the stored bytes of media {item.media_id} are not the probed"
                f" upload ({len(data)} bytes, the probe saw {item.size} and its SHA-256)"
            )
        found.append(data)
    return found


def blob_ref(answer: object) -> dict[str, Any] | None:
    """The blob ref of an ``uploadBlob`` answer's JSON (``{"blob": {"$type": "blob", "ref":
    {"$link": <cid>}, "mimeType", "size"}}``), rebuilt from its checked fields; ``None`` when
    the answer holds no well-formed one."""
    blob = answer.get("blob") if isinstance(answer, dict) else None
    if not isinstance(blob, dict) or blob.get("$type") != "blob":
        return None
    ref, mime, size = blob.get("ref"), blob.get("mimeType"), blob.get("size")
    cid = ref.get("$link") if isinstance(ref, dict) else None
    if not isinstance(cid, str) or not _CID.fullmatch(cid):
        return None
    if not isinstance(mime, str) or not _MIME.fullmatch(mime):
        return None
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        return None
    return {"$type": "blob", "ref": {"$link": cid}, "mimeType": mime, "size": size}


def _aspect_ratio(item: PublishedMedia) -> dict[str, Any]:
    if item.width and item.height and item.width >= 1 and item.height >= 1:
        return {"aspectRatio": {"width": item.width, "height": item.height}}
    return {}


def embed_of(media: Sequence[PublishedMedia], blobs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The record's ``embed`` of ``media`` uploaded as ``blobs`` (same order; module
    docstring)."""
    if len(media) == 1 and media[0].is_video:
        item = media[0]
        alt = {"alt": item.alt_text} if item.alt_text else {}
        return {"$type": VIDEO, "video": blobs[0], **alt, **_aspect_ratio(item)}
    images = [
        {"image": blob, "alt": item.alt_text or "", **_aspect_ratio(item)}
        for item, blob in zip(media, blobs, strict=True)
    ]
    return {"$type": IMAGES, "images": images}


def embedded_cids(value: object) -> tuple[str, ...]:
    """The blob CIDs of a post record's ``value`` (read back with ``getRecord``), in order;
    empty without an images or video embed, and only well-formed CIDs."""
    embed = value.get("embed") if isinstance(value, dict) else None
    if not isinstance(embed, dict):
        return ()
    if embed.get("$type") == VIDEO:
        blobs = [embed.get("video")]
    elif embed.get("$type") == IMAGES and isinstance(embed.get("images"), list):
        blobs = [i.get("image") for i in embed["images"][:MAX_IMAGES] if isinstance(i, dict)]
    else:
        return ()
    refs = [blob_ref({"blob": blob}) for blob in blobs]
    return tuple(ref["ref"]["$link"] for ref in refs if ref is not None)


#: ``call(send) -> answer``: the adapter's session handling around one XRPC request (renewing
#: an expired token; raising on 401/403, 429 and 5xx).
SessionCall = Callable[[Callable[["BlueskySession"], HttpAnswer]], HttpAnswer]


def upload_blobs(
    call: SessionCall,
    client: BlueskyClient,
    service_url: str,
    media: Sequence[PublishedMedia],
    data: Sequence[bytes],
) -> list[dict[str, Any]]:
    """``uploadBlob`` of each item's ``data`` in order, through ``call``: the blob refs
    (:func:`blob_ref`).

    Raises
    ------
    MediaRefusedError
        When the PDS refuses a blob (413 too large, 400): its words, ``http_<status>`` first;
        or the blob is over the outbound body bound (``http.MAX_REQUEST_BODY_BYTES``).
    RetryableDeliveryError
        When a 200 holds no well-formed blob ref (and from ``call``: 429, 5xx).
    """
    blobs = []
    for item, payload in zip(media, data, strict=True):

        def send(
            session: BlueskySession, item: PublishedMedia = item, payload: bytes = payload
        ) -> HttpAnswer:
            return client.upload_blob(service_url, session, payload, item.content_type)

        try:
            answer = call(send)
        except RequestBodyTooLargeError as exc:
            raise MediaRefusedError(f"media_refused: media {item.media_id} is {exc}") from exc
        if answer.status != 200:
            what = f"Bluesky refused media {item.media_id}"
            raise MediaRefusedError(answer_error(answer, what), http_status=answer.status)
        ref = blob_ref(answer.json_object())
        if ref is None:
            raise RetryableDeliveryError(
                "bluesky answered uploadBlob without a blob ref", http_status=answer.status
            )
        blobs.append(ref)
    return blobs
