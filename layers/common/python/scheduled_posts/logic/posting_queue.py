"""Posting schedules and the posting queue: "add to queue" takes the next free slot.

A channel's posting schedule (``PUT /v1/channels/{id}/posting-schedule``) is weekly slots in an
IANA zone (``models/posting_queue.py``, the recurring schedules' grammar and DST rule). A post
created with ``"publish_at": "next_free_slot"`` is scheduled at the earliest instant after now,
within ``MAX_SCHEDULE_AHEAD_DAYS``, that is a slot of **every** channel of the post and free in
every one of them (decision "The posting queue"); none is a 409 ``queue_full``.

**Exactly once per slot.** The reservation is a conditional write per channel
(``data/posting_queue.py``: the slot item is absent or already this post's), several channels
in one transaction, written before the post itself; a refused candidate moves on to the next.
A slot a post no longer uses (cancelled, rescheduled, never written because the create failed
after its reservation) is freed when its post lets go of it, and in any case taken over by the
next reservation that finds it stale (:func:`_stale`), so a lost release never leaks a slot.
The post id is the reservation's owner: a retried create (same ``Idempotency-Key``, same id)
takes its own slot again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import islice, takewhile

from scheduled_posts.clock import Clock, instant_from_storage
from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.data.post_reads import PostReader
from scheduled_posts.data.posting_queue import PostingQueueStore, SlotTaken
from scheduled_posts.errors import (
    ChannelNotFoundError,
    NotFoundError,
    StateConflictError,
    ValidationFailedError,
)
from scheduled_posts.lifecycle.states import PostStatus
from scheduled_posts.models.post import Post
from scheduled_posts.models.posting_queue import (
    PREVIEW_SLOTS,
    PostingScheduleIn,
    PostingScheduleOut,
    QueueOut,
    QueueSlotOut,
    rule_of,
)
from scheduled_posts.recurrence import Occurrence, Rule, iter_occurrences
from scheduled_posts.settings import Settings

#: ``publish_at`` values a create accepts besides an instant.
NEXT_FREE_SLOT = "next_free_slot"
#: A reservation whose post does not exist yet may belong to a create in flight (the slot is
#: written, then the post, milliseconds apart) for this long; later, the slot is free again.
ORPHAN_GRACE_SECONDS = 60
#: Reservation writes one create may try before answering ``queue_full`` (each refusal is a
#: slot another post holds; the slots known to be held are skipped without a write).
MAX_RESERVATION_TRIES = 20


class QueueFullError(StateConflictError):
    """No slot free in every channel of the post within ``MAX_SCHEDULE_AHEAD_DAYS``."""

    title = "Queue full"


class PostingScheduleNotFoundError(NotFoundError):
    """The channel has no posting schedule."""


@dataclass(frozen=True)
class QueueDeps:
    """Collaborators of the posting queue."""

    store: PostingQueueStore
    channels: ChannelRepository
    posts: PostReader
    settings: Settings
    clock: Clock


def _own_channel(owner: str, channel_id: str, deps: QueueDeps) -> None:
    if deps.channels.get(owner, channel_id) is None:
        raise ChannelNotFoundError("no such channel")


def _schedule_out(channel_id: str, stored: dict, now: datetime) -> PostingScheduleOut:
    rule = rule_of(stored["timezone"], stored["slots"])
    upcoming = islice(_slots_after(rule_occurrences(rule, now), now), PREVIEW_SLOTS)
    return PostingScheduleOut(
        channel_id=channel_id,
        timezone=stored["timezone"],
        slots=stored["slots"],
        updated_at=stored["updated_at"],
        next_slots=[o.occurrence_at for o in upcoming],
    )


def rule_occurrences(rule: Rule, now: datetime) -> Iterator[Occurrence]:
    """The rule's occurrences from ``now`` on (``recurrence.iter_occurrences``)."""
    return iter_occurrences(rule, not_before=now)


def _slots_after(found: Iterable[Occurrence], now: datetime) -> Iterator[Occurrence]:
    return (o for o in found if o.occurrence_at > now)


