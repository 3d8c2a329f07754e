"""A series' own changes to its occurrence posts: after an edit, pause or delete,
cancel the not-yet-claimed, not-detached occurrences the series no longer has, and give the
kept ones the new post fields. Used by the API (at once) and the materializer (to finish a
change whose request stopped halfway: the series keeps ``superseded`` until it is done).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Protocol

from scheduled_posts import keys, recurrence
from scheduled_posts.clock import Clock, epoch_seconds
from scheduled_posts.data.counters import release_pending_best_effort
from scheduled_posts.data.posts import PostRepository
from scheduled_posts.data.series import SeriesRepository
from scheduled_posts.errors import NotFoundError, StateConflictError, VersionConflictError
from scheduled_posts.lifecycle import transitions
from scheduled_posts.lifecycle.reasons import OccurrenceCancelReason
from scheduled_posts.models.post import Delivery, Post, PostStatus
from scheduled_posts.models.series import Series, SeriesStatus
from scheduled_posts.settings import Settings

#: How far past ``now + RECURRENCE_HORIZON_HOURS`` a change looks for occurrences a racing
#: materializer (whose clock may be a little ahead) could have written.
_EDIT_SLACK = timedelta(minutes=5)


class Stores(Protocol):
    """What these functions need: the posts, the series, the settings and the clock."""

    @property
    def posts(self) -> PostRepository: ...

    @property
    def series(self) -> SeriesRepository: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def clock(self) -> Clock: ...


def candidates(series: Series, now: datetime, deps: Stores) -> list[Post]:
    """The not-yet-claimed, not-detached occurrence posts of ``series`` that may exist, each
    read strongly consistent (the version a change writes under).

    * Due already but not yet claimed (a post can be edited until its claim), up to
      ``MISFIRE_GRACE_SECONDS`` back: those due more than ``_EDIT_SLACK`` ago are found with
      the ``by_series`` GSI (written long before, so indexed), the last ``_EDIT_SLACK`` with
      point reads of their derived ids (a GSI could miss one written a moment ago).
    * Ahead, where a run could have written: up to the later of ``materialized_through`` and
      the horizon, but within ``ends_at`` and never past the ``RECURRENCE_MAX_AHEAD``-th
      occurrence from ``now`` plus ``_EDIT_SLACK`` for a racing run's clock (a run writes at
      most that many ahead of its own now): about ``RECURRENCE_MAX_AHEAD`` point reads,
      however frequent the rule or long the horizon.
    """
    settings = deps.settings
    recent = now - _EDIT_SLACK
    oldest = now - timedelta(seconds=settings.MISFIRE_GRACE_SECONDS)
    ids: list[str] = []
    if oldest < recent:
        ids += deps.series.scheduled_occurrences(series.series_id, after=oldest, before=recent)
    through = max(
        series.materialized_through,
        now + timedelta(hours=settings.RECURRENCE_HORIZON_HOURS) + _EDIT_SLACK,
    )
    if series.ends_at is not None:
        through = min(through, series.ends_at)
    ahead = 0
    for occurrence in recurrence.iter_occurrences(series.rule, not_before=max(recent, oldest)):
        at = occurrence.occurrence_at
        if at > through:
            break
        if at >= now:
            ahead += 1
            if ahead == settings.RECURRENCE_MAX_AHEAD:
                through = min(through, at + _EDIT_SLACK)
        ids.append(recurrence.occurrence_schedule_id(series.series_id, at))
    found: list[Post] = []
    for schedule_id in dict.fromkeys(ids):
        post = deps.posts.get(schedule_id)
        if (
            post is not None
            and post.series_id == series.series_id
            and post.status == PostStatus.SCHEDULED
            and not post.detached
        ):
            found.append(post)
    return found


def _late(post: Post, now: datetime, settings: Settings) -> bool:
    margin = settings.LOOKAHEAD_SECONDS + keys.LATE_MARGIN_SECONDS
    return post.publish_at <= now + timedelta(seconds=margin)


def cancel(post: Post, reason: OccurrenceCancelReason, deps: Stores) -> bool:
    """Cancel one not-yet-claimed occurrence for its series (it stays attached); ``False``
    when it was claimed or changed meanwhile (then it is no longer the series' to change)."""
    now, settings = deps.clock.now(), deps.settings
    expires_at = epoch_seconds(now + timedelta(days=settings.RETENTION_DAYS))
    new = transitions.cancelled(
        post, reason=reason.value, detach=False, now=now, expires_at=expires_at
    )
    try:
        deps.posts.replace(post, new, old_late=_late(post, now, settings), new_late=False)
    except (StateConflictError, VersionConflictError, NotFoundError):
        return False
    release_pending_best_effort(
        deps.posts.posts_table, owner=post.owner, schedule_id=post.schedule_id
    )
    return True


def _update(post: Post, series: Series, deps: Stores) -> None:
    """Give a not-yet-claimed occurrence the series' post fields (version + 1)."""
    now, settings = deps.clock.now(), deps.settings
    new = post.model_copy(
        update={
            **series.post_fields(),
            "deliveries": {
                cid: post.deliveries.get(cid) or Delivery(channel_id=cid)
                for cid in series.channel_ids
            },
            "version": post.version + 1,
            "updated_at": now,
        },
        deep=True,
    )
    late = _late(post, now, settings)
    try:
        deps.posts.replace(post, new, old_late=late, new_late=late)
    except (StateConflictError, VersionConflictError, NotFoundError):
        return  # claimed (it fires as it was) or detached meanwhile


def apply_change(old: Series, new: Series, *, reason: OccurrenceCancelReason, deps: Stores) -> int:
    """After ``new`` was saved: cancel the old series' occurrences the new one does not keep
    (all of them when it is no longer active) and update the kept ones' post fields.
    Returns how many were cancelled."""
    now = deps.clock.now()
    found = candidates(old, now, deps)
    if not found:
        return 0
    keep: set[datetime] = set()
    if new.status == SeriesStatus.ACTIVE:
        last = max(p.publish_at for p in found)
        for occurrence in recurrence.iter_occurrences(new.rule, not_before=now):
            if occurrence.occurrence_at > last:
                break
            keep.add(occurrence.occurrence_at)
        if new.ends_at is not None:
            keep = {k for k in keep if k <= new.ends_at}
        keep = {k for k in keep if k >= new.starts_at}
    fields_changed = old.post_fields() != new.post_fields()
    cancelled = 0
    for post in found:
        if post.occurrence_at not in keep:
            cancelled += cancel(post, reason, deps)
        elif fields_changed:
            _update(post, new, deps)
    return cancelled
