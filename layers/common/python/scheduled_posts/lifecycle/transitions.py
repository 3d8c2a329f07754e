"""One function per arrow of the post state diagram (``docs/dispatch.md``, "State machine").

Each function checks that the arrow may start from the post's current state (else it raises
:class:`TransitionRefused`) and returns a :class:`PostChange`: the attributes to set or remove on
the ``POST`` item (item-ready values: ISO 8601 strings, ``Decimal`` numbers) and the
:class:`Guard`, the condition DynamoDB enforces so exactly one of two racing writers wins.
``scheduled_posts.data.post_store.PostStore.apply`` renders and writes it; a lost guard is
reported there, never here. Nothing in this module does I/O.

The table (:data:`~.arrows.ARROWS`) and the types (:class:`~.arrows.Guard`,
:class:`~.arrows.PostChange`, :class:`~.arrows.TransitionRefused`) are in :mod:`.arrows`; the
arrows of a post waiting for its next attempt are in :mod:`.waiting`.

To add a transition: add an :class:`~.arrows.Arrow` to :data:`~.arrows.ARROWS`, write the
function returning a :class:`PostChange` for it, add the arrow to the mermaid diagram
(``tests/unit/lifecycle/test_diagram.py`` holds the two equal), and apply it through
``PostStore``. A change that must also write other items in the same transaction (a due
entry) carries them in :attr:`PostChange.extra_items`; events are derived from the table's stream
(:mod:`scheduled_posts.lifecycle.events`), never written here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from scheduled_posts import keys
from scheduled_posts.clock import format_instant
from scheduled_posts.lifecycle.arrows import (
    ARROWS,
    Guard,
    Path,
    PostChange,
    TransitionRefused,
    check,
    replace_post,
)
from scheduled_posts.lifecycle.reasons import StatusReason
from scheduled_posts.lifecycle.states import (
    TERMINAL_DELIVERY_STATUSES,
    DeliveryStatus,
    PostStatus,
)
from scheduled_posts.lifecycle.waiting import (  # noqa: F401  (logic/posts.py reads them here)
    owed_may_have_published,
    waiting_for_next_attempt,
)
from scheduled_posts.models.post import Delivery, Post


def _deliveries(deliveries: dict[str, Delivery]) -> dict[Path, Any]:
    return {("deliveries", cid): d.to_item() for cid, d in sorted(deliveries.items())}


def _lease(token: str, expires_at: datetime, shard: int) -> dict[Path, Any]:
    return {
        ("lease_token",): token,
        ("lease_expires_at",): format_instant(expires_at),
        ("lease_shard",): keys.lease_shard(shard),
    }


def _starting(post: Post, channels: tuple[str, ...], now: datetime) -> dict[Path, Any]:
    """Mark the attempts of ``channels`` started at ``now`` on the post item itself (the
    delivery's ``started_at``), so the lease write that starts a round replaces the ``started``
    attempt rows (decision "The round's attempts live on the post item where they can")."""
    sets: dict[Path, Any] = {}
    for cid in channels:
        if cid in post.deliveries:
            sets[("deliveries", cid, "started_at")] = format_instant(now)
        else:  # no map to set a path in yet: write the whole delivery
            sets[("deliveries", cid)] = Delivery(channel_id=cid, started_at=now).to_item()
    return sets


# -- scheduled -----------------------------------------------------------------------------------


def claim(
    post: Post,
    *,
    lease_token: str,
    lease_expires_at: datetime,
    now: datetime,
    starting: tuple[str, ...] = (),
) -> PostChange:
    """``scheduled -> publishing`` with a new lease, guarded by ``status = scheduled AND
    version``; the attempts of ``starting`` (channel ids) marked started at ``now``."""
    check("claim", post.status)
    return PostChange(
        "claim",
        post.schedule_id,
        PostStatus.PUBLISHING,
        Guard(PostStatus.SCHEDULED, version=post.version),
        {
            ("status",): PostStatus.PUBLISHING.value,
            **_lease(lease_token, lease_expires_at, post.shard),
            ("updated_at",): format_instant(now),
            **_starting(post, starting, now),
        },
    )


def miss(post: Post, *, reason: str, now: datetime, expires_at: int) -> PostChange:
    """``scheduled -> missed`` (overdue past ``MISFIRE_GRACE_SECONDS``), with its reason and TTL
    (``expires_at``, epoch seconds), guarded by ``status = scheduled AND version``."""
    check("miss", post.status)
    return PostChange(
        "miss",
        post.schedule_id,
        PostStatus.MISSED,
        Guard(PostStatus.SCHEDULED, version=post.version),
        {
            ("status",): PostStatus.MISSED.value,
            ("status_reason",): reason,
            ("updated_at",): format_instant(now),
            ("expires_at",): expires_at,
        },
    )


def edit(old: Post, new: Post) -> PostChange:
    """``scheduled -> scheduled``: ``new`` (version + 1) replaces ``old``, guarded by
    ``status = scheduled AND version = old.version``."""
    return replace_post("edit", old, new, expect=PostStatus.SCHEDULED)


def cancelled(post: Post, *, reason: str, detach: bool, now: datetime, expires_at: int) -> Post:
    """``post`` cancelled (the new item for :func:`cancel`): version + 1, ``status_reason``
    ``reason``, every owed delivery ``skipped`` (a waiting post's published ones kept), no lease,
    ``expires_at`` the TTL (epoch seconds); ``detach``: an occurrence cancelled by its owner
    leaves its series, which then never revives it. Pure."""
    skipped = {"status": DeliveryStatus.SKIPPED, "next_attempt_at": None}
    deliveries = {
        cid: d if d.status in TERMINAL_DELIVERY_STATUSES else d.model_copy(update=skipped)
        for cid, d in post.deliveries.items()
    }
    update: dict[str, Any] = {
        "status": PostStatus.CANCELLED,
        "version": post.version + 1,
        "updated_at": now,
        "deliveries": deliveries,
        "status_reason": reason,
        "detached": post.detached or detach,
        "expires_at": expires_at,
        "lease_expires_at": None,
    }
    return post.model_copy(update=update, deep=True)


def cancel(old: Post, new: Post) -> PostChange:
    """``scheduled -> cancelled``: ``new`` (``cancelled``, version + 1) replaces ``old``, guarded
    as :func:`edit`."""
    return replace_post("cancel", old, new, expect=PostStatus.SCHEDULED)


def reschedule_missed(old: Post, new: Post) -> PostChange:
    """``missed -> scheduled``: ``new`` (a future ``publish_at``) replaces ``old``, its TTL
    removed, guarded by ``status = missed AND version = old.version``."""
    return replace_post("reschedule_missed", old, new, expect=PostStatus.MISSED)


def revive_occurrence(old: Post, new: Post) -> PostChange:
    """``cancelled -> scheduled``: an occurrence its series cancelled (a pause, a rule edit;
    never one the owner cancelled: ``detached`` is false) is scheduled again by a later resume
    or edit of the series. Its TTL is removed; guarded by ``status = cancelled AND
    version = old.version``.

    Raises
    ------
    TransitionRefused
        ``old`` is not cancelled, or it is detached (the owner's own cancel is final).
    """
    if old.detached or old.series_id is None:
        raise TransitionRefused("revive_occurrence", old.status)
    return replace_post("revive_occurrence", old, new, expect=PostStatus.CANCELLED)


# -- publishing ----------------------------------------------------------------------------------


def _held(
    arrow: str,
    post: Post,
    sets: dict[Path, Any],
    *,
    target: PostStatus = PostStatus.PUBLISHING,
    removes: tuple[str, ...] = (),
) -> PostChange:
    """A change by the lease holder: guarded by ``status = publishing AND lease_token``."""
    check(arrow, post.status)
    if str(target) not in ARROWS[arrow].targets:
        raise TransitionRefused(arrow, target)
    guard = Guard(PostStatus.PUBLISHING, lease_token=post.lease_token)
    return PostChange(arrow, post.schedule_id, target, guard, sets, removes)


def renew_lease(
    post: Post,
    *,
    new_token: str,
    lease_expires_at: datetime,
    now: datetime,
    take_over: bool = False,
    starting: tuple[str, ...] = (),
) -> PostChange:
    """``publishing -> publishing`` with a new lease token: the worker continuing a post
    (``take_over=False``, the attempts of ``starting`` marked started at ``now``) or the
    watchdog taking an expired lease over (``take_over=True``). Guarded by ``status =
    publishing AND lease_token = <post.lease_token>``."""
    sets: dict[Path, Any] = {
        ("lease_token",): new_token,
        ("lease_expires_at",): format_instant(lease_expires_at),
        ("updated_at",): format_instant(now),
        **_starting(post, starting, now),
    }
    return _held("take_over" if take_over else "renew_lease", post, sets)


def hand_back_lease(post: Post, *, now: datetime) -> PostChange:
    """``publishing -> publishing`` with the lease expiring ``now``: the holder gives it up
    (the watchdog, when the message carrying a lease it just took over could not be sent), so
    the next watchdog run takes the post over again instead of waiting out a whole
    ``LEASE_SECONDS``. Guarded by ``status = publishing AND lease_token = <post.lease_token>``."""
    sets: dict[Path, Any] = {
        ("lease_expires_at",): format_instant(now),
        ("updated_at",): format_instant(now),
    }
    return _held("hand_back_lease", post, sets)


def use_rate_slot(post: Post, *, channel_id: str, slot: str, now: datetime) -> PostChange:
    """``publishing -> publishing``: the delivery to ``channel_id`` starts on the rate-limit
    slot it reserved (``slot``, a ``YYYY-MM-DDTHH:MM`` minute), so it is cleared before the
    request: a worker that dies after the request cannot leave it behind for a retry in the same
    minute to start on again (one slot, one request). Guarded by the lease token and by
    ``deliveries.<channel_id>.rate_slot = slot`` (a second holder of the same token, a
    duplicate message, finds it used and takes a slot of its own)."""
    check("use_rate_slot", post.status)
    path: Path = ("deliveries", channel_id, "rate_slot")
    guard = Guard(PostStatus.PUBLISHING, lease_token=post.lease_token, paths=((path, slot),))
    sets: dict[Path, Any] = {path: None, ("updated_at",): format_instant(now)}
    return PostChange("use_rate_slot", post.schedule_id, PostStatus.PUBLISHING, guard, sets)


def record_round(
    post: Post,
    *,
    deliveries: dict[str, Delivery],
    now: datetime,
    lease_expires_at: datetime,
) -> PostChange:
    """``publishing -> publishing``: a round that left channels owed; the changed deliveries and
    the extended lease, guarded by the lease token."""
    sets: dict[Path, Any] = {
        ("updated_at",): format_instant(now),
        **_deliveries(deliveries),
        ("lease_expires_at",): format_instant(lease_expires_at),
    }
    return _held("record_round", post, sets)


def complete(
    post: Post,
    *,
    deliveries: dict[str, Delivery],
    completion: Any,
    now: datetime,
) -> PostChange:
    """``publishing -> published | partially_published | failed`` (``completion``, a
    :class:`scheduled_posts.lifecycle.outcomes.Completion`): the changed deliveries and the
    outcome; the lease attributes removed. Guarded by the lease token."""
    target = PostStatus(completion.status)
    lag = Delivery(channel_id="-", lag_seconds=completion.publish_lag_seconds).to_item()
    published_at = completion.published_at
    sets: dict[Path, Any] = {
        ("updated_at",): format_instant(now),
        **_deliveries(deliveries),
        ("status",): target.value,
        ("published_at",): format_instant(published_at) if published_at else None,
        ("publish_lag_seconds",): lag.get("lag_seconds"),
        ("status_reason",): completion.status_reason,
        ("expires_at",): completion.expires_at,
    }
    return _held("complete", post, sets, target=target, removes=("lease_shard", "lease_expires_at"))


def fail_dead_lettered(
    post: Post,
    *,
    deliveries: dict[str, Delivery],
    last_error: str,
    now: datetime,
    expires_at: int,
) -> PostChange:
    """``scheduled | publishing -> failed``: the post's message is about to be dead-lettered.
    Reason :attr:`StatusReason.DEAD_LETTERED`; guarded by ``status = <current> AND version``
    (and the lease token while ``publishing``)."""
    check("fail_dead_lettered", post.status)
    token = post.lease_token if post.status == PostStatus.PUBLISHING else None
    return PostChange(
        "fail_dead_lettered",
        post.schedule_id,
        PostStatus.FAILED,
        Guard(post.status, version=post.version, lease_token=token),
        {
            ("status",): PostStatus.FAILED.value,
            ("status_reason",): StatusReason.DEAD_LETTERED.value,
            ("last_error",): last_error,
            ("updated_at",): format_instant(now),
            ("expires_at",): expires_at,
            **_deliveries(deliveries),
        },
        removes=("lease_shard", "lease_expires_at"),
    )


def reopen(
    post: Post,
    *,
    deliveries: dict[str, Delivery],
    lease_token: str,
    lease_expires_at: datetime,
    reason: StatusReason,
    now: datetime,
    expected_reason: StatusReason | None = None,
) -> PostChange:
    """``failed | partially_published -> publishing`` (owner retry or DLQ redrive) with a new
    lease and ``deliveries`` replaced (the channels to deliver again); the TTL removed. Guarded
    by ``status = <current> AND version`` (and ``status_reason`` when ``expected_reason``)."""
    check("reopen", post.status)
    return PostChange(
        "reopen",
        post.schedule_id,
        PostStatus.PUBLISHING,
        Guard(
            post.status,
            version=post.version,
            status_reason=expected_reason.value if expected_reason else None,
        ),
        {
            ("status",): PostStatus.PUBLISHING.value,
            **_lease(lease_token, lease_expires_at, post.shard),
            ("status_reason",): reason.value,
            ("updated_at",): format_instant(now),
            **_deliveries(deliveries),
        },
        removes=("expires_at",),
    )