def put_schedule(
    owner: str, channel_id: str, body: PostingScheduleIn, *, deps: QueueDeps
) -> PostingScheduleOut:
    """Store (or replace) the posting schedule of the caller's channel. Slots already reserved
    keep their posts, even where the new schedule has no slot.

    Raises
    ------
    ChannelNotFoundError
        Not the caller's channel (404, like a missing one).
    """
    _own_channel(owner, channel_id, deps)
    now = deps.clock.now()
    slots = body.stored_slots()
    deps.store.put_schedule(owner, channel_id, timezone=body.timezone, slots=slots, now=now)
    stored = {"timezone": body.timezone, "slots": slots, "updated_at": now}
    return _schedule_out(channel_id, stored, now)


def _stored_schedule(owner: str, channel_id: str, deps: QueueDeps) -> dict:
    _own_channel(owner, channel_id, deps)
    stored = deps.store.get_schedule(owner, channel_id)
    if stored is None:
        raise PostingScheduleNotFoundError("the channel has no posting schedule")
    return stored


def get_schedule(owner: str, channel_id: str, *, deps: QueueDeps) -> PostingScheduleOut:
    """The channel's posting schedule.

    Raises
    ------
    ChannelNotFoundError, PostingScheduleNotFoundError
        Not the caller's channel, or it has no posting schedule (404).
    """
    now = deps.clock.now()
    stored = _stored_schedule(owner, channel_id, deps)
    stored = {**stored, "updated_at": instant_from_storage(str(stored["updated_at"]))}
    return _schedule_out(channel_id, stored, now)


def delete_schedule(owner: str, channel_id: str, *, deps: QueueDeps) -> None:
    """Remove the channel's posting schedule (posts already queued keep their slots).

    Raises
    ------
    ChannelNotFoundError, PostingScheduleNotFoundError
        Not the caller's channel, or it has no posting schedule (404).
    """
    _own_channel(owner, channel_id, deps)
    if not deps.store.delete_schedule(owner, channel_id):
        raise PostingScheduleNotFoundError("the channel has no posting schedule")


def queue(owner: str, channel_id: str, count: int, *, deps: QueueDeps) -> QueueOut:
    """The next ``count`` slots after now with the post holding each (``None``: free; a slot
    whose post no longer uses it is shown free), within ``MAX_SCHEDULE_AHEAD_DAYS`` only (a
    later slot cannot be taken yet, so it is not shown free): fewer than ``count`` when the
    horizon cuts the list.

    Raises
    ------
    ChannelNotFoundError, PostingScheduleNotFoundError
        Not the caller's channel, or it has no posting schedule (404).
    """
    now = deps.clock.now()
    stored = _stored_schedule(owner, channel_id, deps)
    rule = rule_of(stored["timezone"], stored["slots"])
    horizon = now + timedelta(days=deps.settings.MAX_SCHEDULE_AHEAD_DAYS)
    bookable = takewhile(
        lambda o: o.occurrence_at <= horizon, _slots_after(rule_occurrences(rule, now), now)
    )
    upcoming = list(islice(bookable, count))
    held = (
        deps.store.reserved(
            owner, channel_id, upcoming[0].occurrence_at, upcoming[-1].occurrence_at
        )
        if upcoming
        else {}
    )
    slots = []
    for occurrence in upcoming:
        holder = held.get(occurrence.occurrence_at)
        if holder is not None and _stale(
            owner, holder, channel_id, occurrence.occurrence_at, deps=deps, now=now
        ):
            holder = None
        slots.append(
            QueueSlotOut(
                at=occurrence.occurrence_at,
                local_time=occurrence.local_time_text,
                schedule_id=holder,
            )
        )
    return QueueOut(channel_id=channel_id, timezone=stored["timezone"], slots=slots)


def _stale(
    owner: str, holder: str, channel_id: str, at: datetime, *, deps: QueueDeps, now: datetime
) -> bool:
    """True when the post ``holder`` no longer uses the slot: it does not exist
    :data:`ORPHAN_GRACE_SECONDS` after the slot's reservation, was cancelled, moved to another
    time, or left the channel."""
    post = deps.posts.get(holder)
    if post is None:
        reserved_at = deps.store.reserved_at(owner, channel_id, at)
        return reserved_at is None or now - reserved_at > timedelta(seconds=ORPHAN_GRACE_SECONDS)
    return (
        post.status == PostStatus.CANCELLED
        or post.queue_slot != at
        or channel_id not in post.channel_ids
    )


