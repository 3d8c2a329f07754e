"""Scheduled posts: create, read, list, edit, cancel, attempt history (issue 2).

Every function receives its collaborators in a :class:`PostDeps` (repositories, settings, clock,
promoter), so tests swap any of them. Rules:

* ``publish_at`` is not in the past and at most ``MAX_SCHEDULE_AHEAD_DAYS`` ahead, to the
  second; channels must be the caller's. Failures are 422 (:class:`ValidationFailedError`).
* Another user's post is a 404, like a missing or expired one.
* Edit and cancel apply only to a ``scheduled`` post (409 otherwise); a stale ``If-Match`` is a
  412 (RFC 9110 section 13.1.1), and 409 wins over 412.
* After a create or edit whose ``publish_at <= now + LOOKAHEAD_SECONDS`` the post is promoted at
  once (best effort): a promotion failure is logged and the request still succeeds, since the
  late marker makes the next sweep send it.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from scheduled_posts import keys
from scheduled_posts.clock import Clock, epoch_seconds, format_instant
from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.data.counters import release_pending_best_effort
from scheduled_posts.data.media import MediaRepository
from scheduled_posts.data.posts import PostRepository
from scheduled_posts.errors import (
    PostNotFoundError,
    StateConflictError,
    ValidationFailedError,
    VersionConflictError,
)
from scheduled_posts.lifecycle import outcomes, reach
from scheduled_posts.lifecycle import waiting as waiting_arrows
from scheduled_posts.lifecycle.states import TERMINAL_DELIVERY_STATUSES
from scheduled_posts.logic import link_cards
from scheduled_posts.logic.cursor import CursorCodec, query_fingerprint
from scheduled_posts.logic.media import MediaDeps
from scheduled_posts.logic.media_attach import attach_media
from scheduled_posts.logic.network_rules import channel_errors, patched_channel_errors
from scheduled_posts.logic.posting_queue import (
    NEXT_FREE_SLOT,
    QueueDeps,
    release_slot,
    reserve_next_free,
)
from scheduled_posts.logic.promotion import promote_if_due
from scheduled_posts.logic.waiting_edit import edit_waiting_post
from scheduled_posts.models.api import PostCreate, PostPatch, etag_for, parse_rfc3339
from scheduled_posts.models.messages import DispatchMessage, DueEntry
from scheduled_posts.models.post import Attempt, Delivery, DeliveryStatus, Post, PostStatus
from scheduled_posts.observability import logger, tracer
from scheduled_posts.settings import Settings

#: Sends a due entry to the dispatch queue now (``logic.promotion.make_promoter``).
Promoter = Callable[[DueEntry], None]
#: Tries of an edit or cancel without ``If-Match`` that lost a race to another edit.
WRITE_ATTEMPTS = 3
_ONE_MS = timedelta(milliseconds=1)
#: ``entity-tag = [ W/ ] DQUOTE *etagc DQUOTE`` (RFC 9110 section 8.8.3).
_ENTITY_TAG = r'(?:W/)?"[\x21\x23-\x7e\x80-\xff]*"'
#: ``If-Match = "*" / #entity-tag``: a comma list, empty elements allowed (section 5.6.1).
_IF_MATCH_LIST = re.compile(rf"[ \t]*(?:{_ENTITY_TAG})?(?:[ \t]*,[ \t]*(?:{_ENTITY_TAG})?)*[ \t]*")


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


@dataclass(frozen=True)
class PostListPage:
    """A page of posts; ``next_cursor`` is ``None`` only at the end of the list."""

    posts: list[Post]
    next_cursor: str | None


#: Namespace of :func:`idempotent_schedule_id` (a fixed random UUID; never change it).
_IDEMPOTENT_CREATE_NAMESPACE = uuid.UUID("6f1c2b1e-4a7d-4c55-9a62-3f0e8d9b7a10")


def parse_if_match(value: str | None) -> frozenset[str] | None:
    """The entity tags an ``If-Match`` header names: ``None`` when absent or ``*``.

    If-Match uses the strong comparison (RFC 9110 section 13.1.1): a weak tag (``W/"1"``)
    never matches, and a tag matches only when it is exactly the quoted version (``"1"``, not
    ``"01"``). A list matches when any member does; an empty value names nothing, so the
    request fails with 412.

    Raises
    ------
    ValidationFailedError
        The value is neither ``*`` nor a list of quoted entity tags (``1`` instead of ``"1"``):
        422, since no version could ever match it (RFC 9110 sections 13.1.1 and 8.8.3).
    """
    if value is None or value.strip(" \t") == "*":
        return None
    if _IF_MATCH_LIST.fullmatch(value) is None:
        raise ValidationFailedError(
            "the request is not valid",
            [
                _error(
                    ["header", "If-Match"],
                    'must be * or a list of quoted entity tags, such as "1" (with the quotes)',
                    "if_match_malformed",
                )
            ],
        )
    return frozenset(re.findall(_ENTITY_TAG, value))


def etag(post: Post) -> str:
    """The ``ETag`` of a post (:func:`scheduled_posts.models.api.etag_for`)."""
    return etag_for(post)


def _late_horizon(now: datetime, settings: Settings) -> datetime:
    return now + timedelta(seconds=settings.LOOKAHEAD_SECONDS + keys.LATE_MARGIN_SECONDS)


def needs_marker(publish_at: datetime, now: datetime, settings: Settings) -> bool:
    return publish_at <= _late_horizon(now, settings)


def _error(loc: list[Any], msg: str, kind: str) -> dict[str, Any]:
    return {"loc": loc, "msg": msg, "type": kind}


def publish_at_errors(publish_at: datetime, now: datetime, settings: Settings) -> list[dict]:
    """The create's ``publish_at`` problems (past; beyond ``MAX_SCHEDULE_AHEAD_DAYS``)."""
    loc = ["body", "publish_at"]
    if publish_at < now:
        return [_error(loc, "must not be in the past", "publish_at_past")]
    horizon = now + timedelta(days=settings.MAX_SCHEDULE_AHEAD_DAYS)
    if publish_at > horizon:
        return [
            _error(
                loc,
                f"must be at most {settings.MAX_SCHEDULE_AHEAD_DAYS} days ahead "
                "(MAX_SCHEDULE_AHEAD_DAYS)",
                "publish_at_too_far",
            )
        ]
    return []


