"""One function per arrow of the post state diagram (``docs/dispatch.md``, "State machine").

Each function checks that the arrow may start from the post's current state (else it raises
:class:`TransitionRefused`) and returns a :class:`PostChange`: the attributes to set or remove on
the ``POST`` item (item-ready values: ISO 8601 strings, ``Decimal`` numbers) and the
:class:`Guard`, the condition DynamoDB enforces so exactly one of two racing writers wins.
``scheduled_posts.data.post_store.PostStore.apply`` renders and writes it; a lost guard is
reported there, never here. Nothing in this module does I/O.

To add a transition: add an :class:`Arrow` to :data:`ARROWS`, write the function returning a
:class:`PostChange` for it, add the arrow to the mermaid diagram (``tests/unit/lifecycle/
test_diagram.py`` holds the two equal), and apply it through ``PostStore``. A change that must
also write other items in the same transaction (a due entry) carries them in
:attr:`PostChange.extra_items`; events are derived from the table's stream
(:mod:`scheduled_posts.lifecycle.events`), never written here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from scheduled_posts import keys
from scheduled_posts.clock import format_instant
from scheduled_posts.lifecycle.reach import may_have_published
from scheduled_posts.lifecycle.reasons import StatusReason
from scheduled_posts.lifecycle.states import TERMINAL_DELIVERY_STATUSES, PostStatus
from scheduled_posts.models.post import Attempt, Delivery, Post

#: ``deliveries.<channel_id>``: a document path into the ``deliveries`` map.
Path = tuple[str, ...]

_INITIAL = "[*]"


@dataclass(frozen=True)
class Arrow:
    """An arrow of the diagram: ``name`` may start in any of ``sources`` and ends in one of
    ``targets`` (``[*]`` is the diagram's start)."""

    name: str
    sources: frozenset[str]
    targets: frozenset[str]


def _arrow(name: str, sources: set[PostStatus | str], targets: set[PostStatus]) -> Arrow:
    return Arrow(name, frozenset(str(s) for s in sources), frozenset(str(t) for t in targets))


_S, _P, _F = PostStatus.SCHEDULED, PostStatus.PUBLISHING, PostStatus.FAILED
_FINISHED = {PostStatus.PUBLISHED, PostStatus.PARTIALLY_PUBLISHED, PostStatus.FAILED}

#: The transition table: every arrow of the state diagram, by name.
ARROWS: dict[str, Arrow] = {
    a.name: a
    for a in (
        _arrow("create", {_INITIAL}, {_S}),
        _arrow("edit", {_S}, {_S}),
        _arrow("cancel", {_S}, {PostStatus.CANCELLED}),
        _arrow("cancel_waiting", {_P}, {PostStatus.CANCELLED}),
        _arrow("edit_waiting", {_P}, {_P}),
        _arrow("miss", {_S}, {PostStatus.MISSED}),
        _arrow("reschedule_missed", {PostStatus.MISSED}, {_S}),
        _arrow("revive_occurrence", {PostStatus.CANCELLED}, {_S}),
        _arrow("claim", {_S}, {_P}),
        _arrow("renew_lease", {_P}, {_P}),
        _arrow("take_over", {_P}, {_P}),
        _arrow("hand_back_lease", {_P}, {_P}),
        _arrow("use_rate_slot", {_P}, {_P}),
        _arrow("record_round", {_P}, {_P}),
        _arrow("complete", {_P}, _FINISHED),
        _arrow("fail_dead_lettered", {_S, _P}, {_F}),
        _arrow("reopen", {PostStatus.FAILED, PostStatus.PARTIALLY_PUBLISHED}, {_P}),
    )
}


class TransitionRefused(Exception):
    """The arrow cannot start from the post's current state (``arrow``, ``status``)."""

    def __init__(self, arrow: str, status: PostStatus) -> None:
        super().__init__(f"{arrow} is not allowed from {status.value}")
        self.arrow = arrow
        self.status = status


@dataclass(frozen=True)
class Guard:
    """The condition of a change: every field that is not None must equal the stored value.

    ``status`` is the expected current status, ``version`` the expected version, ``lease_token``
    the holder's token, ``status_reason`` the expected reason (DLQ redrive), ``paths`` further
    document paths and their expected values (a delivery's reserved rate-limit slot)."""

    status: PostStatus
    version: int | None = None
    lease_token: str | None = None
    status_reason: str | None = None
    paths: tuple[tuple[Path, Any], ...] = ()


@dataclass(frozen=True)
class PostChange:
    """What one transition writes on the ``POST#<schedule_id>`` item.

    ``sets`` maps a document path to its new item value; ``removes`` lists attributes removed;
    ``target`` is the status after the change. ``extra_items`` are further
    ``TransactWriteItems`` actions written atomically with the change (for later use by, e.g.,
    an outbox); empty today."""

    arrow: str
    schedule_id: str
    target: PostStatus
    guard: Guard
    sets: dict[Path, Any]
    removes: tuple[str, ...] = ()
    extra_items: tuple[dict[str, Any], ...] = field(default_factory=tuple)


def _check(arrow: str, status: PostStatus) -> None:
    if str(status) not in ARROWS[arrow].sources:
        raise TransitionRefused(arrow, status)


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
    attempt rows (issue 16, W2)."""
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
    _check("claim", post.status)
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
    _check("miss", post.status)
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


def _replace(arrow: str, old: Post, new: Post, *, expect: PostStatus) -> PostChange:
    _check(arrow, old.status)
    if str(new.status) not in ARROWS[arrow].targets:
        raise TransitionRefused(arrow, new.status)
    item = new.to_item()
    sets: dict[Path, Any] = {
        (name,): value for name, value in sorted(item.items()) if name not in ("pk", "sk")
    }
    # What ``new`` leaves out (None, an empty media list) is removed: items store no NULLs and
    # no empty lists (issue 16, W1, W10), ``due_bucket``/``due_sk`` are no longer written
    # (derived from publish_at and the shard), nor ``schedule_id``/``owner`` (in the keys, W10).
    absent = (
        "published_at",
        "publish_lag_seconds",
        "status_reason",
        "media_ids",
        "language",
        "due_bucket",
        "due_sk",
        "schedule_id",
        "owner",
    )
    removes = tuple(a for a in absent if a not in item)
    if arrow in ("reschedule_missed", "revive_occurrence"):
        removes += ("expires_at",)
    return PostChange(
        arrow, old.schedule_id, new.status, Guard(expect, version=old.version), sets, removes
    )


def edit(old: Post, new: Post) -> PostChange:
    """``scheduled -> scheduled``: ``new`` (version + 1) replaces ``old``, guarded by
    ``status = scheduled AND version = old.version``."""
    return _replace("edit", old, new, expect=PostStatus.SCHEDULED)


def cancel(old: Post, new: Post) -> PostChange:
    """``scheduled -> cancelled``: ``new`` (``cancelled``, version + 1) replaces ``old``, guarded
    as :func:`edit`."""
    return _replace("cancel", old, new, expect=PostStatus.SCHEDULED)


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
    same Idempotency-Key, settles it (decision "Cancelling a waiting post whose attempt may
    have reached the network").

    Raises
    ------
    TransitionRefused
        ``old`` is not waiting (a round is due or running, or it is not ``publishing``), or an
        owed channel's attempt may have published.
    """
    if not waiting_for_next_attempt(old, now) or owed_may_have_published(old, attempts or []):
        raise TransitionRefused("cancel_waiting", old.status)
    change = _replace("cancel_waiting", old, new, expect=PostStatus.PUBLISHING)
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
    change = _replace("edit_waiting", old, new, expect=PostStatus.PUBLISHING)
    guard = Guard(PostStatus.PUBLISHING, version=old.version, lease_token=old.lease_token)
    return replace(change, guard=guard)


def reschedule_missed(old: Post, new: Post) -> PostChange:
    """``missed -> scheduled``: ``new`` (a future ``publish_at``) replaces ``old``, its TTL
    removed, guarded by ``status = missed AND version = old.version``."""
    return _replace("reschedule_missed", old, new, expect=PostStatus.MISSED)


def revive_occurrence(old: Post, new: Post) -> PostChange:
    """``cancelled -> scheduled``: an occurrence its series cancelled (a pause, a rule edit;
    never one the owner cancelled: ``detached`` is false) is scheduled again by a later resume
    or edit of the series (issue 13). Its TTL is removed; guarded by ``status = cancelled AND
    version = old.version``.

    Raises
    ------
    TransitionRefused
        ``old`` is not cancelled, or it is detached (the owner's own cancel is final).
    """
    if old.detached or old.series_id is None:
        raise TransitionRefused("revive_occurrence", old.status)
    return _replace("revive_occurrence", old, new, expect=PostStatus.CANCELLED)


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
    _check(arrow, post.status)
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
    _check("use_rate_slot", post.status)
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
    _check("fail_dead_lettered", post.status)
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
    _check("reopen", post.status)
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