def _candidates(
    owner: str, channel_ids: list[str], now: datetime, deps: QueueDeps
) -> Iterator[datetime]:
    """Instants after ``now`` within ``MAX_SCHEDULE_AHEAD_DAYS`` that are slots of every
    channel, in order.

    Raises
    ------
    ValidationFailedError
        A channel has no posting schedule (422 naming ``channel_ids[i]``).
    """
    horizon = now + timedelta(days=deps.settings.MAX_SCHEDULE_AHEAD_DAYS)
    per_channel: list[list[datetime]] = []
    missing: list[dict[str, object]] = []
    for index, cid in enumerate(channel_ids):
        stored = deps.store.get_schedule(owner, cid)
        if stored is None:
            missing.append(
                {
                    "loc": ["body", "channel_ids", index],
                    "msg": f"channel {cid} has no posting schedule: "
                    "PUT /v1/channels/{channel_id}/posting-schedule first",
                    "type": "no_posting_schedule",
                }
            )
            continue
        found = []
        for o in _slots_after(
            rule_occurrences(rule_of(stored["timezone"], stored["slots"]), now), now
        ):
            if o.occurrence_at > horizon:
                break
            found.append(o.occurrence_at)
        per_channel.append(found)
    if missing:
        raise ValidationFailedError("next_free_slot needs a posting schedule", missing)
    common = set(per_channel[0]).intersection(*per_channel[1:])
    yield from sorted(common)


def reserve_next_free(
    owner: str, channel_ids: list[str], *, schedule_id: str, deps: QueueDeps
) -> datetime:
    """Reserve the earliest slot free in every channel for ``schedule_id``; its instant.

    Raises
    ------
    ValidationFailedError
        A channel has no posting schedule (422).
    QueueFullError
        No slot free in every channel within ``MAX_SCHEDULE_AHEAD_DAYS`` (409 ``queue_full``).
    """
    now = deps.clock.now()
    candidates = list(_candidates(owner, channel_ids, now, deps))
    if candidates:
        held = {
            cid: deps.store.reserved(owner, cid, candidates[0], candidates[-1])
            for cid in channel_ids
        }
        tries = 0
        for at in candidates:
            holders = {cid: held[cid][at] for cid in channel_ids if at in held[cid]}
            taken_over = any(h != schedule_id for h in holders.values())
            if taken_over and not _free_stale(
                owner, holders, at, schedule_id=schedule_id, deps=deps, now=now
            ):
                deps.store.release(owner, channel_ids, at, schedule_id=schedule_id)
                continue
            tries += 1
            try:
                deps.store.reserve(owner, channel_ids, at, schedule_id=schedule_id, now=now)
                return at
            except SlotTaken:
                if taken_over:
                    deps.store.release(owner, channel_ids, at, schedule_id=schedule_id)
                if tries >= MAX_RESERVATION_TRIES:
                    break
    raise QueueFullError(
        "no slot is free in every channel of the post within "
        f"{deps.settings.MAX_SCHEDULE_AHEAD_DAYS} days (MAX_SCHEDULE_AHEAD_DAYS): queue_full"
    )


def _free_stale(
    owner: str,
    holders: dict[str, str],
    at: datetime,
    *,
    schedule_id: str,
    deps: QueueDeps,
    now: datetime,
) -> bool:
    """Take over every slot at ``at`` whose holder no longer uses it; False when one is held
    for real (or changed hands meanwhile)."""
    for cid, holder in holders.items():
        if holder == schedule_id:
            continue
        if not _stale(owner, holder, cid, at, deps=deps, now=now):
            return False
        if not deps.store.take_over(
            owner, cid, at, holder=holder, schedule_id=schedule_id, now=now
        ):
            return False
    return True


def release_slot(post: Post, *, deps: QueueDeps) -> None:
    """Free the slots of ``post``'s ``queue_slot`` (best effort: a slot left behind is taken
    over as stale by the next reservation)."""
    if post.queue_slot is None:
        return
    deps.store.release(post.owner, post.channel_ids, post.queue_slot, schedule_id=post.schedule_id)
