"""Materialization: a series' next occurrences written ahead as ordinary posts.

For an ``active`` series at ``now``, :func:`extend_series` makes every occurrence in
``[now, now + RECURRENCE_HORIZON_HOURS]`` exist as a post, but never more than
``RECURRENCE_MAX_AHEAD`` upcoming ones, and never an occurrence before ``now`` (no back-fill).
Each post's ``schedule_id`` is derived from the series id and the occurrence's instant, and is
written with a conditional put that does nothing when the post exists, in the same transaction
as a check that the series is still at the version the occurrence was computed from. So a run
that is repeated, runs twice at once, crashes halfway or races an edit never writes an
occurrence twice, and never writes one under a rule an edit has replaced.

The series then records ``materialized_through`` (every occurrence at or before it exists) and
``extend_at``, the instant it next needs work: when a new occurrence enters the horizon, or when
half of the ``RECURRENCE_MAX_AHEAD`` buffer has fired. ``extend_at`` keys the series' entry in
the materialization index, so :func:`materialize_due` reads only the series due for extension.

When ``MAX_PENDING_POSTS`` is reached the series stops with ``stopped_reason =
pending_limit`` (shown by the API; metric ``SeriesStopped``) and is retried on every run.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from scheduled_posts import keys, recurrence
from scheduled_posts.clock import Clock
from scheduled_posts.data.posts import PostRepository
from scheduled_posts.data.series import (
    OccurrencesExhaustedError,
    SeriesChangedError,
    SeriesRepository,
)
from scheduled_posts.errors import LimitExceededError
from scheduled_posts.lifecycle import series_transitions
from scheduled_posts.lifecycle.metric_names import Metric
from scheduled_posts.logic import occurrences
from scheduled_posts.logic.promotion import promote_if_due
from scheduled_posts.models.messages import DueEntry
from scheduled_posts.models.post import Delivery, Post, PostStatus
from scheduled_posts.models.series import Series, SeriesStatus, StopReason
from scheduled_posts.observability import logger, metrics
from scheduled_posts.recurrence import Occurrence
from scheduled_posts.settings import Settings

_ONE_MS = timedelta(milliseconds=1)
#: The materializer's watermark trails ``now`` by this much, so an index entry committed by a
#: request that started before a run (``extend_at = now`` of that request) is still read.
WATERMARK_MARGIN_SECONDS = 60
#: A shard with no watermark has no series (a series create starts its shard's watermark);
#: it is read from this far back only as a precaution.
FIRST_RUN_LOOKBACK_SECONDS = 3600


@dataclass(frozen=True)
class MaterializeDeps:
    """Collaborators: repositories, settings, clock and an optional promoter (sends a due
    entry to the dispatch queue now, for an occurrence due within the lookahead)."""

    series: SeriesRepository
    posts: PostRepository
    settings: Settings
    clock: Clock
    promoter: Callable[[DueEntry], None] | None = None


@dataclass
class MaterializeResult:
    """What one :func:`materialize_due` run did (counts of series and occurrence posts)."""

    series_read: int = 0
    series_extended: int = 0
    occurrences_written: int = 0
    series_stopped: list[str] = field(default_factory=list)
    failures: int = 0


def _late(publish_at: datetime, now: datetime, settings: Settings) -> bool:
    margin = settings.LOOKAHEAD_SECONDS + keys.LATE_MARGIN_SECONDS
    return publish_at <= now + timedelta(seconds=margin)


def occurrence_post(
    series: Series, occurrence: Occurrence, now: datetime, settings: Settings
) -> Post:
    """The ``scheduled`` post of one occurrence (version 1; due keys set)."""
    schedule_id = recurrence.occurrence_schedule_id(series.series_id, occurrence.occurrence_at)
    at = occurrence.occurrence_at
    shard = keys.shard_for(schedule_id, settings.WRITE_SHARD_COUNT)
    return Post(
        schedule_id=schedule_id,
        owner=series.owner,
        status=PostStatus.SCHEDULED,
        publish_at=at,
        **series.post_fields(),
        deliveries={cid: Delivery(channel_id=cid) for cid in series.channel_ids},
        version=1,
        created_at=now,
        updated_at=now,
        shard=shard,
        series_id=series.series_id,
        occurrence_at=at,
    )


def _promote(post: Post, now: datetime, deps: MaterializeDeps) -> None:
    promote_if_due(post, now, promoter=deps.promoter, settings=deps.settings)


def _write(
    series: Series, occurrence: Occurrence, now: datetime, deps: MaterializeDeps
) -> tuple[bool, bool]:
    """Write one occurrence (or revive one the series itself cancelled); returns (written,
    new): whether this call wrote it, and whether it was a new post (counted against
    ``max_occurrences``) rather than a revived one."""
    settings = deps.settings
    post = occurrence_post(series, occurrence, now, settings)
    late = _late(post.publish_at, now, settings)
    created = deps.series.create_occurrence(
        post,
        series_version=series.version,
        max_occurrences=series.max_occurrences,
        late=late,
        max_pending=settings.MAX_PENDING_POSTS,
    )
    written = created
    if not created:
        stored = deps.posts.get(post.schedule_id)
        if (
            stored is not None
            and stored.series_id == series.series_id
            and stored.status == PostStatus.CANCELLED
            and not stored.detached
        ):
            revived = post.model_copy(
                update={"version": stored.version + 1, "created_at": stored.created_at}
            )
            written = deps.series.revive_occurrence(
                stored,
                revived,
                series_version=series.version,
                late=late,
                max_pending=settings.MAX_PENDING_POSTS,
            )
            post = revived
    if written:
        _promote(post, now, deps)
    return written, created


def _upcoming(series: Series, *, now: datetime, through: datetime, limit: int) -> list[Occurrence]:
    """Occurrences of the series in ``[now, through]`` (at most ``limit``)."""
    if through < now:
        return []
    found = recurrence.occurrences(series.rule, series.bounds, count=limit, not_before=now)
    return [o for o in found if o.occurrence_at <= through]


def plan_extension(
    series: Series, *, now: datetime, settings: Settings
) -> tuple[list[Occurrence], datetime]:
    """The occurrences to write now and the ``materialized_through`` they complete.

    Pure. Writes at most ``RECURRENCE_MAX_AHEAD`` minus the occurrences already materialized
    ahead of ``now``; none before ``now`` or after ``now + RECURRENCE_HORIZON_HOURS``.
    ``max_occurrences`` is not counted here: a crashed run may have written (and counted) some
    of the planned occurrences already. The series item counts each new occurrence in its
    write and refuses the one past ``max_occurrences`` (:class:`OccurrencesExhaustedError`).
    """
    limit = settings.RECURRENCE_MAX_AHEAD
    horizon_end = now + timedelta(hours=settings.RECURRENCE_HORIZON_HOURS)
    ahead = len(_upcoming(series, now=now, through=series.materialized_through, limit=limit))
    room = limit - ahead
    start = max(series.materialized_through + _ONE_MS, now)
    if room <= 0:
        return [], series.materialized_through
    wanted = recurrence.occurrences(series.rule, series.bounds, count=room, not_before=start)
    within = [o for o in wanted if o.occurrence_at <= horizon_end]
    if len(within) == room:  # the count limited it: through the last one written
        return within, within[-1].occurrence_at
    return within, max(horizon_end, series.materialized_through)


def next_extension(series: Series, *, now: datetime, settings: Settings) -> datetime | None:
    """When the series next needs the materializer (never before ``now``), or ``None`` when it
    has ended: no occurrence follows ``materialized_through`` within its bounds and none of
    the written ones is still ahead of ``now``.

    With a full buffer (``RECURRENCE_MAX_AHEAD`` upcoming) that is when half of it has fired;
    otherwise when the next occurrence enters the horizon. With nothing left to write, it is
    when the last written occurrence is due (decision "A series ends when its last occurrence
    is due"): the series stays ``active`` until then.
    """
    limit = settings.RECURRENCE_MAX_AHEAD
    following = recurrence.occurrences(
        series.rule,
        series.bounds,
        count=1,
        not_before=series.materialized_through + _ONE_MS,
        already=series.occurrence_count,
    )
    if not following:
        ahead = _upcoming(
            series, now=now + _ONE_MS, through=series.materialized_through, limit=limit
        )
        return ahead[-1].occurrence_at if ahead else None
    upcoming = _upcoming(series, now=now, through=series.materialized_through, limit=limit)
    if len(upcoming) >= limit:
        return max(upcoming[len(upcoming) - math.ceil(limit / 2)].occurrence_at, now)
    entering = following[0].occurrence_at - timedelta(hours=settings.RECURRENCE_HORIZON_HOURS)
    return max(entering, now)


@dataclass(frozen=True)
class Extension:
    """A saved extension: the series as saved and how many posts this call wrote."""

    series: Series
    written: int


def _report(series: Series, status: SeriesStatus, written: int, stopped: StopReason | None) -> None:
    """The metrics and logs of one saved extension of ``series``."""
    if written:
        metrics.add_metric(
            name=Metric.OCCURRENCES_MATERIALIZED,
            unit=Metric.OCCURRENCES_MATERIALIZED.unit,
            value=written,
        )
    if stopped is not None:
        metrics.add_metric(name=Metric.SERIES_STOPPED, unit=Metric.SERIES_STOPPED.unit, value=1)
        logger.warning(
            "series stopped materializing",
            extra={"series_id": series.series_id, "reason": stopped.value},
        )
    logger.info(
        "series materialized",
        extra={"series_id": series.series_id, "written": written, "status": status.value},
    )


def extend_series(
    series: Series, *, deps: MaterializeDeps, cleanup: bool = True
) -> Extension | None:
    """Materialize an ``active`` series at ``deps.clock.now()``; returns the saved series, or
    ``None`` when it changed meanwhile (an edit or another run won; they did the work).
    First finishes an unfinished change (``superseded``) unless ``cleanup`` is false (the
    request that made the change did it already).

    Raises nothing for the pending limit: the series is saved with ``stopped_reason``.
    """
    if series.status != SeriesStatus.ACTIVE:
        finished = finish_change(series, deps=deps, cleanup=cleanup)
        return Extension(finished, 0) if finished is not None else None
    if cleanup:
        apply_superseded(series, deps)
    settings, now = deps.settings, deps.clock.now()
    planned, through = plan_extension(series, now=now, settings=settings)
    written = counted = done = 0
    stopped: StopReason | None = None
    count = series.occurrence_count
    try:
        for occurrence in planned:
            was_written, is_new = _write(series, occurrence, now, deps)
            written += was_written
            counted += is_new
            done += 1
    except LimitExceededError:
        stopped = StopReason.PENDING_LIMIT
        through = planned[done - 1].occurrence_at if done else series.materialized_through
    except OccurrencesExhaustedError:
        through = planned[done - 1].occurrence_at if done else series.materialized_through
        count = series.max_occurrences or count
    except SeriesChangedError:
        return None
    count = max(count, series.occurrence_count + counted)
    if planned and done == len(planned) and count >= (series.max_occurrences or count + 1):
        # The last of max_occurrences is written: nothing past it is, so the series is
        # materialized through it, not through the horizon (what the answers count from).
        through = min(through, planned[-1].occurrence_at)
    progressed = series.model_copy(
        update={
            "materialized_through": through,
            # As counted by the writes (this run's and any crashed or concurrent one's); the
            # save does not store it, the series item counts itself.
            "occurrence_count": count,
            "stopped_reason": stopped,
            "superseded": None,
            "superseded_reason": None,
        }
    )
    extend_at = next_extension(progressed, now=now, settings=settings)
    if stopped is not None:
        extend_at = now + timedelta(seconds=settings.MATERIALIZE_INTERVAL_SECONDS)
    new = series_transitions.extended(progressed, extend_at=extend_at)
    try:
        deps.series.save(series, new)
    except SeriesChangedError:
        return None
    _report(series, new.status, written, stopped)
    return Extension(new, written)


def apply_superseded(series: Series, deps: MaterializeDeps) -> None:
    """Finish an unfinished change: cancel or update the old timing's occurrences."""
    old = series.superseded_series()
    if old is None or series.superseded_reason is None:
        return
    occurrences.apply_change(old, series, reason=series.superseded_reason, deps=deps)


def finish_change(series: Series, *, deps: MaterializeDeps, cleanup: bool = True) -> Series | None:
    """For a series that is not active (paused, ended, cancelled): finish its unfinished
    change, if any, and save it without ``superseded`` and out of the index. Returns the saved
    series (``series`` itself when there was nothing to do), or ``None`` when it changed
    meanwhile."""
    if series.superseded is None:
        return series
    if cleanup:
        apply_superseded(series, deps)
    new = series.model_copy(
        update={"superseded": None, "superseded_reason": None, "extend_at": None}
    )
    try:
        deps.series.save(series, new)
    except SeriesChangedError:
        return None
    return new


def _hours(start: datetime, end: datetime) -> list[datetime]:
    hour = start.replace(minute=0, second=0, microsecond=0)
    hours = []
    while hour <= end:
        hours.append(hour)
        hour += timedelta(hours=1)
    return hours


def materialize_due(*, deps: MaterializeDeps) -> MaterializeResult:
    """Extend every series whose ``extend_at`` has come, shard by shard, from the shard's
    watermark to now (Queries on ``SERIES#<hour>#<shard>`` partitions, never a Scan), then
    advance the watermark to ``now - WATERMARK_MARGIN_SECONDS`` (or to just before the
    earliest entry that failed, so it is read again next run)."""
    settings, now = deps.settings, deps.clock.now()
    result = MaterializeResult()
    upper = keys.series_order_key(now, keys.SK_HIGH)
    for shard in range(settings.WRITE_SHARD_COUNT):
        mark = deps.series.watermark(shard) or now - timedelta(seconds=FIRST_RUN_LOOKBACK_SECONDS)
        advance_to = now - timedelta(seconds=WATERMARK_MARGIN_SECONDS)
        for hour in _hours(mark, now):
            for entry in deps.series.index_entries(keys.series_bucket(hour, shard), upper=upper):
                result.series_read += 1
                try:
                    _extend_entry(entry.series_id, deps=deps, result=result)
                except Exception:
                    result.failures += 1
                    advance_to = min(advance_to, entry.extend_at - _ONE_MS)
                    logger.exception(
                        "series extension failed", extra={"series_id": entry.series_id}
                    )
        if advance_to > mark:
            deps.series.advance_watermark(shard, advance_to)
    return result


def _extend_entry(series_id: str, *, deps: MaterializeDeps, result: MaterializeResult) -> None:
    series = deps.series.get(series_id)
    if series is None or series.extend_at is None:
        return  # a stale entry: the series moved on (its save deleted or moved the entry)
    if series.extend_at > deps.clock.now():
        return
    extension = extend_series(series, deps=deps)
    if extension is None:
        return
    result.series_extended += 1
    if extension.series.stopped_reason is not None:
        result.series_stopped.append(series_id)
    result.occurrences_written += extension.written
