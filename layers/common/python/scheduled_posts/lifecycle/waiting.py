"""The arrows of a ``publishing`` post waiting for its next attempt (``docs/dispatch.md``,
"Cancelling a post that waits for its next attempt"): whether it waits, whether an owed
attempt may have published, and the owner's cancel and edit of it. Pure, like
:mod:`.transitions`; the arrows are in :data:`.arrows.ARROWS` and the diagram.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from scheduled_posts.lifecycle.arrows import Guard, PostChange, TransitionRefused, replace_post
from scheduled_posts.lifecycle.reach import may_have_published
from scheduled_posts.lifecycle.states import TERMINAL_DELIVERY_STATUSES, PostStatus
from scheduled_posts.models.post import Attempt, Post

#: How far ahead every owed delivery's next attempt must be for its owner to cancel a waiting
#: post: more than the clock skew between the API and a worker, so that no worker can be in a
#: round of it (decision "A post waiting for its next attempt can be cancelled").
WAITING_MARGIN_SECONDS = 5


def waiting_for_next_attempt(post: Post, now: datetime) -> bool:
    """Whether ``post`` is ``publishing`` with no round due: every owed delivery waits for a
    next attempt (a retry, a ``Retry-After``, a rate-limit slot) more than
    :data:`WAITING_MARGIN_SECONDS` after ``now``."""
    owed = [d for d in post.deliveries.values() if d.status not in TERMINAL_DELIVERY_STATUSES]
    after = now + timedelta(seconds=WAITING_MARGIN_SECONDS)
    return (
        post.status == PostStatus.PUBLISHING
        and post.lease_token is not None
        and bool(owed)
        and all(d.next_attempt_at is not None and d.next_attempt_at > after for d in owed)
    )


def owed_may_have_published(post: Post, attempts: list[Attempt]) -> list[Attempt]:
    """The attempts of ``post``'s owed channels (not yet terminal) that may have published
    (:func:`scheduled_posts.lifecycle.reach.may_have_published`): a cancel would mark such a
    channel ``skipped`` while the network may show the post."""
    owed = {c for c, d in post.deliveries.items() if d.status not in TERMINAL_DELIVERY_STATUSES}
    return [a for a in may_have_published(attempts) if a.channel_id in owed]


def cancel_waiting(
    old: Post, new: Post, *, now: datetime, attempts: list[Attempt] | None = None
) -> PostChange:
    """``publishing -> cancelled`` by the owner while the post waits for its next attempt
    (:func:`waiting_for_next_attempt` at ``now``): ``new`` replaces ``old``, the lease removed,
    guarded by ``status = publishing AND version AND lease_token = old.lease_token``. A worker
    starting the next round first renews the lease with a new token, so exactly one of the two
    writes wins; the worker's claim of a cancelled post fails and drops its message.

    An owed channel whose earlier attempt may have reached the network (``attempts``: the
    post's rows and the ones on its item; :func:`owed_may_have_published`) refuses the cancel:
    ``skipped`` would be untrue if that attempt published, and its next attempt, under the
    same Idempotency-Key, settles it (decision "A waiting post is not cancelled over an attempt
    that may have published").

    Raises
    ------
    TransitionRefused
        ``old`` is not waiting (a round is due or running, or it is not ``publishing``), or an
        owed channel's attempt may have published.
    """
    if not waiting_for_next_attempt(old, now) or owed_may_have_published(old, attempts or []):
        raise TransitionRefused("cancel_waiting", old.status)
    change = replace_post("cancel_waiting", old, new, expect=PostStatus.PUBLISHING)
    guard = Guard(PostStatus.PUBLISHING, version=old.version, lease_token=old.lease_token)
    lease = ("lease_shard", "lease_expires_at")
    sets = {path: value for path, value in change.sets.items() if path[0] not in lease}
    return replace(change, guard=guard, sets=sets, removes=change.removes + lease)


def edit_waiting(old: Post, new: Post, *, now: datetime, attempts: list[Attempt]) -> PostChange:
    """``publishing -> publishing``: the owner edits a post waiting for its next attempt, when no
    attempt of it (``attempts``: its rows and the ones on the item) may have published anything
    (:func:`scheduled_posts.lifecycle.reach.may_have_published`). ``new`` (version + 1, a new
    ``lease_token``, still waiting) replaces ``old``, guarded like :func:`cancel_waiting`: a
    worker's ``renew_lease`` commits first (the edit fails) or fails on the new token.

    Raises
    ------
    TransitionRefused
        ``old`` is not waiting, an attempt may have published, or ``new`` keeps the old token.
    """
    if (
        not waiting_for_next_attempt(old, now)
        or may_have_published(attempts)
        or new.lease_token in (None, old.lease_token)
    ):
        raise TransitionRefused("edit_waiting", old.status)
    change = replace_post("edit_waiting", old, new, expect=PostStatus.PUBLISHING)
    guard = Guard(PostStatus.PUBLISHING, version=old.version, lease_token=old.lease_token)
    return replace(change, guard=guard)
