"""Attaching uploads: what keeps an upload once a post or recurring schedule names it
(decision "Uploads never attached expire after a day").

An upload lives one day unless something names it: its item's TTL (``expires_at``, set at
``POST /v1/media``) and its object's pending tag (set by the upload form; the bucket's
lifecycle rule expires tagged objects a day after creation, rounded up to midnight UTC, so
24 to 48 hours) both go at the first attach, which the post and recurring schedule create and
edit paths ask for with one call of :func:`attach_media` before their own write.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from scheduled_posts.errors import MediaNotFoundError, StateConflictError, ValidationFailedError
from scheduled_posts.logic.media import MediaDeps
from scheduled_posts.models.api import ID_PATTERN
from scheduled_posts.models.media import PENDING_LIFETIME, Media, MediaStatus
from scheduled_posts.models.variants import Named, named_media
from scheduled_posts.observability import logger


def attach_named(owner: str, composed: object, *, deps: MediaDeps | None) -> None:
    """:func:`attach_media` of every upload ``composed`` names (:func:`named_media`), each
    error at the upload's own ``loc``."""
    _attach(owner, named_media(composed), deps=deps)


def _expired(loc: list[Any], media_id: str, why: str) -> dict[str, Any]:
    return {
        "loc": loc,
        "msg": f"{media_id!r}: {why}; an upload must be named by a post or recurring schedule "
        f"within {int(PENDING_LIFETIME.total_seconds() // 3600)} hours of its creation "
        "(upload it again)",
        "type": "media_expired",
    }


def attach_media(owner: str, media_ids: Sequence[str] | None, *, deps: MediaDeps | None) -> None:
    """Keep the uploads a post or recurring schedule about to be written names (decision
    "Uploads never attached expire after a day"). Call it after the request's other checks
    (``network_rules.channel_errors``: every id one of ``owner``'s ready uploads) and **before**
    the post's or schedule's write: a crash in between leaves the uploads kept and nothing
    naming them, never a post whose bytes the bucket's lifecycle rule deletes.

    For each ready upload of ``media_ids`` (others are the ready check's to refuse): one never
    attached and past its TTL (:data:`PENDING_LIFETIME` after its create) is refused; one never
    attached has its item kept first (``mark_attached``: no TTL, ``attached_at``); then every
    attached one has its object's pending tag removed (``DeleteObjectTagging``, idempotent,
    sent again on every attach so an attach that stopped between the two writes is completed
    by the next); an object no longer there is refused too. ``deps`` None, or no ids: nothing
    (callers without a bucket). Uploads made ready before attaching existed (no TTL, no
    ``attached_at``: the probe untagged them) are left as they are.

    Raises
    ------
    ValidationFailedError
        422, one error per refused id at ``["body", "media_ids", i]``, type ``media_expired``.
    """
    _attach(
        owner, [(["body", "media_ids", i], m) for i, m in enumerate(media_ids or ())], deps=deps
    )


def _attach(owner: str, named: Sequence[Named], *, deps: MediaDeps | None) -> None:
    if deps is None or not named:
        return
    now = deps.clock.now()
    wanted = [m for _, m in named if re.fullmatch(ID_PATTERN, m)]
    found = deps.media.get_many(owner, list(dict.fromkeys(wanted)))
    ready = {
        i: (loc, found[m])
        for i, (loc, m) in enumerate(named)
        if m in found and found[m].status == MediaStatus.READY
    }
    errors = [
        _expired(loc, media.media_id, "this upload was never attached and has expired")
        for loc, media in ready.values()
        if media.is_expired(now)
    ]
    _refuse(errors)
    kept: dict[str, Media | None] = {}
    for _, media in ready.values():
        if media.media_id not in kept:
            kept[media.media_id] = _kept_item(owner, media, now, deps)
    for loc, media in ready.values():
        item = kept[media.media_id]
        if item is None:
            errors.append(_expired(loc, media.media_id, "this upload has expired"))
        elif item.attached_at is not None and not deps.objects.keep(media.object_key):
            errors.append(_expired(loc, media.media_id, "its file is no longer stored"))
    _refuse(errors)
    logger.info("media attached", extra={"media_ids": sorted(kept)})


def _kept_item(owner: str, media: Media, now: datetime, deps: MediaDeps) -> Media | None:
    """``media`` kept (its TTL removed, ``attached_at`` set) unless it already was; ``None``
    when it expired or went away meanwhile."""
    if media.expires_at is None:
        return media
    try:
        return deps.media.mark_attached(owner, media.media_id, now=now)
    except (StateConflictError, MediaNotFoundError):  # a concurrent attach, or it expired
        fresh = deps.media.get(owner, media.media_id)
        return fresh if fresh is not None and fresh.expires_at is None else None


def _refuse(errors: list[dict[str, Any]]) -> None:
    if errors:
        raise ValidationFailedError("the request is not valid", errors)
