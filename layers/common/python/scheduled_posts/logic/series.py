"""Recurring schedules (issue 13): create, read, list, edit, pause, resume and delete a series,
and the rule checks shared with preview.

The rules themselves (cron and weekly slots in an IANA zone, the DST rule, bounds) live in
``scheduled_posts.recurrence``; materialization in ``scheduled_posts.logic.materialize``. Here:

* Rule problems become the API's 422 (:func:`rule_problem`); ``MIN_RECURRENCE_INTERVAL_SECONDS``
  and ``MAX_SERIES_PER_USER`` are applied; channels must be the caller's.
* Create, PATCH and resume materialize at once (best effort: the series' index entry has
  ``extend_at = now``, so the materializer does it if this request could not).
* A PATCH first saves the series with version + 1 (no occurrence computed under the old version
  can be written after that: ``data.series``), then, for every not-yet-claimed occurrence that is
  not detached, cancels it when the new timing no longer has it and applies new post fields
  otherwise. Pause and delete cancel them all. Another user's series is a 404.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from scheduled_posts import keys, recurrence
from scheduled_posts.clock import Clock, format_instant
from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.data.media import MediaRepository
from scheduled_posts.data.posts import PostRepository
from scheduled_posts.data.series import SeriesChangedError, SeriesRepository
from scheduled_posts.errors import (
    NotFoundError,
    ServiceError,
    StateConflictError,
    ValidationFailedError,
    VersionConflictError,
)
from scheduled_posts.lifecycle.reasons import OccurrenceCancelReason
from scheduled_posts.logic import materialize, occurrences
from scheduled_posts.logic.cursor import CursorCodec
from scheduled_posts.logic.materialize import MaterializeDeps
from scheduled_posts.logic.network_rules import channel_errors, patched_channel_errors
from scheduled_posts.logic.posts import Promoter, parse_if_match
from scheduled_posts.models.recurring import (
    OccurrenceOut,
    PreviewRequest,
    RuleFields,
    SeriesCreate,
    SeriesOccurrenceOut,
    SeriesOut,
    SeriesPatch,
)
from scheduled_posts.models.series import OPEN_SERIES_STATUSES, Series, SeriesStatus
from scheduled_posts.observability import logger
from scheduled_posts.recurrence import Bounds, Occurrence, RuleError
from scheduled_posts.settings import Settings

_ONE_MS = timedelta(milliseconds=1)
#: How many next occurrences a series answer shows (issue 13).
NEXT_OCCURRENCES = 5
#: Tries of a write without ``If-Match`` that lost a race (to the materializer, say).
WRITE_ATTEMPTS = 3
#: How far past ``now + RECURRENCE_HORIZON_HOURS`` an edit looks for occurrences a racing
#: materializer (whose clock may be a little ahead) could have written.
_EDIT_SLACK = timedelta(minutes=5)


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


@dataclass(frozen=True)
class SeriesDeps:
    """Collaborators of the series logic."""

    series: SeriesRepository
    posts: PostRepository
    channels: ChannelRepository
    settings: Settings
    clock: Clock
    promoter: Promoter | None = None
    media: MediaRepository | None = None  # the uploads media_ids name (None: not checked)

    @property
    def materialize(self) -> MaterializeDeps:
        return MaterializeDeps(
            series=self.series,
            posts=self.posts,
            settings=self.settings,
            clock=self.clock,
            promoter=self.promoter,
        )


# ------------------------------------------------------------------ views


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


def _owned(owner: str, series_id: str, deps: SeriesDeps) -> Series:
    series = deps.series.get(series_id)
    if series is None or series.owner != owner:
        raise SeriesNotFoundError("recurring schedule not found")
    return series


def _raise_channel_errors(series: Series, patch: SeriesPatch, deps: SeriesDeps) -> None:
    """The posts' channel rules for the fields ``patch`` leaves ``series`` with (a 422)."""
    errors = patched_channel_errors(
        series.owner, series, patch, channels=deps.channels, media=deps.media
    )
    if errors:
        raise ValidationFailedError("the request is not valid", errors)


def _materialize_now(series: Series, deps: SeriesDeps) -> Series:
    """Finish the series' unfinished change (errors propagate: the request must not answer
    200 while the old rule's occurrences are still scheduled), then extend at once (best
    effort); the fresh series either way."""
    materialize.apply_superseded(series, deps.materialize)
    try:
        extension = materialize.extend_series(series, deps=deps.materialize, cleanup=False)
    except ServiceError:
        raise
    except Exception:  # the index entry (extend_at = now) makes the materializer do it
        logger.exception("immediate materialization failed", extra={"series_id": series.series_id})
        return series
    if extension is not None:
        return extension.series
    return deps.series.get(series.series_id) or series


# ------------------------------------------------------------------ create and read


