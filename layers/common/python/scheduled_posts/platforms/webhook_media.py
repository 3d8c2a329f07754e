"""The ``media`` list of a webhook's signed body (``platforms/webhook.py``): one entry per item of
``DeliveryRequest.media``, in the post's order, with a pre-signed ``GET`` URL of the object
(decision "Publishing media to Bluesky and webhooks")::

    "media": [{"media_id", "content_type", "size", "sha256", "width", "height",
               "duration_seconds", "alt_text", "url", "url_expires_at"}, ...]

``content_type``, ``size`` (bytes), ``sha256`` (lowercase hex), ``width``/``height`` (pixels)
and ``duration_seconds`` are the probe's facts, read from the bytes (``null`` when unknown);
``alt_text`` the creator's (``null``: none); ``url`` valid :data:`MEDIA_URL_EXPIRES_SECONDS`
from the attempt, until ``url_expires_at`` (``YYYY-MM-DDTHH:MM:SS.mmmZ``). The list is inside
the body, so the signature covers every URL and hash: a receiver checks the downloaded bytes
against ``sha256``. A post without resolved media (none, or ``media_ids`` made before uploads
existed) has no ``media`` member: the body is the one receivers know, ``media_ids`` included.

A thread's replies carry theirs the same way (:func:`part_media_entries`): each entry of the
body's ``parts`` with resolved media gets its own ``media`` list of the same entries (links
from the same attempt, the same ``url_expires_at``); a part without media has none.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from scheduled_posts.clock import format_instant
from scheduled_posts.platforms.base import DeliveryRequest, MediaObjects, PublishedMedia

#: Validity of a media link in a webhook body: one hour. Long enough for a receiver that queues
#: the webhook and fetches the file in a background job; short enough that a body kept in a
#: receiver's logs stops opening private media soon. Every retry is signed afresh with fresh
#: links, so a retry never carries an expired one; and an S3 URL pre-signed with the worker's
#: temporary role credentials dies with them anyway (at most a few hours), so a longer validity
#: would not be honoured (https://docs.aws.amazon.com/AmazonS3/latest/userguide/using-presigned-url.html).
MEDIA_URL_EXPIRES_SECONDS = 3600


class MediaStoreMissingError(Exception):
    """The post has media but the adapter was built without a media store (``media=``)."""


def media_entries(
    request: DeliveryRequest, objects: MediaObjects | None, *, now: datetime
) -> list[dict[str, Any]] | None:
    """The body's ``media`` list of ``request`` at ``now`` (module docstring), or ``None`` when
    the request has no resolved media.

    Raises
    ------
    MediaStoreMissingError
        When the request has media and ``objects`` is ``None``.
    """
    return _entries(request.media, objects, now=now)


def part_media_entries(
    request: DeliveryRequest, objects: MediaObjects | None, *, now: datetime
) -> list[list[dict[str, Any]] | None]:
    """The ``media`` list of each of ``request``'s thread replies (``parts``, in order), as
    :func:`media_entries` builds the post's: ``None`` for a part without resolved media.

    Raises
    ------
    MediaStoreMissingError
        When a part has media and ``objects`` is ``None``.
    """
    return [_entries(part.media, objects, now=now) for part in request.parts]


def _entries(
    items: Sequence[PublishedMedia], objects: MediaObjects | None, *, now: datetime
) -> list[dict[str, Any]] | None:
    if not items:
        return None
    if objects is None:
        raise MediaStoreMissingError("media_unavailable: the adapter has no media store")
    expires_at = format_instant(now + timedelta(seconds=MEDIA_URL_EXPIRES_SECONDS))
    return [
        {
            "media_id": item.media_id,
            "content_type": item.content_type,
            "size": item.size,
            "sha256": item.sha256,
            "width": item.width,
            "height": item.height,
            "duration_seconds": item.duration_seconds,
            "alt_text": item.alt_text,
            "url": objects.download_url(item, expires_seconds=MEDIA_URL_EXPIRES_SECONDS),
            "url_expires_at": expires_at,
        }
        for item in items
    ]
