"""Editing a post that waits for its next attempt (decision "A post waiting for its next attempt
can be edited when nothing was sent"; ``docs/dispatch.md``, "Editing a post that waits for its
next attempt").

The post stays ``publishing`` and keeps waiting for the same ``next_attempt_at`` with the new
text: the wait is the destination's own ask (a ``Retry-After``, a 429) or the retry backoff, so
going back to ``scheduled`` at ``publish_at`` (already past) would hammer a network that said
"later". The edit takes a new lease token in the same conditional write, so the follow-up
message of the old lease (and of the old version) is dropped, and sends the follow-up of the
new lease; if that send fails, the watchdog takes the lease over when it expires
(``next_attempt_at + LEASE_SECONDS``, unchanged).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from scheduled_posts.data.queue import delay_until
from scheduled_posts.errors import StateConflictError
from scheduled_posts.lifecycle import outcomes, reach
from scheduled_posts.lifecycle.states import TERMINAL_DELIVERY_STATUSES
from scheduled_posts.logic import post_checks
from scheduled_posts.models.api import PostPatch, etag_for
from scheduled_posts.models.messages import DispatchMessage, DispatchReason
from scheduled_posts.models.post import Post
from scheduled_posts.observability import logger

#: ``_edited(post, patch, owner=, now=, deps=)`` of ``logic.post_edits``: the patched post after the
#: create rules (length per channel, media), passed in to keep one home for them.
Edited = Callable[..., Post]


def edit_waiting_post(
    post: Post,
    patch: PostPatch,
    expected: frozenset[str] | None,
    now: datetime,
    deps: Any,
    *,
    edited: Edited,
) -> Post:
    """``PATCH`` of a ``publishing`` post waiting for its next attempt: ``content``,
    ``media_ids`` and ``language`` may change (version + 1, a new lease token, the same waits).

    Raises
    ------
    StateConflictError
        409: the patch moves ``publish_at`` or changes ``channel_ids`` (the post has started),
        an attempt may have published the old text (the creator can cancel instead), or a
        worker started the next attempt first.
    VersionConflictError
        ``If-Match`` does not name the current version (412).
    ValidationFailedError
        The new text breaks a channel's rules (422, as for a scheduled post).
    """
    if patch.publish_at is not None or (
        patch.channel_ids is not None and list(patch.channel_ids) != post.channel_ids
    ):
        raise StateConflictError(
            "the post is publishing and waits for its next attempt: its publish_at and"
            " channel_ids can no longer change (cancel it and create a new post)"
        )
    post_checks.require_version(etag_for(post), post.version, expected)
    rows = deps.posts.list_attempts(post.schedule_id, now=now)
    attempts = outcomes.merge_attempts(rows, post)
    unsafe = reach.may_have_published(attempts)
    if unsafe:
        raise StateConflictError(
            "the post waits for its next attempt, but "
            + reach.why_unsafe(unsafe[0])
            + " may have reached the network and published the old text under the same"
            " Idempotency-Key, so its text can no longer change; cancel it instead"
        )
    new = edited(post, patch, owner=post.owner, now=now, deps=deps)
    new = new.model_copy(update={"lease_token": uuid.uuid4().hex})
    deps.posts.replace(post, new, old_late=True, new_late=False, now=now, attempts=attempts)
    logger.info("waiting post edited", extra={"schedule_id": post.schedule_id})
    _follow_up(new, now, deps.dispatcher)
    return new


def _follow_up(
    post: Post, now: datetime, dispatcher: Callable[[DispatchMessage, int], None] | None
) -> None:
    """Best effort: the message of the new lease at the first owed ``next_attempt_at``."""
    waits = [
        d.next_attempt_at
        for d in post.deliveries.values()
        if d.status not in TERMINAL_DELIVERY_STATUSES and d.next_attempt_at is not None
    ]
    if dispatcher is None or not waits:
        return
    next_at = min(waits)
    message = DispatchMessage(
        schedule_id=post.schedule_id,
        version=post.version,
        publish_at=post.publish_at,
        attempt=max((d.attempts for d in post.deliveries.values()), default=0) + 1,
        lease_token=post.lease_token,
        not_before=next_at,
        reason=DispatchReason.RETRY,
    )
    try:
        dispatcher(message, delay_until(next_at, now))
    except Exception:  # the lease expires and the watchdog re-dispatches
        logger.exception("follow-up send failed", extra={"schedule_id": post.schedule_id})
