"""Scheduled posts: their collaborators and the create (``docs/api.md``).

Every function receives its collaborators in a :class:`PostDeps` (repositories, settings, clock,
promoter), so tests swap any of them. Reads are in ``logic/post_reads.py``, edit and cancel in
``logic/post_edits.py``, the rules they share in ``logic/post_checks.py``. Rules:

* ``publish_at`` is not in the past and at most ``MAX_SCHEDULE_AHEAD_DAYS`` ahead, to the
  second; channels must be the caller's. Failures are 422 (:class:`ValidationFailedError`).
* Another user's post is a 404, like a missing or expired one.
* After a create or edit whose ``publish_at <= now + LOOKAHEAD_SECONDS`` the post is promoted at
  once (best effort): a promotion failure is logged and the request still succeeds, since the
  late marker makes the next sweep send it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from scheduled_posts import keys
from scheduled_posts.clock import Clock, format_instant
from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.data.media import MediaRepository
from scheduled_posts.data.posts import PostRepository
from scheduled_posts.errors import PostNotFoundError, ValidationFailedError
from scheduled_posts.logic import link_cards
from scheduled_posts.logic.media import MediaDeps
from scheduled_posts.logic.media_attach import attach_named
from scheduled_posts.logic.network_rules import composed_errors
from scheduled_posts.logic.post_checks import field_error, needs_marker, publish_at_errors, raise_if
from scheduled_posts.logic.posting_queue import (
    NEXT_FREE_SLOT,
    QueueDeps,
    release_slot,
    reserve_next_free,
)
from scheduled_posts.logic.promotion import promote_if_due
from scheduled_posts.models.api import PostCreate
from scheduled_posts.models.messages import DispatchMessage, DueEntry
from scheduled_posts.models.post import Delivery, Post, PostStatus
from scheduled_posts.observability import logger, tracer
from scheduled_posts.settings import Settings

#: Sends a due entry to the dispatch queue now (``logic.promotion.make_promoter``).
Promoter = Callable[[DueEntry], None]


@dataclass(frozen=True)
class PostDeps:
    """Collaborators of the post logic."""

    posts: PostRepository
    channels: ChannelRepository
    settings: Settings
    clock: Clock
    promoter: Promoter | None = None
    #: Sends a dispatch message with a delay in seconds (the follow-up of a waiting post's edit).
    dispatcher: Callable[[DispatchMessage, int], None] | None = None
    media: MediaRepository | None = None  # the uploads media_ids name (None: not checked)
    #: Posting schedules and their slots (``next_free_slot``; None: not available).
    queue: QueueDeps | None = None
    uploads: MediaDeps | None = None  # keeps the uploads a write names (None: not kept)
    link_cards: link_cards.LinkCardDeps | None = None  # Bluesky link cards (None: not fetched)


#: Namespace of :func:`idempotent_schedule_id` (a fixed random UUID; never change it).
_IDEMPOTENT_CREATE_NAMESPACE = uuid.UUID("6f1c2b1e-4a7d-4c55-9a62-3f0e8d9b7a10")


def promote(post: Post, now: datetime, deps: PostDeps) -> None:
    promote_if_due(post, now, promoter=deps.promoter, settings=deps.settings)


def owned_post(owner: str, schedule_id: str, deps: PostDeps, now: datetime) -> Post:
    post = deps.posts.get(schedule_id)
    if post is None or post.owner != owner or post.is_expired(now):
        raise PostNotFoundError("scheduled post not found")
    return post


@tracer.capture_method
def create_post(
    request: PostCreate, *, owner: str, deps: PostDeps, schedule_id: str | None = None
) -> Post:
    """Create a ``scheduled`` post (version 1) with one delivery per channel.

    ``schedule_id`` defaults to a fresh UUID; an idempotent create passes one derived from the
    caller's ``Idempotency-Key`` and body (:func:`idempotent_schedule_id`), so that even when
    the idempotency record is lost after the post committed, a retry finds the post instead of
    making a second one. Returns the stored post.

    Writes the post, its due entry, a late marker when due within the lookahead plus
    ``LATE_MARGIN_SECONDS``, and the pending counter in one transaction.

    Raises
    ------
    ValidationFailedError
        ``publish_at`` in the past or too far ahead; a channel not the caller's; a channel's
        effective text or media breaking its rules, a bad variant (``logic/network_rules.py``).
    LimitExceededError
        The caller already has ``MAX_PENDING_POSTS`` posts ``scheduled``.
    """
    settings, now = deps.settings, deps.clock.now()
    queued = request.publish_at == NEXT_FREE_SLOT
    publish_at = now if request.publish_at == "now" else request.publish_at
    raise_if(_refusals(request, owner, deps, publish_at=None if queued else publish_at, now=now))
    attach_named(owner, request, deps=deps.uploads)  # before the post's write
    schedule_id = schedule_id or str(uuid.uuid4())
    queue_slot = reserve_slot(request, owner, schedule_id, deps) if queued else None
    when = queue_slot or publish_at
    assert isinstance(when, datetime)  # "now" and next_free_slot are instants by here
    shard = keys.shard_for(schedule_id, settings.WRITE_SHARD_COUNT)
    post = new_post(request, owner, schedule_id, publish_at=when, now=now, shard=shard)
    post = post.model_copy(update={"queue_slot": queue_slot})
    try:  # the card (a fetch, or a 422 for its thumb) before the write; a refusal frees the slot
        post = link_cards.frozen_on_create(
            post, request, channels=deps.channels, deps=deps.link_cards
        )
        stored = deps.posts.create(
            post,
            late=needs_marker(post.publish_at, now, settings),
            max_pending=settings.MAX_PENDING_POSTS,
        )
    except Exception:
        if queue_slot is not None:
            let_go_of_slot(post, post.model_copy(update={"queue_slot": None}), deps)
        raise
    if stored is not post:  # an earlier try of this very create had committed
        return stored
    logger.info(
        "post scheduled",
        extra={"schedule_id": schedule_id, "publish_at": format_instant(post.publish_at)},
    )
    promote(post, now, deps)
    return post


def new_post(
    request: PostCreate,
    owner: str,
    schedule_id: str,
    *,
    publish_at: datetime,
    now: datetime,
    shard: int,
    status: PostStatus = PostStatus.SCHEDULED,
) -> Post:
    """The new post of ``request`` (a create's, or a draft's with ``status`` ``draft``):
    version 1, one ``pending`` delivery per channel, its write shard ``shard``. Pure."""
    return Post(
        schedule_id=schedule_id,
        owner=owner,
        status=status,
        content=request.content,
        media_ids=list(request.media_ids),
        language=request.language,
        publish_at=publish_at,
        channel_ids=list(request.channel_ids),
        variants=dict(request.variants),
        parts=list(request.parts or []),
        first_comment=request.first_comment,
        deliveries={cid: Delivery(channel_id=cid) for cid in request.channel_ids},
        version=1,
        created_at=now,
        updated_at=now,
        shard=shard,
    )


def _refusals(
    request: PostCreate, owner: str, deps: PostDeps, *, publish_at: Any, now: datetime
) -> list[dict[str, Any]]:
    """The 422 entries of a create: its ``publish_at`` (None: a queued post, none) and its
    channels' rules on every part of each channel's effective post (``logic/network_rules.py``)."""
    when = [] if publish_at is None else publish_at_errors(publish_at, now, deps.settings)
    return when + composed_errors(owner, request, channels=deps.channels, media=deps.media)


def reserve_slot(request: PostCreate, owner: str, schedule_id: str, deps: PostDeps) -> datetime:
    """The queue slot reserved for the post (``"publish_at": "next_free_slot"``)."""
    if deps.queue is None:
        raise ValidationFailedError(
            "next_free_slot is not available here",
            [
                field_error(
                    ["body", "publish_at"], "posting queues are not enabled", "queue_disabled"
                )
            ],
        )
    return reserve_next_free(
        owner, list(request.channel_ids), schedule_id=schedule_id, deps=deps.queue
    )


def idempotent_schedule_id(owner: str, idempotency_key: str, body: Mapping[str, Any]) -> str:
    """A UUIDv5 of (owner, Idempotency-Key, canonical JSON of the parsed body).

    The same request always maps to the same post id: a create whose idempotency record was
    lost (a crash or a failed record write after the post committed) is found again on retry
    rather than duplicated. A different body under the same key gives another id (and, while the
    Powertools record lives, a 422).
    """
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return str(uuid.uuid5(_IDEMPOTENT_CREATE_NAMESPACE, f"{owner}\n{idempotency_key}\n{canonical}"))


def let_go_of_slot(old: Post, new: Post, deps: PostDeps) -> None:
    """Free ``old``'s queue slot once the stored ``new`` no longer holds it (best effort: a
    slot left behind is stale and taken over by the next reservation)."""
    if deps.queue is None or old.queue_slot is None:
        return
    if new.queue_slot == old.queue_slot and new.status != PostStatus.CANCELLED:
        return
    try:
        release_slot(old, deps=deps.queue)
    except Exception:  # the slot is stale now: the next reservation takes it over
        logger.warning("queue slot not released", extra={"schedule_id": old.schedule_id})