def raise_if(errors: list[dict]) -> None:
    if errors:
        raise ValidationFailedError("the request is not valid", errors)


def promote(post: Post, now: datetime, deps: PostDeps) -> None:
    promote_if_due(post, now, promoter=deps.promoter, settings=deps.settings)


def _kept_changing() -> StateConflictError:
    """409 for a write without ``If-Match`` that lost :data:`WRITE_ATTEMPTS` races: 412 would
    claim a precondition the client never sent failed (RFC 9110 section 15.5.13)."""
    return StateConflictError("the post kept changing during this request; try again")


def _owned(owner: str, schedule_id: str, deps: PostDeps, now: datetime) -> Post:
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
    raise_if(
        ([] if queued else publish_at_errors(publish_at, now, settings))  # type: ignore[arg-type]
        + channel_errors(
            owner,
            request.channel_ids,
            channels=deps.channels,
            content=request.content,
            media_ids=request.media_ids,
            media=deps.media,
            variants=request.variants,
            parts=request.parts or [],
            first_comment=request.first_comment,
        )
    )
    attach_media(owner, request.media_ids, deps=deps.uploads)  # before the post's write
    schedule_id = schedule_id or str(uuid.uuid4())
    queue_slot = reserve_slot(request, owner, schedule_id, deps) if queued else None
    post = Post(
        schedule_id=schedule_id,
        owner=owner,
        status=PostStatus.SCHEDULED,
        content=request.content,
        media_ids=list(request.media_ids),
        language=request.language,
        publish_at=queue_slot or publish_at,
        channel_ids=list(request.channel_ids),
        variants=dict(request.variants),
        parts=list(request.parts or []),
        first_comment=request.first_comment,
        deliveries={cid: Delivery(channel_id=cid) for cid in request.channel_ids},
        version=1,
        created_at=now,
        updated_at=now,
        shard=keys.shard_for(schedule_id, settings.WRITE_SHARD_COUNT),
        queue_slot=queue_slot,
    )
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


