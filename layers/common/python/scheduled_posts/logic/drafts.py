"""Drafts (decision "Drafts"): a post created without ``publish_at`` is a ``draft``.

A draft is listed (``status=draft`` only), read, edited and deleted like a post, is never
dispatched (it has no due entry: ``data/drafts.py``), and counts against ``MAX_DRAFTS``, not
``MAX_PENDING_POSTS``. A ``PATCH`` with ``publish_at`` (an instant, ``"now"`` or
``"next_free_slot"``) schedules it through the create's own steps (``logic/posts.py``): the
``publish_at`` rules, the channel rules, the queue slot reservation, the pending counter and the
promotion of a post due within the lookahead. Rules:

* Every write of a draft applies the channel rules of a post (channels the caller's, the text
  length and media rules of each channel, the variants): a draft can always be scheduled as
  it is, and a client learns of a bad field when it writes it.
* ``DELETE`` of a draft removes it (a later ``GET`` is a 404) and answers 204; it was never
  scheduled, so there is nothing to cancel and nothing to keep for retention.
* ``If-Match`` applies as to a post's edit (412 on a stale version, 422 when malformed).

The routes call the functions here for every post; what is not a draft goes on to
``logic/post_reads.py`` and ``logic/post_edits.py`` unchanged (a ``"now"`` first becomes this
instant).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from scheduled_posts import keys
from scheduled_posts.clock import format_instant
from scheduled_posts.data.drafts import DraftStore
from scheduled_posts.errors import StateConflictError, ValidationFailedError, VersionConflictError
from scheduled_posts.logic import link_cards, post_checks, post_edits, post_reads, posts
from scheduled_posts.logic.media_attach import attach_named
from scheduled_posts.logic.network_rules import (
    composed_errors,
    patched_channel_errors,
)
from scheduled_posts.logic.posting_queue import NEXT_FREE_SLOT
from scheduled_posts.models.api import PostCreate, PostPatch
from scheduled_posts.models.drafts import PostEditBody
from scheduled_posts.models.post import Delivery, Post, PostStatus
from scheduled_posts.observability import logger, tracer

PostDeps = posts.PostDeps


def _error(loc: list[Any], msg: str, kind: str) -> dict[str, Any]:
    return {"loc": loc, "msg": msg, "type": kind}


def create_post_or_draft(
    request: PostCreate, *, owner: str, deps: PostDeps, schedule_id: str | None = None
) -> Post:
    """A draft when ``request`` has no ``publish_at`` (:func:`create_draft`), else
    :func:`logic.posts.create_post`."""
    if request.publish_at is None:
        return create_draft(request, owner=owner, deps=deps, schedule_id=schedule_id)
    return posts.create_post(request, owner=owner, deps=deps, schedule_id=schedule_id)


@tracer.capture_method
def create_draft(
    request: PostCreate, *, owner: str, deps: PostDeps, schedule_id: str | None = None
) -> Post:
    """Create a ``draft`` (version 1): no ``publish_at``, no due entry, counted in ``DRAFTS``.

    Its stored ``publish_at`` is its creation instant, which only orders the drafts in a list
    (the API shows ``null``). Returns the stored draft.

    Raises
    ------
    ValidationFailedError
        A channel not the caller's; a channel's text or media rules broken; a bad variant.
    LimitExceededError
        The caller already has ``MAX_DRAFTS`` drafts (429).
    """
    now = deps.clock.now()
    post_checks.raise_if(composed_errors(owner, request, channels=deps.channels, media=deps.media))
    attach_named(owner, request, deps=deps.uploads)  # before the post's write
    schedule_id = schedule_id or str(uuid.uuid4())
    shard = keys.shard_for(schedule_id, deps.settings.WRITE_SHARD_COUNT)
    draft = posts.new_post(
        request, owner, schedule_id, publish_at=now, now=now, shard=shard, status=PostStatus.DRAFT
    )
    stored = DraftStore(deps.posts).create(draft, max_drafts=deps.settings.MAX_DRAFTS)
    logger.info("draft created", extra={"schedule_id": schedule_id})
    return stored


def _checked(post: Post, if_match: str | None) -> None:
    expected = post_checks.parse_if_match(if_match)
    post_checks.require_version(post_checks.etag(post), post.version, expected)


def _lost_race(exc: VersionConflictError, if_match: str | None) -> Exception:
    """412 when the client named a version; 409 otherwise (it named no precondition)."""
    if if_match is not None:
        return exc
    return StateConflictError("the draft kept changing during this request; try again")


@tracer.capture_method
def update_post(
    owner: str, schedule_id: str, body: PostEditBody, *, if_match: str | None, deps: PostDeps
) -> Post:
    """``PATCH``: edit a draft, schedule it (a ``publish_at``), or edit any other post
    (:func:`logic.post_edits.update_post`, ``"now"`` made this instant).

    Raises
    ------
    PostNotFoundError
        Missing, another user's, or past its retention.
    ValidationFailedError
        A field breaks the rules (nothing changes); ``next_free_slot`` for a post that is not a
        draft (its queue is for new posts and drafts).
    StateConflictError, VersionConflictError, LimitExceededError
        As :func:`logic.post_edits.update_post`; a draft changed meanwhile; ``MAX_PENDING_POSTS``.
    """
    post = post_reads.get_post(owner, schedule_id, deps=deps)
    if post.status != PostStatus.DRAFT:
        if body.word() == NEXT_FREE_SLOT:
            raise ValidationFailedError(
                "next_free_slot schedules only a new post or a draft",
                [
                    _error(
                        ["body", "publish_at"],
                        "next_free_slot is for a new post or a draft; give an instant",
                        "publish_at_word_not_allowed",
                    )
                ],
            )
        now = deps.clock.now() if body.word() == "now" else None
        patch = body.with_instant(now) if body.word() else body
        return post_edits.update_post(owner, schedule_id, patch, if_match=if_match, deps=deps)
    _checked(post, if_match)
    try:
        if body.publish_at is None:
            return _edit_draft(post, body, deps=deps)
        return _schedule_draft(post, body, deps=deps)
    except VersionConflictError as exc:
        raise _lost_race(exc, if_match) from exc


def _edit_draft(post: Post, patch: PostPatch, *, deps: PostDeps) -> Post:
    """The draft with ``patch`` applied (version + 1), after the channel rules."""
    post_checks.raise_if(
        patched_channel_errors(post.owner, post, patch, channels=deps.channels, media=deps.media)
    )
    attach_named(post.owner, patch, deps=deps.uploads)
    changes: dict[str, Any] = {"version": post.version + 1, "updated_at": deps.clock.now()}
    for name in ("content", "media_ids", "language", "variants", "parts"):
        value = getattr(patch, name)
        if value is not None:
            changes[name] = value
    if "first_comment" in patch.model_fields_set:  # null removes it
        changes["first_comment"] = patch.first_comment
    if patch.channel_ids is not None:
        changes["channel_ids"] = list(patch.channel_ids)
        changes["deliveries"] = {cid: Delivery(channel_id=cid) for cid in patch.channel_ids}
    new = post.model_copy(update=changes, deep=True)
    DraftStore(deps.posts).edit(post, new)
    logger.info("draft edited", extra={"schedule_id": post.schedule_id, "version": new.version})
    return new


def _as_create(post: Post, body: PostEditBody) -> PostCreate:
    """The create request the draft with ``body`` applied would be (its fields validated)."""
    values: dict[str, Any] = {
        "content": post.content,
        "media_ids": list(post.media_ids),
        "channel_ids": list(post.channel_ids),
        "language": post.language,
        "variants": dict(post.variants),
        "parts": list(post.parts),
        "first_comment": post.first_comment,
    }
    values.update({name: getattr(body, name) for name in body.model_fields_set})
    return PostCreate.model_construct(**values)


def _schedule_draft(post: Post, body: PostEditBody, *, deps: PostDeps) -> Post:
    """The draft made ``scheduled`` at ``body.publish_at`` by the create's steps."""
    now, settings = deps.clock.now(), deps.settings
    request = _as_create(post, body)
    queued = request.publish_at == NEXT_FREE_SLOT
    publish_at: datetime = now if request.publish_at == "now" else request.publish_at  # type: ignore[assignment]
    post_checks.raise_if(
        ([] if queued else post_checks.publish_at_errors(publish_at, now, settings))
        # the create's rules again (a thread's too): a channel may have gone since
        + composed_errors(post.owner, request, channels=deps.channels, media=deps.media)
    )
    attach_named(post.owner, request, deps=deps.uploads)
    slot = posts.reserve_slot(request, post.owner, post.schedule_id, deps) if queued else None
    new = post.model_copy(
        update={
            "status": PostStatus.SCHEDULED,
            "content": request.content,
            "media_ids": list(request.media_ids),
            "language": request.language,
            "variants": dict(request.variants),
            "parts": list(request.parts or []),
            "first_comment": request.first_comment,
            "channel_ids": list(request.channel_ids),
            "deliveries": {cid: Delivery(channel_id=cid) for cid in request.channel_ids},
            "publish_at": slot or publish_at,
            "queue_slot": slot,
            "version": post.version + 1,
            "updated_at": now,
        },
        deep=True,
    )
    try:  # a Bluesky link card is frozen when the post is scheduled, as at a create
        new = link_cards.frozen_on_create(
            new, request, channels=deps.channels, deps=deps.link_cards
        )
        DraftStore(deps.posts).schedule(
            post,
            new,
            late=post_checks.needs_marker(new.publish_at, now, settings),
            max_pending=settings.MAX_PENDING_POSTS,
        )
    except Exception:
        if slot is not None:
            posts.let_go_of_slot(new, new.model_copy(update={"queue_slot": None}), deps)
        raise
    logger.info(
        "draft scheduled",
        extra={"schedule_id": post.schedule_id, "publish_at": format_instant(new.publish_at)},
    )
    posts.promote(new, now, deps)
    return new


@tracer.capture_method
def delete_post(
    owner: str, schedule_id: str, *, deps: PostDeps, if_match: str | None = None
) -> Post | None:
    """``DELETE``: remove a draft (None: nothing is left to show), or cancel any other post
    (:func:`logic.post_edits.cancel_post`, its cancelled self returned).

    Raises
    ------
    PostNotFoundError, StateConflictError, VersionConflictError, ValidationFailedError
        As :func:`logic.post_edits.cancel_post`; a draft changed meanwhile.
    """
    post = post_reads.get_post(owner, schedule_id, deps=deps)
    if post.status != PostStatus.DRAFT:
        return post_edits.cancel_post(owner, schedule_id, deps=deps, if_match=if_match)
    _checked(post, if_match)
    try:
        DraftStore(deps.posts).delete(post)
    except VersionConflictError as exc:
        raise _lost_race(exc, if_match) from exc
    logger.info("draft deleted", extra={"schedule_id": schedule_id})
    return None