def create_series(
    request: SeriesCreate, *, owner: str, deps: SeriesDeps, series_id: str | None = None
) -> Series:
    """Create an ``active`` series (version 1) and materialize its first occurrences at once.

    Raises
    ------
    ValidationFailedError
        A rule problem (:func:`checked_bounds`), a channel that is not the caller's, a text
        over a channel's length rule or media for a Mastodon or Bluesky channel (as for a post,
        ``logic/network_rules.py``), or ``MAX_SERIES_PER_USER`` open series already
        (``series_limit``).
    """
    settings, now = deps.settings, deps.clock.now()
    starts_at = request.starts_at or now
    checked_bounds(request, starts_at=starts_at, settings=settings)
    errors = channel_errors(
        owner,
        request.channel_ids,
        channels=deps.channels,
        content=request.content,
        media_ids=request.media_ids,
        media=deps.media,
    )
    if errors:
        raise ValidationFailedError("the request is not valid", errors)
    series_id = series_id or str(uuid.uuid4())
    rule = request.rule()
    series = Series(
        series_id=series_id,
        owner=owner,
        status=SeriesStatus.ACTIVE,
        content=request.content,
        media_ids=list(request.media_ids),
        channel_ids=list(request.channel_ids),
        timezone=rule.timezone,
        cron=rule.cron,
        slots=[s.model_dump(mode="json") for s in request.slots] if request.slots else None,
        starts_at=starts_at,
        ends_at=request.ends_at,
        max_occurrences=request.max_occurrences,
        created_at=now,
        updated_at=now,
        materialized_through=min(starts_at, now) - _ONE_MS,
        extend_at=now,
        shard=keys.shard_for(series_id, settings.WRITE_SHARD_COUNT),
    )
    deps.series.start_watermark(
        series.shard, now - timedelta(seconds=materialize.WATERMARK_MARGIN_SECONDS)
    )
    try:
        stored = deps.series.create(series, max_series=settings.MAX_SERIES_PER_USER)
    except ServiceError as exc:
        if exc.status != 422:
            raise
        raise ValidationFailedError(
            "the request is not valid",
            [{"loc": ["body"], "msg": exc.detail, "type": "series_limit"}],
        ) from exc
    if stored is not series:
        return stored
    logger.info("series created", extra={"series_id": series_id})
    return _materialize_now(series, deps)


def get_series(owner: str, series_id: str, *, deps: SeriesDeps) -> Series:
    """The caller's series.

    Raises
    ------
    SeriesNotFoundError
        Missing or another user's.
    """
    return _owned(owner, series_id, deps)


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
    series = _owned(owner, series_id, deps)
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


# ------------------------------------------------------------------ changes


def _open(owner: str, series_id: str, deps: SeriesDeps, expected: frozenset[str] | None) -> Series:
    series = _owned(owner, series_id, deps)
    if series.status not in OPEN_SERIES_STATUSES:
        raise StateConflictError(
            f"the recurring schedule is {series.status.value}; it can no longer be changed"
        )
    if expected is not None and etag(series) not in expected:
        raise VersionConflictError(
            f"If-Match does not match the current version ({series.version})"
        )
    return series


def _change(
    owner: str,
    series_id: str,
    *,
    if_match: str | None,
    deps: SeriesDeps,
    build: Any,
    reason: OccurrenceCancelReason,
) -> Series:
    """Save ``build(series, now)`` (version + 1) with If-Match and race retries, then apply the
    change to the occurrences and materialize at once.

    The saved series records the old one as ``superseded`` (and an index entry due now), so
    when this request stops halfway the materializer finishes the change; whoever finishes it
    clears the record. A series that still records an unfinished change (a request that
    stopped halfway, then this one before any materializer run) has that change finished
    first: the record holds one old version, so saving over it would leave the older
    version's occurrences scheduled under their old rule and content.
    """
    expected = parse_if_match(if_match)
    for attempt in range(1, WRITE_ATTEMPTS + 1):
        series = _open(owner, series_id, deps, expected)
        materialize.apply_superseded(series, deps.materialize)
        now = deps.clock.now()
        new: Series = build(series, now)
        new = new.model_copy(
            update={
                "version": series.version + 1,
                "updated_at": now,
                "superseded": series.snapshot(),
                "superseded_reason": reason,
                "extend_at": now,
            }
        )
        try:
            deps.series.save(series, new)
        except SeriesChangedError:
            if expected is not None or attempt == WRITE_ATTEMPTS:
                fresh = deps.series.get(series_id)
                if expected is not None and fresh is not None and etag(fresh) in expected:
                    continue  # only the materializer moved it: same version, try again
                raise
            continue
        logger.info("series changed", extra={"series_id": series_id, "status": new.status.value})
        return _materialize_now(new, deps)
    raise StateConflictError("the recurring schedule kept changing; try again")