def reserve_slot(request: PostCreate, owner: str, schedule_id: str, deps: PostDeps) -> datetime:
    """The queue slot reserved for the post (``"publish_at": "next_free_slot"``)."""
    if deps.queue is None:
        raise ValidationFailedError(
            "next_free_slot is not available here",
            [_error(["body", "publish_at"], "posting queues are not enabled", "queue_disabled")],
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


@tracer.capture_method
def get_post(owner: str, schedule_id: str, *, deps: PostDeps) -> Post:
    """The caller's post.

    Raises
    ------
    PostNotFoundError
        Missing, another user's, or past its retention.
    """
    return _owned(owner, schedule_id, deps, deps.clock.now())


@tracer.capture_method
def list_attempts(owner: str, schedule_id: str, *, deps: PostDeps) -> list[Attempt]:
    """The delivery attempts of the caller's post, in start order.

    Raises
    ------
    PostNotFoundError
        Missing, another user's, or past its retention.
    """
    now = deps.clock.now()
    post = _owned(owner, schedule_id, deps, now)
    return outcomes.merge_attempts(deps.posts.list_attempts(schedule_id, now=now), post)


def _parse_bound(value: str | None, name: str) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_rfc3339(value)
    except (ValueError, OverflowError) as exc:
        raise ValidationFailedError(
            "the request is not valid",
            [_error(["query", name], str(exc), "datetime_from_rfc3339")],
        ) from exc


@tracer.capture_method
def list_posts(
    owner: str,
    *,
    status: PostStatus | None,
    from_: str | None,
    to: str | None,
    limit: int,
    cursor: str | None,
    codec: CursorCodec,
    deps: PostDeps,
    channel_id: str | None = None,
    series_id: str | None = None,
) -> PostListPage:
    """The caller's posts ordered by ``(publish_at, schedule_id)``; ``from_`` inclusive, ``to``
    exclusive, at most ``limit`` (1-100) per page; ``channel_id`` keeps the posts that name
    that channel; ``series_id``: only that recurring schedule's occurrences (issue 13; none when
    the series is another user's).

    Raises
    ------
    ValidationFailedError
        ``from``/``to`` are not RFC 3339 instants with an offset, or ``from`` is later than
        ``to`` (both named).
    InvalidCursorError
        The cursor was forged, altered, issued to another user or for other filters.
    """
    start, end = _parse_bound(from_, "from"), _parse_bound(to, "to")
    if start is not None and end is not None and start > end:
        raise ValidationFailedError(
            "from is later than to",
            [
                _error(["query", "from"], "must not be later than to", "from_after_to"),
                _error(["query", "to"], "must not be earlier than from", "from_after_to"),
            ],
        )
    fingerprint = query_fingerprint(
        status.value if status else None,
        format_instant(start) if start else None,
        format_instant(end) if end else None,
        channel_id,
    ) + (f"|series={series_id}" if series_id else "")
    after = codec.decode(cursor, owner=owner, query=fingerprint) if cursor is not None else None
    lower = format_instant(start) if start else None
    upper = None
    if end is not None:
        try:
            upper = f"{format_instant(end - _ONE_MS)}#{keys.SK_HIGH}"
        except OverflowError:
            return PostListPage(posts=[], next_cursor=None)
    if lower is not None and upper is not None and lower > upper:
        return PostListPage(posts=[], next_cursor=None)
    page = deps.posts.query_owner(
        owner,
        lower=lower,
        upper=upper,
        after=after,
        status=status,
        now=deps.clock.now(),
        limit=limit + 1,
        channel_id=channel_id,
        series_id=series_id,
    )
    posts, last_key = page.posts, page.last_key
    if len(posts) > limit:
        posts = posts[:limit]
        last_key = keys.order_key(posts[-1].publish_at, posts[-1].schedule_id)
    next_cursor = (
        codec.encode(owner=owner, last_key=last_key, query=fingerprint) if last_key else None
    )
    return PostListPage(posts=posts, next_cursor=next_cursor)


def _edited(post: Post, patch: PostPatch, *, owner: str, now: datetime, deps: PostDeps) -> Post:
    """``post`` with ``patch`` applied (version + 1, due keys recomputed), after the create
    rules for a new ``publish_at`` and channels.

    Raises
    ------
    ValidationFailedError
        A new ``publish_at``, channel, text, media or variant breaks the create rules.
    """
    errors: list[dict] = []
    if patch.publish_at is not None:
        errors += publish_at_errors(patch.publish_at, now, deps.settings)
    errors += patched_channel_errors(owner, post, patch, channels=deps.channels, media=deps.media)
    raise_if(errors)
    attach_media(owner, patch.media_ids, deps=deps.uploads)  # before the post's write
    changes: dict[str, Any] = {"version": post.version + 1, "updated_at": now}
    for name in ("content", "media_ids", "publish_at", "language", "variants", "parts"):
        value = getattr(patch, name)
        if value is not None:
            changes[name] = value
    if "first_comment" in patch.model_fields_set:
        changes["first_comment"] = patch.first_comment
    if patch.channel_ids is not None:
        changes["channel_ids"] = list(patch.channel_ids)
        changes["deliveries"] = {
            cid: post.deliveries.get(cid) or Delivery(channel_id=cid) for cid in patch.channel_ids
        }
    if post.series_id is not None:  # an occurrence edited by hand leaves its series
        changes["detached"] = True
    if post.queue_slot is not None and (
        patch.channel_ids is not None or patch.publish_at not in (None, post.queue_slot)
    ):
        changes["queue_slot"] = None  # a queued post given a time or channels leaves the queue
    new = post.model_copy(update=changes, deep=True)
    return link_cards.frozen_on_edit(post, new, patch, channels=deps.channels, deps=deps.link_cards)


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


@tracer.capture_method
def update_post(
    owner: str,
    schedule_id: str,
    patch: PostPatch,
    *,
    if_match: str | None,
    deps: PostDeps,
) -> Post:
    """Edit a ``scheduled`` post (version + 1, its due entry moved in the same transaction) or
    one waiting for its next attempt (``logic.waiting_edit``); without ``If-Match`` a lost race
    with another edit is retried (at most :data:`WRITE_ATTEMPTS` times) on the fresh version.

    Raises
    ------
    PostNotFoundError
        Missing, another user's, or past its retention.
    StateConflictError
        The post is neither ``scheduled`` nor waiting (409, before ``If-Match``; a waiting
        one's refusals: ``logic.waiting_edit``), or it kept changing without ``If-Match``.
    VersionConflictError
        ``If-Match`` does not name the current version (412).
    ValidationFailedError
        A new ``publish_at`` or channel breaks the create rules.
    """
    expected = parse_if_match(if_match)
    settings = deps.settings
    for attempt in range(1, WRITE_ATTEMPTS + 1):
        now = deps.clock.now()
        post = _owned(owner, schedule_id, deps, now)
        if post.status == PostStatus.MISSED and patch.publish_at is not None:
            return _reschedule_missed(post, patch, expected=expected, now=now, deps=deps)
        if waiting_arrows.waiting_for_next_attempt(post, now):
            return edit_waiting_post(post, patch, expected, now, deps, edited=_edited)
        if post.status != PostStatus.SCHEDULED:
            raise StateConflictError(
                f"the post is {post.status.value}; only a scheduled post, or one waiting for its"
                " next attempt, can be changed (a missed post can be given a new publish_at)"
            )
        if expected is not None and etag(post) not in expected:
            raise VersionConflictError(
                f"If-Match does not match the current version ({post.version})"
            )
        new = _edited(post, patch, owner=owner, now=now, deps=deps)
        try:
            deps.posts.replace(
                post,
                new,
                old_late=needs_marker(post.publish_at, now, settings),
                new_late=needs_marker(new.publish_at, now, settings),
            )
        except VersionConflictError as exc:
            if expected is not None:
                raise
            if attempt < WRITE_ATTEMPTS:
                continue
            raise _kept_changing() from exc
        logger.info("post edited", extra={"schedule_id": schedule_id, "version": new.version})
        let_go_of_slot(post, new, deps)
        promote(new, now, deps)
        return new
    raise AssertionError("unreachable")  # pragma: no cover


def _reschedule_missed(
    post: Post,
    patch: PostPatch,
    *,
    expected: frozenset[str] | None,
    now: datetime,
    deps: PostDeps,
) -> Post:
    """PATCH of a ``missed`` post with a new future ``publish_at`` (issue 7): ``scheduled``
    again, version + 1, every delivery ``pending``, a new due entry, counted in the pending
    limit; race-safe on ``status = missed AND version = :v`` (409/412 like an edit)."""
    settings = deps.settings
    if expected is not None and etag(post) not in expected:
        raise VersionConflictError(f"If-Match does not match the current version ({post.version})")
    assert patch.publish_at is not None
    errors = publish_at_errors(patch.publish_at, now, settings)
    channel_ids = list(patch.channel_ids) if patch.channel_ids is not None else post.channel_ids
    errors += patched_channel_errors(
        post.owner, post, patch, channels=deps.channels, media=deps.media
    )
    raise_if(errors)
    attach_media(post.owner, patch.media_ids, deps=deps.uploads)  # before the post's write
    changes: dict[str, Any] = {
        "status": PostStatus.SCHEDULED,
        "version": post.version + 1,
        "updated_at": now,
        "publish_at": patch.publish_at,
        "channel_ids": channel_ids,
        "deliveries": {cid: Delivery(channel_id=cid) for cid in channel_ids},
        "status_reason": None,
        "published_at": None,
        "publish_lag_seconds": None,
        "expires_at": None,
        "detached": post.series_id is not None,
    }
    for name in ("content", "media_ids", "language", "variants", "parts"):
        value = getattr(patch, name)
        if value is not None:
            changes[name] = value
    if "first_comment" in patch.model_fields_set:
        changes["first_comment"] = patch.first_comment
    new = post.model_copy(update=changes, deep=True)
    new = link_cards.frozen_on_edit(post, new, patch, channels=deps.channels, deps=deps.link_cards)
    deps.posts.reschedule_missed(
        post,
        new,
        new_late=needs_marker(new.publish_at, now, settings),
        max_pending=settings.MAX_PENDING_POSTS,
    )
    logger.info("missed post rescheduled", extra={"schedule_id": post.schedule_id})
    promote(new, now, deps)
    return new


def _unsafe_to_cancel(post: Post, now: datetime, deps: PostDeps) -> list[Attempt]:
    """The attempts of a waiting ``post`` (rows and item), after checking that no owed channel's
    attempt may have published (``waiting_arrows.owed_may_have_published``).

    Raises
    ------
    StateConflictError
        409 naming the attempt: cancelling would mark its channel ``skipped`` while the network
        may show the post; its next attempt (same Idempotency-Key) settles it.
    """
    attempts = outcomes.merge_attempts(deps.posts.list_attempts(post.schedule_id, now=now), post)
    unsafe = waiting_arrows.owed_may_have_published(post, attempts)
    if unsafe:
        raise StateConflictError(
            "the post waits for its next attempt, but "
            + reach.why_unsafe(unsafe[0])
            + " may have reached the network and published it, so it can no longer be"
            " cancelled: its next attempt, under the same Idempotency-Key, settles it"
        )
    return attempts


@tracer.capture_method
def cancel_post(
    owner: str, schedule_id: str, *, deps: PostDeps, if_match: str | None = None
) -> Post:
    """Cancel a ``scheduled`` post (version + 1, due entry deleted, pending count released), or
    one ``publishing`` that waits for its next attempt (``waiting_arrows.waiting_for_next_attempt``:
    its owed channels ``skipped``, its published ones kept; ``docs/dispatch.md``).

    Cancelling a ``cancelled`` post returns it unchanged (when ``If-Match``, if any, names it).
    ``If-Match`` is checked like an edit's (issue 17): 409 wins over 412, a malformed value
    is 422, and nothing changes on either.

    Raises
    ------
    PostNotFoundError
        Missing, another user's, or past its retention.
    StateConflictError
        The post is in any state other than ``scheduled``, waiting or ``cancelled`` (a worker
        holds it, or took it first), or, without ``If-Match``, it kept changing through every
        attempt (409).
    VersionConflictError
        ``If-Match`` does not name the current version (412).
    ValidationFailedError
        ``If-Match`` is malformed (422).
    """
    expected = parse_if_match(if_match)
    settings = deps.settings
    for attempt in range(1, WRITE_ATTEMPTS + 1):
        now = deps.clock.now()
        post = _owned(owner, schedule_id, deps, now)
        waiting = waiting_arrows.waiting_for_next_attempt(post, now)
        if post.status not in (PostStatus.SCHEDULED, PostStatus.CANCELLED) and not waiting:
            raise StateConflictError(
                f"the post is {post.status.value}; only a scheduled post, or one waiting for"
                " its next attempt, can be cancelled"
            )
        if expected is not None and etag(post) not in expected:
            raise VersionConflictError(
                f"If-Match does not match the current version ({post.version})"
            )
        if post.status == PostStatus.CANCELLED:
            return post
        attempts = _unsafe_to_cancel(post, now, deps) if waiting else []
        deliveries = {  # a waiting post's published channels stay published
            cid: d
            if d.status in TERMINAL_DELIVERY_STATUSES
            else d.model_copy(update={"status": DeliveryStatus.SKIPPED, "next_attempt_at": None})
            for cid, d in post.deliveries.items()
        }
        new = post.model_copy(
            update={
                "status": PostStatus.CANCELLED,
                "version": post.version + 1,
                "updated_at": now,
                "deliveries": deliveries,
                "status_reason": "cancelled by its owner",
                # An occurrence cancelled by hand is detached: its series never revives it.
                "detached": post.series_id is not None,
                "expires_at": epoch_seconds(now + timedelta(days=settings.RETENTION_DAYS)),
                "lease_expires_at": None,
            },
            deep=True,
        )
        try:
            deps.posts.replace(
                post,
                new,
                old_late=needs_marker(post.publish_at, now, settings),
                new_late=False,
                now=now,
                attempts=attempts,
            )
        except VersionConflictError as exc:
            if expected is not None:
                raise
            if attempt < WRITE_ATTEMPTS:
                continue
            raise _kept_changing() from exc
        release_pending_best_effort(deps.posts.posts_table, owner=owner, schedule_id=schedule_id)
        let_go_of_slot(post, new, deps)
        logger.info("post cancelled", extra={"schedule_id": schedule_id})
        return new
    raise AssertionError("unreachable")  # pragma: no cover
