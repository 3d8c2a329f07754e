"""The record of one Bluesky post (``app.bsky.feed.post``: text, createdAt, facets, langs,
tags), built the same on every attempt of a delivery (``platforms/bluesky.py``)."""

from __future__ import annotations

from typing import Any

from scheduled_posts.platforms.atproto_text import MentionResolver, detect_facets
from scheduled_posts.platforms.base import DeliveryRequest
from scheduled_posts.platforms.bluesky_client import (
    POST_COLLECTION,
    BlueskyAccess,
    BlueskyClient,
    created_at,
)

#: Most distinct handles one attempt resolves; later mentions stay plain text.
MAX_RESOLVED_HANDLES = 10
#: Share of the attempt's deadline that resolving mentions may use (the rest is for the
#: session and the write).
MENTION_BUDGET_SHARE = 0.5


def build_record(
    client: BlueskyClient, access: BlueskyAccess, request: DeliveryRequest
) -> dict[str, Any]:
    """The ``app.bsky.feed.post`` record of ``request`` (a thread's part: without its
    ``reply``): text, ``createdAt`` = ``publish_at``, the mention and link facets (mentions
    resolved within :data:`MENTION_BUDGET_SHARE` of the attempt's deadline), ``langs`` and
    ``tags``."""
    record: dict[str, Any] = {
        "$type": POST_COLLECTION,
        "text": request.content,
        "createdAt": created_at(request.publish_at),
    }
    deadline = client.http.deadline
    assert deadline is not None  # the attempt's client (deliver)
    budget = deadline.part(deadline.seconds * MENTION_BUDGET_SHARE)
    resolving = BlueskyClient(client.http.within(budget))
    mentions = MentionResolver(
        lambda handle: resolving.resolve_handle(access.service_url, handle),
        max_handles=MAX_RESOLVED_HANDLES,
        budget=budget,
    )
    facets = detect_facets(request.content, mentions)
    if facets:
        record["facets"] = facets
    langs = request.options.langs or ([request.language] if request.language else [])
    if langs:
        record["langs"] = list(langs)
    if request.options.tags:  # the variant's extra hashtags (lexicon ``tags``)
        record["tags"] = list(request.options.tags)
    return record
