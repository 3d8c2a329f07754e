"""The post transition table and the vocabulary of a transition (``docs/dispatch.md``, "State
machine"): :data:`ARROWS`, :class:`Guard`, :class:`PostChange`, :class:`TransitionRefused`, the
source check every arrow starts with and :func:`replace_post`, the change that replaces the whole
item (edit, cancel, the waiting-post arrows, reschedule, revive).

The arrows themselves are functions in :mod:`.transitions` and :mod:`.waiting`; this module is
their shared base, so both import it and neither imports the other. Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from scheduled_posts.lifecycle.states import PostStatus
from scheduled_posts.models.post import Post

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


def _arrow(
    name: str, sources: Iterable[PostStatus | str], targets: Iterable[PostStatus | str]
) -> Arrow:
    return Arrow(name, frozenset(str(s) for s in sources), frozenset(str(t) for t in targets))


_S, _P, _F = PostStatus.SCHEDULED, PostStatus.PUBLISHING, PostStatus.FAILED
_FINISHED = {PostStatus.PUBLISHED, PostStatus.PARTIALLY_PUBLISHED, PostStatus.FAILED}

#: The transition table: every arrow of the state diagram, by name.
ARROWS: dict[str, Arrow] = {
    a.name: a
    for a in (
        _arrow("create", {_INITIAL}, {_S}),
        # Drafts (``lifecycle/drafts.py``): no publish_at, never dispatched; a deleted draft is
        # gone (the diagram's final marker, which the table leaves out).
        _arrow("create_draft", {_INITIAL}, {PostStatus.DRAFT}),
        _arrow("edit_draft", {PostStatus.DRAFT}, {PostStatus.DRAFT}),
        _arrow("schedule_draft", {PostStatus.DRAFT}, {_S}),
        _arrow("delete_draft", {PostStatus.DRAFT}, set()),
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


def check(arrow: str, status: PostStatus) -> None:
    """Raise :class:`TransitionRefused` unless ``arrow`` may start from ``status``."""
    if str(status) not in ARROWS[arrow].sources:
        raise TransitionRefused(arrow, status)


def replace_post(arrow: str, old: Post, new: Post, *, expect: PostStatus) -> PostChange:
    """The change by which ``new`` replaces ``old`` whole along ``arrow`` (``new.status`` one of
    its targets), guarded by ``status = expect AND version = old.version``; what ``new`` leaves
    out is removed."""
    check(arrow, old.status)
    if str(new.status) not in ARROWS[arrow].targets:
        raise TransitionRefused(arrow, new.status)
    item = new.to_item()
    sets: dict[Path, Any] = {
        (name,): value for name, value in sorted(item.items()) if name not in ("pk", "sk")
    }
    # What ``new`` leaves out (None, an empty media list, no thread parts or first comment) is
    # removed: items store no NULLs and no empty lists (decisions "Post items store no NULLs and
    # nothing derived" and "A post item stores its id and owner only in its keys"),
    # ``due_bucket``/``due_sk`` are no longer written (derived from publish_at and the shard),
    # nor ``schedule_id``/``owner`` (in the keys).
    absent = (
        "published_at",
        "publish_lag_seconds",
        "status_reason",
        "media_ids",
        "language",
        "variants",
        "link_card",
        "parts",
        "first_comment",
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
