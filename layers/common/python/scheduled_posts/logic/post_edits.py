"""Changing scheduled posts: edit, reschedule a missed one, cancel (``docs/api.md``).

* Edit and cancel apply only to a ``scheduled`` post, or one waiting for its next attempt
  (409 otherwise); a missed post can be given a new ``publish_at``. A stale ``If-Match`` is a
  412 (RFC 9110 section 13.1.1), and 409 wins over 412 (``logic/post_checks.py``).
* After an edit whose ``publish_at <= now + LOOKAHEAD_SECONDS`` the post is promoted at once
  (best effort), as after a create (``logic/posts.py``).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from scheduled_posts.clock import epoch_seconds
from scheduled_posts.data.counters import release_pending_best_effort
from scheduled_posts.errors import StateConflictError, VersionConflictError
from scheduled_posts.lifecycle import outcomes, reach, transitions
from scheduled_posts.lifecycle import waiting as waiting_arrows
from scheduled_posts.logic import link_cards
from scheduled_posts.logic.media_attach import attach_named
from scheduled_posts.logic.network_rules import patched_channel_errors
from scheduled_posts.logic.post_checks import (
    WRITE_ATTEMPTS,
    etag,
    kept_changing,
    needs_marker,
    parse_if_match,
    publish_at_errors,
    raise_if,
    require_version,
)
from scheduled_posts.logic.posts import PostDeps, let_go_of_slot, owned_post, promote
from scheduled_posts.logic.waiting_edit import edit_waiting_post
from scheduled_posts.models.api import PostPatch
from scheduled_posts.models.post import Attempt, Delivery, Post, PostStatus
from scheduled_posts.observability import logger, tracer


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
    attach_named(owner, patch, deps=deps.uploads)  # before the post's write
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
        post = owned_post(owner, schedule_id, deps, now)
        if post.status == PostStatus.MISSED and patch.publish_at is not None:
            return _reschedule_missed(post, patch, expected=expected, now=now, deps=deps)
        if waiting_arrows.waiting_for_next_attempt(post, now):
            return edit_waiting_post(post, patch, expected, now, deps, edited=_edited)
        if post.status != PostStatus.SCHEDULED:
            raise StateConflictError(
                f"the post is {post.status.value}; only a scheduled post, or one waiting for its"
                " next attempt, can be changed (a missed post can be given a new publish_at)"
            )
        require_version(etag(post), post.version, expected)
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
            raise kept_changing() from exc
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
    """PATCH of a ``missed`` post with a new future ``publish_at``: ``scheduled``
    again, version + 1, every delivery ``pending``, a new due entry, counted in the pending
    limit; race-safe on ``status = missed AND version = :v`` (409/412 like an edit)."""
    settings = deps.settings
    require_version(etag(post), post.version, expected)
    assert patch.publish_at is not None
    errors = publish_at_errors(patch.publish_at, now, settings)
    channel_ids = list(patch.channel_ids) if patch.channel_ids is not None else post.channel_ids
    errors += patched_channel_errors(
        post.owner, post, patch, channels=deps.channels, media=deps.media
    )
    raise_if(errors)
    attach_named(post.owner, patch, deps=deps.uploads)  # before the post's write
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
def _cancellable(post: Post, expected: frozenset[str] | None, now: datetime) -> bool:
    """Whether ``post`` waits for its next attempt; raises 409 unless it is ``scheduled``,
    waiting or ``cancelled`` (before ``If-Match``: 409 wins), then 412 for a stale version."""
    waiting = waiting_arrows.waiting_for_next_attempt(post, now)
    if post.status not in (PostStatus.SCHEDULED, PostStatus.CANCELLED) and not waiting:
        raise StateConflictError(
            f"the post is {post.status.value}; only a scheduled post, or one waiting for"
            " its next attempt, can be cancelled"
        )
    require_version(etag(post), post.version, expected)
    return waiting


def cancel_post(
    owner: str, schedule_id: str, *, deps: PostDeps, if_match: str | None = None
) -> Post:
    """Cancel a ``scheduled`` post (version + 1, due entry deleted, pending count released), or
    one ``publishing`` that waits for its next attempt (``waiting_arrows.waiting_for_next_attempt``:
    its owed channels ``skipped``, its published ones kept; ``docs/dispatch.md``).

    Cancelling a ``cancelled`` post returns it unchanged (when ``If-Match``, if any, names it).
    ``If-Match`` as an edit's (decision "ETag"): 409 wins over 412; nothing changes on either.

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
        post = owned_post(owner, schedule_id, deps, now)
        waiting = _cancellable(post, expected, now)
        if post.status == PostStatus.CANCELLED:
            return post
        attempts = _unsafe_to_cancel(post, now, deps) if waiting else []
        expires_at = epoch_seconds(now + timedelta(days=settings.RETENTION_DAYS))
        new = transitions.cancelled(
            post,
            reason="cancelled by its owner",
            detach=post.series_id is not None,
            now=now,
            expires_at=expires_at,
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
            raise kept_changing() from exc
        release_pending_best_effort(deps.posts.posts_table, owner=owner, schedule_id=schedule_id)
        let_go_of_slot(post, new, deps)
        logger.info("post cancelled", extra={"schedule_id": schedule_id})
        return new
    raise AssertionError("unreachable")  # pragma: no cover