def update_series(
    owner: str, series_id: str, patch: SeriesPatch, *, if_match: str | None, deps: SeriesDeps
) -> Series:
    """PATCH a series (active or paused). New post fields apply to not-yet-claimed, not
    detached occurrences; a new rule, zone or bounds cancels those it no longer has and
    materializes the new ones at once.

    Raises
    ------
    SeriesNotFoundError
        Missing or another user's (404).
    StateConflictError
        Ended or cancelled (409).
    VersionConflictError
        ``If-Match`` is stale (412).
    ValidationFailedError
        A rule problem, a channel that is not the caller's, or the text or media the PATCH
        leaves breaking a channel's rule (422, as on create).
    """
    settings = deps.settings

    def build(series: Series, now: datetime) -> Series:
        _raise_channel_errors(series, patch, deps)
        changes: dict[str, Any] = {
            name: getattr(patch, name)
            for name in ("content", "media_ids", "channel_ids")
            if getattr(patch, name) is not None
        }
        if not patch.changes_timing:
            return series.model_copy(update=changes)
        given = patch.model_fields_set
        timezone = patch.timezone or series.timezone
        cron, slots = series.cron, series.slots
        if patch.cron is not None:
            cron, slots = patch.cron, None
        if patch.slots is not None:
            cron, slots = None, [s.model_dump(mode="json") for s in patch.slots]
        fields = RuleFields.model_validate(
            {
                "timezone": timezone,
                "cron": cron,
                "slots": slots,
                "ends_at": format_instant(patch.ends_at)
                if "ends_at" in given and patch.ends_at
                else (None if "ends_at" in given else _opt(series.ends_at)),
                "max_occurrences": patch.max_occurrences
                if "max_occurrences" in given
                else series.max_occurrences,
            }
        )
        starts_at = patch.starts_at or series.starts_at
        checked_bounds(fields, starts_at=max(starts_at, now), settings=settings)
        changes.update(
            timezone=timezone,
            cron=cron,
            slots=slots,
            starts_at=starts_at,
            ends_at=fields.ends_at,
            max_occurrences=fields.max_occurrences,
        )
        if series.status == SeriesStatus.ACTIVE:
            changes.update(materialized_through=now - _ONE_MS, extend_at=now, stopped_reason=None)
        return series.model_copy(update=changes)

    return _change(
        owner,
        series_id,
        if_match=if_match,
        deps=deps,
        build=build,
        reason=OccurrenceCancelReason.SERIES_EDITED,
    )


def _opt(value: datetime | None) -> str | None:
    return format_instant(value) if value is not None else None


#: What pausing and resuming change besides the status (given ``now``), and the reason the
#: occurrences the change cancels carry.
_SWITCHES: dict[
    SeriesStatus, tuple[Callable[[datetime], dict[str, Any]], OccurrenceCancelReason]
] = {
    SeriesStatus.PAUSED: (
        lambda now: {"stopped_reason": None},
        OccurrenceCancelReason.SERIES_PAUSED,
    ),
    SeriesStatus.ACTIVE: (
        lambda now: {"materialized_through": now - _ONE_MS, "extend_at": now},
        OccurrenceCancelReason.SERIES_EDITED,
    ),
}


def _switch(
    owner: str, series_id: str, target: SeriesStatus, *, if_match: str | None, deps: SeriesDeps
) -> Series:
    """Move an open series to ``target`` (:data:`_SWITCHES`); unchanged when it is there."""
    current = _owned(owner, series_id, deps)
    if current.status == target:
        return current
    changes, reason = _SWITCHES[target]
    return _change(
        owner,
        series_id,
        if_match=if_match,
        deps=deps,
        build=lambda s, now: s.model_copy(update={"status": target, **changes(now)}),
        reason=reason,
    )


def pause_series(owner: str, series_id: str, *, if_match: str | None, deps: SeriesDeps) -> Series:
    """Pause an active series: its not-yet-claimed occurrences are cancelled; nothing is
    materialized until resume. Pausing a paused series returns it unchanged.

    Raises
    ------
    SeriesNotFoundError, StateConflictError, VersionConflictError
        404, 409 (ended or cancelled), 412 (stale ``If-Match``).
    """
    return _switch(owner, series_id, SeriesStatus.PAUSED, if_match=if_match, deps=deps)


def resume_series(owner: str, series_id: str, *, if_match: str | None, deps: SeriesDeps) -> Series:
    """Resume a paused series from now (never back-filling the past) and materialize at once.
    Resuming an active series returns it unchanged.

    Raises
    ------
    SeriesNotFoundError, StateConflictError, VersionConflictError
        404, 409 (ended or cancelled), 412 (stale ``If-Match``).
    """
    return _switch(owner, series_id, SeriesStatus.ACTIVE, if_match=if_match, deps=deps)


def delete_series(owner: str, series_id: str, *, if_match: str | None, deps: SeriesDeps) -> Series:
    """End a series for good: every not-yet-claimed occurrence is cancelled; published ones
    stay. Deleting a cancelled series returns it unchanged.

    Raises
    ------
    SeriesNotFoundError, VersionConflictError
        404, 412 (stale ``If-Match``).
    """
    current = _owned(owner, series_id, deps)
    if current.status in (SeriesStatus.CANCELLED, SeriesStatus.ENDED):
        if current.status == SeriesStatus.ENDED:
            for post in occurrences.candidates(current, deps.clock.now(), deps):
                occurrences.cancel(post, OccurrenceCancelReason.SERIES_DELETED, deps)
        return current
    return _change(
        owner,
        series_id,
        if_match=if_match,
        deps=deps,
        build=lambda s, now: s.model_copy(
            update={"status": SeriesStatus.CANCELLED, "stopped_reason": None}
        ),
        reason=OccurrenceCancelReason.SERIES_DELETED,
    )
