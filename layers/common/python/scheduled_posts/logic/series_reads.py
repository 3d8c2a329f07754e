"""Recurring schedules, what stores nothing: the rule checks shared with preview, the API view
of a series and the reads (get, list, upcoming occurrences). The changes are
``logic/series.py``; the series' arrows and guards ``lifecycle/series_transitions.py``.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from scheduled_posts import recurrence
from scheduled_posts.clock import format_instant
from scheduled_posts.errors import NotFoundError, ValidationFailedError
from scheduled_posts.logic.cursor import CursorCodec
from scheduled_posts.models.recurring import (
    OccurrenceOut,
    PreviewRequest,
    RuleFields,
    SeriesOccurrenceOut,
    SeriesOut,
)
from scheduled_posts.models.series import OPEN_SERIES_STATUSES, Series, SeriesStatus
from scheduled_posts.recurrence import Bounds, Occurrence, RuleError
from scheduled_posts.settings import Settings

if TYPE_CHECKING:
    from scheduled_posts.logic.series import SeriesDeps

#: How many next occurrences a series answer shows (``docs/recurring.md``).
NEXT_OCCURRENCES = 5


class SeriesNotFoundError(NotFoundError):
    """No series with that id for this caller."""


def rule_problem(exc: RuleError) -> ValidationFailedError:
    """The 422 for a rule the service refuses: ``errors[0]`` names the field and the kind."""
    return ValidationFailedError(
        "the recurrence rule is not valid",
        errors=[{"loc": ["body", exc.field], "msg": exc.message, "type": exc.kind}],
    )


def checked_bounds(fields: RuleFields, *, starts_at: datetime, settings: Settings) -> Bounds:
    """The bounds of ``fields`` from ``starts_at``, after checking the rule against them.

    Raises
    ------
    ValidationFailedError
        ``ends_at`` not after ``starts_at``, an interval under
        ``MIN_RECURRENCE_INTERVAL_SECONDS``, a rule that never matches (31 February), or no
        occurrence before ``ends_at``.
    """
    if fields.ends_at is not None and fields.ends_at <= starts_at:
        raise rule_problem(RuleError("ends_at", "ends_before_start", "must be after starts_at"))
    bounds = fields.bounds(starts_at)
    try:
        recurrence.check_rule(
            fields.rule(), bounds, min_interval_seconds=settings.MIN_RECURRENCE_INTERVAL_SECONDS
        )
    except RuleError as exc:
        raise rule_problem(exc) from exc
    return bounds


def preview_occurrences(
    request: PreviewRequest, *, now: datetime, settings: Settings
) -> list[Occurrence]:
    """The first ``request.count`` occurrences at or after ``starts_at`` (default ``now``)
    within the bounds; stores nothing.

    Raises
    ------
    ValidationFailedError
        Like :func:`checked_bounds` (the same 422 problems as create).
    """
    starts_at = request.starts_at or now
    bounds = checked_bounds(request, starts_at=starts_at, settings=settings)
    return recurrence.occurrences(request.rule(), bounds, count=request.count)


def series_out(series: Series, *, now: datetime) -> SeriesOut:
    """The API shape of a series, with its next :data:`NEXT_OCCURRENCES` occurrences."""
    upcoming: list[Occurrence] = []
    if series.status == SeriesStatus.ACTIVE:
        upcoming = recurrence.occurrences(
            series.rule,
            series.bounds,
            count=NEXT_OCCURRENCES,
            not_before=now,
            already=_used_before(series, now),
        )
    return SeriesOut(
        series_id=series.series_id,
        status=series.status.value,
        content=series.content,
        media_ids=list(series.media_ids),
        channel_ids=list(series.channel_ids),
        variants=dict(series.variants),
        parts=list(series.parts),
        first_comment=series.first_comment,
        timezone=series.timezone,
        cron=series.cron,
        slots=series.slots,
        starts_at=format_instant(series.starts_at),
        ends_at=format_instant(series.ends_at) if series.ends_at else None,
        max_occurrences=series.max_occurrences,
        version=series.version,
        created_at=format_instant(series.created_at),
        updated_at=format_instant(series.updated_at),
        materialized_through=format_instant(max(series.materialized_through, series.starts_at)),
        stopped_reason=series.stopped_reason.value if series.stopped_reason else None,
        next_occurrences=[OccurrenceOut.of(o) for o in upcoming],
    )


def _used_before(series: Series, now: datetime) -> int:
    """Occurrences of ``max_occurrences`` used before ``now``: those written, less the ones
    written ahead of ``now``."""
    if series.max_occurrences is None:
        return 0
    ahead = recurrence.occurrences(
        series.rule, series.bounds, count=series.occurrence_count or 1, not_before=now
    )
    written_ahead = sum(1 for o in ahead if o.occurrence_at <= series.materialized_through)
    return max(series.occurrence_count - written_ahead, 0)


def etag(series: Series) -> str:
    """The ``ETag`` of a series: its version, quoted (RFC 9110 section 8.8.3)."""
    return f'"{series.version}"'


def owned(owner: str, series_id: str, deps: SeriesDeps) -> Series:
    """The caller's series, strongly consistent.

    Raises
    ------
    SeriesNotFoundError
        Missing or another user's (404).
    """
    series = deps.series.get(series_id)
    if series is None or series.owner != owner:
        raise SeriesNotFoundError("recurring schedule not found")
    return series


def get_series(owner: str, series_id: str, *, deps: SeriesDeps) -> Series:
    """The caller's series.

    Raises
    ------
    SeriesNotFoundError
        Missing or another user's.
    """
    return owned(owner, series_id, deps)


def list_series(
    owner: str, *, limit: int, cursor: str | None, codec: CursorCodec, deps: SeriesDeps
) -> tuple[list[Series], str | None]:
    """The caller's series in creation order, ``limit`` (1-100) per page, and the next cursor.

    Raises
    ------
    InvalidCursorError
        A forged or altered cursor, or one issued to another user or for posts.
    """
    query = "series"
    after = codec.decode(cursor, owner=owner, query=query) if cursor is not None else None
    page = deps.series.query_owner(owner, after=after, limit=limit)
    next_cursor = (
        codec.encode(owner=owner, last_key=page.last_key, query=query) if page.last_key else None
    )
    return page.series, next_cursor


def list_occurrences(
    owner: str, series_id: str, *, limit: int, deps: SeriesDeps
) -> list[SeriesOccurrenceOut]:
    """The next ``limit`` occurrences of the caller's series from now, materialized or not,
    each with its post's ``schedule_id`` and ``status`` once the post exists.

    Raises
    ------
    SeriesNotFoundError
        Missing or another user's.
    """
    series = owned(owner, series_id, deps)
    now = deps.clock.now()
    if series.status not in OPEN_SERIES_STATUSES and series.materialized_through < now:
        return []
    found = recurrence.occurrences(
        series.rule, series.bounds, count=limit, not_before=now, already=_used_before(series, now)
    )
    posts = {
        p.schedule_id: p
        for p in deps.series.occurrences(
            series_id, lower=format_instant(now), limit=max(limit * 2, 20)
        )
    }
    items = []
    for occurrence in found:
        schedule_id = recurrence.occurrence_schedule_id(series_id, occurrence.occurrence_at)
        post = posts.get(schedule_id) or (
            deps.posts.get(schedule_id)
            if occurrence.occurrence_at <= series.materialized_through
            else None
        )
        if post is None and series.status != SeriesStatus.ACTIVE:
            continue
        items.append(
            SeriesOccurrenceOut(
                occurrence_at=format_instant(occurrence.occurrence_at),
                local_time=occurrence.local_time_text,
                schedule_id=post.schedule_id if post else None,
                status=post.status.value if post else None,
                detached=post.detached if post else False,
            )
        )
    return items
