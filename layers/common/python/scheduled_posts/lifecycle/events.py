"""Outcome events derived from one committed item change: ``(old image, new image) -> events``.

The outbox is the posts table's DynamoDB stream (decision "The outbox is the posts table's DynamoDB
stream (`NEW_AND_OLD_IMAGES`), not an outbox item", and the two after it): every committed write of
a ``POST`` item (or a series item) is one stream record carrying the item before and after the
write, and this pure function turns it into the events it means. So an event exists exactly when its
change was committed, and a replay of the record gives the same events with the same ids.

Which change means which event (the arrows of ``lifecycle/transitions.py``):

========================================  ==========================================
change (old status -> new status)          events
========================================  ==========================================
insert, ``scheduled`` (create)             ``post.scheduled``
``scheduled`` -> ``scheduled``, version+1   ``post.updated`` (edit)
``missed`` -> ``scheduled``                 ``post.scheduled`` (reschedule)
``scheduled`` -> ``cancelled``              ``post.cancelled``
``scheduled`` -> ``missed``                 ``post.missed``
``*`` -> ``publishing``                     ``post.claimed`` (claim, owner retry, redrive)
``*`` -> ``published`` / ``partially_..``   ``post.published`` / ``post.partially_published``
``*`` -> ``failed``                         ``post.failed``
a delivery turns ``published``            ``delivery.published``
a delivery turns ``failed``/``skipped``    ``delivery.failed``
a delivery (re)enters ``retry_scheduled``  ``delivery.retrying`` (with ``next_attempt_at``)
a series item turns ``stopped``           ``series.stopped`` (with its reason)
a media item turns ``rejected``           ``media.rejected`` (``lifecycle/media_events.py``)
========================================  ==========================================

Lease renewals and take-overs change neither a status nor a delivery outcome: no event (the
start marks a lease write sets on the deliveries it starts (decision "The round's attempts live on
the post item where they can") are not outcomes: :data:`START_MARKS`). Delivery events come before
the post's event of the same write, channels in id order.

Event ids are UUIDv5 (RFC 9562) of a key naming the fact: ``<schedule_id>|<type>|v<version>``
for post changes, plus the new lease token for ``post.claimed`` and the lease token that
finished the post for the outcomes (a post reopened by a retry finishes again under another
lease, at the same version); ``<schedule_id>|<type>|<channel_id>|a<attempts>|v<version>|<lease
token that recorded it>`` for deliveries, plus ``next_attempt_at`` for ``delivery.retrying``
(a 429 waits without using an attempt). Pure: no boto3, no clock, no I/O.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any, Literal

from scheduled_posts import keys
from scheduled_posts.clock import format_instant, instant_from_storage
from scheduled_posts.lifecycle.import_events import import_events, is_import_record
from scheduled_posts.lifecycle.media_events import media_events
from scheduled_posts.lifecycle.states import DeliveryStatus, PostStatus
from scheduled_posts.models.events import (
    BaseEvent,
    ChannelOutcome,
    DeliveryFailed,
    DeliveryPublished,
    DeliveryRetrying,
    DeliveryVerificationFailed,
    EventType,
    PostCancelled,
    PostClaimed,
    PostEvent,
    PostFailed,
    PostMissed,
    PostPartiallyPublished,
    PostPublished,
    PostScheduled,
    PostUpdated,
    SeriesStopped,
)
from scheduled_posts.models.post import Delivery, Post

#: Namespace of event ids (a fixed random UUID: ids are stable across deployments).
EVENT_ID_NAMESPACE = uuid.UUID("5d0c7a52-31f4-4f53-9a3e-2f0f6f1c9e41")

#: Sort-key prefix of series items (``SERIES`` or ``SERIES#...``), written by the recurring
#: series feature (``models/series.py``); a series that stops materializing is reported.
SERIES_SK_PREFIX = "SERIES"
#: Sort-key prefix of media items (``MEDIA#<media_id>``, ``data/media.py``).
MEDIA_SK_PREFIX = "MEDIA#"
#: Series statuses after which nothing more materializes (``SeriesStatus.ENDED``, ``CANCELLED``).
SERIES_FINAL_STATUSES = frozenset({"ended", "cancelled"})

Item = Mapping[str, Any]

_FINISHED: dict[PostStatus, type[PostEvent]] = {
    PostStatus.PUBLISHED: PostPublished,
    PostStatus.PARTIALLY_PUBLISHED: PostPartiallyPublished,
    PostStatus.FAILED: PostFailed,
}


#: Statuses in which a delivery's change is a delivery event (a cancel marks every delivery
#: ``skipped``: that is ``post.cancelled`` alone).
_DELIVERING = frozenset({PostStatus.PUBLISHING, *_FINISHED})


def event_id(*parts: object) -> str:
    """The UUIDv5 (hex, 32 characters) of ``|``-joined ``parts``."""
    return uuid.uuid5(EVENT_ID_NAMESPACE, "|".join(str(p) for p in parts)).hex


def derive_events(old: Item | None, new: Item | None) -> list[BaseEvent]:
    """The events of one committed write of one item of ``PostsTable``.

    Parameters
    ----------
    old, new:
        The item before and after the write (plain values: ``str``, ``Decimal``, ``dict``,
        ``list``, as boto3's ``TypeDeserializer`` gives them); ``old`` None for an insert,
        ``new`` None for a delete (TTL expiry: no event).

    Returns
    -------
    The events in the order they happened (deliveries before the post's outcome); empty for
    items that report no events (:data:`DERIVERS`) and for writes that report nothing.
    """
    if new is None:
        return []
    sk = str(new.get("sk", ""))
    for reports, derive in DERIVERS:
        if reports(sk):
            return derive(old, new)
    return []


def _outcome(delivery: Delivery, raw: Mapping[str, Any]) -> ChannelOutcome:
    return ChannelOutcome(
        channel_id=delivery.channel_id,
        status=delivery.status.value,
        attempts=delivery.attempts,
        remote_id=delivery.remote_id,
        remote_url=raw.get("remote_url"),
        published_at=delivery.published_at,
        lag_seconds=delivery.lag_seconds,
        last_error=delivery.last_error,
        next_attempt_at=delivery.next_attempt_at,
        receipt=delivery.receipt,
        parts=list(delivery.parts) if delivery.parts_total else None,
        parts_published=delivery.parts_published,
        first_comment=delivery.comment,
    )


def _channels(post: Post, new: Item) -> dict[str, ChannelOutcome]:
    raw = new.get("deliveries") or {}
    return {
        cid: _outcome(post.deliveries[cid], raw.get(cid) or {}) for cid in sorted(post.deliveries)
    }


#: A delivery's start marks (decision "A delivery's start marks are no outcome"): the lease write
#: that starts a round sets ``started_at`` on the channels it is about to deliver, and the round's
#: record clears it (or folds the published attempt in with ``http_status``). They say an attempt is
#: in flight, not what came of it, so they are no outcome: a write that moves only them derives no
#: event. Without this, a lease renewal marking a ``retry_scheduled`` delivery would derive that
#: delivery's ``delivery.retrying`` id a second time (same attempts, version and lease).
START_MARKS = frozenset({"started_at", "http_status"})


def _unmarked(delivery: Delivery) -> Delivery:
    """``delivery`` without its start marks (:data:`START_MARKS`)."""
    return delivery.model_copy(update=dict.fromkeys(START_MARKS))


def _new_finding(before: Delivery | None, after: Delivery) -> Literal["missing", "changed"] | None:
    """The read-back finding ``after`` opens (``missing``/``changed``, not open ``before``):
    one event per finding; the id names the last time it was seen, so a finding cleared and
    found again is a new one."""
    if after.status != DeliveryStatus.PUBLISHED or after.verification == (
        before.verification if before else None
    ):
        return None
    if after.verification == "missing":
        return "missing"
    return "changed" if after.verification == "changed" else None


def _delivery_events(
    old: Post, new: Post, channels: dict[str, ChannelOutcome], common: dict[str, Any]
) -> list[BaseEvent]:
    holder = old.lease_token or "-"
    events: list[BaseEvent] = []
    for cid, outcome in channels.items():
        before, after = old.deliveries.get(cid), new.deliveries[cid]
        if before is not None and _unmarked(before) == _unmarked(after):
            continue  # unchanged, or only its start marks moved (no fact to report)
        finding = _new_finding(before, after)
        if finding is not None:
            kind = EventType.DELIVERY_VERIFICATION_FAILED
            seen = format_instant(after.verified_at) if after.verified_at else "-"
            events.append(
                DeliveryVerificationFailed(
                    event_id=event_id(kind, new.schedule_id, cid, finding, seen),
                    channel=outcome,
                    finding=finding,
                    **common,
                )
            )
            continue
        changed = before is None or before.status != after.status
        fact = (new.schedule_id, cid, f"a{after.attempts}", f"v{new.version}", holder)
        if after.status == DeliveryStatus.PUBLISHED and changed:
            kind = EventType.DELIVERY_PUBLISHED
            events.append(
                DeliveryPublished(event_id=event_id(kind, *fact), channel=outcome, **common)
            )
        elif after.status in (DeliveryStatus.FAILED, DeliveryStatus.SKIPPED) and changed:
            kind = EventType.DELIVERY_FAILED
            events.append(DeliveryFailed(event_id=event_id(kind, *fact), channel=outcome, **common))
        elif after.status == DeliveryStatus.RETRY_SCHEDULED and after.next_attempt_at is not None:
            kind = EventType.DELIVERY_RETRYING
            at = format_instant(after.next_attempt_at)
            events.append(
                DeliveryRetrying(
                    event_id=event_id(kind, *fact, at),
                    channel=outcome,
                    next_attempt_at=after.next_attempt_at,
                    **common,
                )
            )
    return events


def _post_event_type(old: Post | None, new: Post) -> type[PostEvent] | None:
    if old is None:
        return PostScheduled if new.status == PostStatus.SCHEDULED else None
    if new.status == old.status:
        bumped = new.version != old.version
        # publishing: the edit of a post waiting for its next attempt (``edit_waiting``)
        edited = new.status in (PostStatus.SCHEDULED, PostStatus.PUBLISHING)
        return PostUpdated if bumped and edited else None
    if new.status == PostStatus.SCHEDULED:
        return PostScheduled
    if new.status == PostStatus.CANCELLED:
        return PostCancelled
    if new.status == PostStatus.MISSED:
        return PostMissed
    if new.status == PostStatus.PUBLISHING:
        return PostClaimed
    return _FINISHED.get(new.status)


def _post_events(old_item: Item | None, new_item: Item) -> list[BaseEvent]:
    new = Post.from_item(dict(new_item))
    old = Post.from_item(dict(old_item)) if old_item else None
    common: dict[str, Any] = {
        "occurred_at": new.updated_at,
        "owner": new.owner,
        "schedule_id": new.schedule_id,
        "series_id": new_item.get("series_id"),
    }
    channels = _channels(new, new_item)
    delivering = old is not None and new.status in _DELIVERING
    events = _delivery_events(old, new, channels, common) if old is not None and delivering else []
    model = _post_event_type(old, new)
    if model is None:
        return events
    kind = model.model_fields["type"].default
    fact: list[object] = [kind, new.schedule_id, f"v{new.version}"]
    extra: dict[str, Any] = {}
    if model is PostClaimed:
        fact.append(new.lease_token or "-")
    elif issubclass(model, (PostPublished, PostPartiallyPublished, PostFailed)):
        fact.append(old.lease_token if old is not None and old.lease_token else "-")
        extra = {"published_at": new.published_at, "publish_lag_seconds": new.publish_lag_seconds}
    events.append(
        model(
            event_id=event_id(*fact),
            version=new.version,
            status=new.status.value,
            publish_at=new.publish_at,
            status_reason=new.status_reason,
            channels=list(channels.values()),
            **extra,
            **common,
        )
    )
    return events


def _stop_reason(item: Item | None) -> str | None:
    """Why a series item stopped materializing: its ``stopped_reason`` (``pending_limit``) while
    it is active, or its final status (``ended``, ``cancelled``); None while it runs or pauses."""
    if item is None:
        return None
    if item.get("status") in SERIES_FINAL_STATUSES:
        return str(item["status"])
    reason = item.get("stopped_reason")
    return str(reason) if reason else None


def _series_events(old: Item | None, new: Item) -> list[BaseEvent]:
    reason = _stop_reason(new)
    if reason is None or reason == _stop_reason(old):
        return []
    series_id = str(new.get("series_id") or str(new.get("pk", "")).split("#", 1)[-1])
    when = new.get("updated_at") or new.get("created_at")
    if not when or "owner" not in new:
        return []
    version = new.get("version", "-")
    return [
        SeriesStopped(
            event_id=event_id(
                EventType.SERIES_STOPPED,
                series_id,
                f"v{version}|{reason}|{new.get('materialized_through', '')}",
            ),
            occurred_at=instant_from_storage(str(when)),
            owner=str(new["owner"]),
            series_id=series_id,
            reason=reason,
        )
    ]


def _import(old: Item | None, new: Item) -> list[BaseEvent]:
    return import_events(old, new, event_id)


def _media(old: Item | None, new: Item) -> list[BaseEvent]:
    return media_events(old, new, event_id)


#: Which items of ``PostsTable`` report events, and how: ``(is this sort key one of them,
#: old and new image -> events)``; the first match derives. A new kind of item that reports
#: events is one entry here (and its models in ``models/events.py``).
DERIVERS: tuple[
    tuple[Callable[[str], bool], Callable[[Item | None, Item], list[BaseEvent]]], ...
] = (
    (lambda sk: sk == keys.POST_SK, _post_events),
    (lambda sk: sk.startswith(SERIES_SK_PREFIX), _series_events),
    (lambda sk: sk.startswith(MEDIA_SK_PREFIX), _media),
    (is_import_record, _import),
)
