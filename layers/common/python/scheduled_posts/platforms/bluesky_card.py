"""A Bluesky post's link card: ``app.bsky.embed.external`` built from the card frozen on the
post (decision "Bluesky link cards, frozen at scheduling time").

The card travels in ``DeliveryRequest.link_card`` (set only when the channel's effective post
has no media); its thumb, a ready upload in the media bucket, is read, checked against its
probed size and SHA-256 and uploaded with ``uploadBlob`` like an image
(``platforms/bluesky_media.py``), so every attempt builds the byte-identical record::

    {"$type": "app.bsky.embed.external",
     "external": {"uri": "...", "title": "...", "description": "...", "thumb": <blob ref>}}

(lexicon ``app.bsky.embed.external``: ``uri``, ``title``, ``description`` required, ``thumb``
optional, ``image/*`` of at most 1,000,000 bytes; no thumb: the key is absent).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scheduled_posts.platforms.base import DeliveryRequest, PublishedMedia
from scheduled_posts.platforms.bluesky_media import embed_of

EXTERNAL = "app.bsky.embed.external"


def uploads_of(request: DeliveryRequest) -> tuple[PublishedMedia, ...]:
    """The blobs to upload: the request's media, else the card's thumb (if any)."""
    card = request.link_card
    if request.media or card is None or card.thumb is None:
        return request.media
    return (PublishedMedia(**card.thumb.model_dump()),)


def embed_for(
    request: DeliveryRequest, blobs: Sequence[dict[str, Any]]
) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
    """``(embed or None, the media's blob CIDs)``: the media's embed, else the card's, else
    none; ``blobs`` are the answers of :func:`uploads_of`'s uploads, in order."""
    if request.media:
        return embed_of(request.media, blobs), tuple(b["ref"]["$link"] for b in blobs)
    card = request.link_card
    if card is None:
        return None, ()
    external: dict[str, Any] = {"uri": card.uri, "title": card.title}
    external["description"] = card.description
    if blobs:
        external["thumb"] = blobs[0]
    return {"$type": EXTERNAL, "external": external}, ()
