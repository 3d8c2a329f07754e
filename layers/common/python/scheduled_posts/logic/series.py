"""Recurring schedules (``docs/recurring.md``): create, edit, pause, resume and delete a series. The
rule checks, the API view and the reads are ``logic/series_reads.py`` (importable from here too);
the series' states, arrows and guards are ``lifecycle/series_transitions.py``.

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

from scheduled_posts import keys
from scheduled_posts.clock import Clock, format_instant
from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.data.media import MediaRepository
from scheduled_posts.data.posts import PostRepository
from scheduled_posts.data.series import SeriesChangedError, SeriesRepository
from scheduled_posts.errors import (
    ServiceError,
    StateConflictError,
    ValidationFailedError,
)
from scheduled_posts.lifecycle import series_transitions
from scheduled_posts.lifecycle.reasons import OccurrenceCancelReason
from scheduled_posts.lifecycle.series_transitions import SeriesChange
from scheduled_posts.logic import materialize, occurrences
from scheduled_posts.logic.materialize import MaterializeDeps
from scheduled_posts.logic.media import MediaDeps
from scheduled_posts.logic.media_attach import attach_named
from scheduled_posts.logic.network_rules import (
    composed_errors,
    patched_channel_errors,
)
from scheduled_posts.logic.post_checks import parse_if_match, require_version
from scheduled_posts.logic.posts import Promoter
from scheduled_posts.logic.series_reads import (  # noqa: F401  (api/ and logic/ read them here)
    SeriesNotFoundError,
    checked_bounds,
    etag,
    get_series,
    list_occurrences,
    list_series,
    owned,
    preview_occurrences,
    rule_problem,
    series_out,
)
from scheduled_posts.models.recurring import RuleFields, SeriesCreate, SeriesPatch
from scheduled_posts.models.series import Series, SeriesStatus
from scheduled_posts.observability import logger
from scheduled_posts.settings import Settings

_ONE_MS = timedelta(milliseconds=1)
#: Tries of a write without ``If-Match`` that lost a race (to the materializer, say).
WRITE_ATTEMPTS = 3


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
    uploads: MediaDeps | None = None  # keeps the uploads a write names (None: not kept)

    @property
    def materialize(self) -> MaterializeDeps:
        return MaterializeDeps(
            series=self.series,
            posts=self.posts,
            settings=self.settings,
            clock=self.clock,
            promoter=self.promoter,
        )


def _raise_channel_errors(series: Series, patch: SeriesPatch, deps: SeriesDeps) -> None:
    """The posts' channel rules for the fields ``patch`` leaves ``series`` with (a 422)."""
    errors = patched_channel_errors(
        series.owner, series, patch, channels=deps.channels, media=deps.media
    )
    if errors:
        raise ValidationFailedError("the request is not valid", errors)
    attach_named(series.owner, patch, deps=deps.uploads)  # before the series' write


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


def _new_series(
    request: SeriesCreate, owner: str, series_id: str, now: datetime, settings: Settings
) -> Series:
    """The ``active`` series (version 1) ``request`` describes, due for materializing now."""
    starts_at = request.starts_at or now
    rule = request.rule()
    return series_transitions.create(
        Series(
            series_id=series_id,
            owner=owner,
            status=SeriesStatus.ACTIVE,
            content=request.content,
            media_ids=list(request.media_ids),
            channel_ids=list(request.channel_ids),
            variants=dict(request.variants),
            parts=list(request.parts or []),
            first_comment=request.first_comment,
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
    )


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
    errors = composed_errors(owner, request, channels=deps.channels, media=deps.media)
    if errors:
        raise ValidationFailedError("the request is not valid", errors)
    attach_named(owner, request, deps=deps.uploads)  # before the series' write
    series = _new_series(request, owner, series_id or str(uuid.uuid4()), now, settings)
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


# ------------------------------------------------------------------ changes


def _open(
    owner: str, series_id: str, arrow: str, deps: SeriesDeps, expected: frozenset[str] | None
) -> Series:
    """The caller's series, checked for ``arrow`` (409) and ``If-Match`` (412), unless the
    arrow leaves it unchanged (then as it is)."""
    series = owned(owner, series_id, deps)
    if series_transitions.unchanged(arrow, series):
        return series
    series_transitions.check(arrow, series)
    require_version(etag(series), series.version, expected)
    return series


def _change(
    owner: str,
    series_id: str,
    *,
    arrow: str,
    if_match: str | None,
    deps: SeriesDeps,
    build: Callable[[Series, datetime], SeriesChange],
) -> Series:
    """Save ``build(series, now)`` (an ``arrow`` of ``lifecycle/series_transitions.py``) with
    If-Match and race retries, then apply the change to the occurrences and materialize at once.

    The saved series records the old one as ``superseded`` (and an index entry due now), so
    when this request stops halfway the materializer finishes the change; whoever finishes it
    clears the record. A series that still records an unfinished change (a request that
    stopped halfway, then this one before any materializer run) has that change finished
    first: the record holds one old version, so saving over it would leave the older
    version's occurrences scheduled under their old rule and content. A series a racing
    request already moved where ``arrow`` leads is answered as it is.
    """
    expected = parse_if_match(if_match)
    for attempt in range(1, WRITE_ATTEMPTS + 1):
        series = _open(owner, series_id, arrow, deps, expected)
        if series_transitions.unchanged(arrow, series):
            return series
        materialize.apply_superseded(series, deps.materialize)
        change = build(series, deps.clock.now())
        try:
            deps.series.save(change.old, change.new)
        except SeriesChangedError:
            if expected is not None or attempt == WRITE_ATTEMPTS:
                fresh = deps.series.get(series_id)
                if expected is not None and fresh is not None and etag(fresh) in expected:
                    continue  # only the materializer moved it: same version, try again
                raise
            continue
        new = change.new
        logger.info("series changed", extra={"series_id": series_id, "status": new.status.value})
        return _materialize_now(new, deps)
    raise StateConflictError("the recurring schedule kept changing; try again")


def _timing(
    series: Series, patch: SeriesPatch, now: datetime, settings: Settings
) -> dict[str, Any]:
    """The timing fields ``patch`` leaves ``series`` with, checked like a create's (422)."""
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
    return {
        "timezone": timezone,
        "cron": cron,
        "slots": slots,
        "starts_at": starts_at,
        "ends_at": fields.ends_at,
        "max_occurrences": fields.max_occurrences,
    }


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

    def build(series: Series, now: datetime) -> SeriesChange:
        _raise_channel_errors(series, patch, deps)
        changes: dict[str, Any] = {
            name: getattr(patch, name)
            for name in ("content", "media_ids", "channel_ids", "variants", "parts")
            if getattr(patch, name) is not None
        }
        if "first_comment" in patch.model_fields_set:
            changes["first_comment"] = patch.first_comment
        if patch.changes_timing:
            changes.update(_timing(series, patch, now, deps.settings))
        return series_transitions.edit(series, changes, now=now, retimed=patch.changes_timing)

    return _change(owner, series_id, arrow="edit", if_match=if_match, deps=deps, build=build)


def _opt(value: datetime | None) -> str | None:
    return format_instant(value) if value is not None else None


#: The owner's status arrows, each ``(series, *, now) -> SeriesChange``.
_SWITCHES: dict[str, Callable[..., SeriesChange]] = {
    "pause": series_transitions.pause,
    "resume": series_transitions.resume,
    "delete": series_transitions.delete,
}


def _switch(
    owner: str, series_id: str, arrow: str, *, if_match: str | None, deps: SeriesDeps
) -> Series:
    """:func:`_change` along one of :data:`_SWITCHES`."""
    move = _SWITCHES[arrow]
    return _change(
        owner,
        series_id,
        arrow=arrow,
        if_match=if_match,
        deps=deps,
        build=lambda series, now: move(series, now=now),
    )


def pause_series(owner: str, series_id: str, *, if_match: str | None, deps: SeriesDeps) -> Series:
    """Pause an active series: its not-yet-claimed occurrences are cancelled; nothing is
    materialized until resume. Pausing a paused series returns it unchanged.

    Raises
    ------
    SeriesNotFoundError, StateConflictError, VersionConflictError
        404, 409 (ended or cancelled), 412 (stale ``If-Match``).
    """
    return _switch(owner, series_id, "pause", if_match=if_match, deps=deps)


def resume_series(owner: str, series_id: str, *, if_match: str | None, deps: SeriesDeps) -> Series:
    """Resume a paused series from now (never back-filling the past) and materialize at once.
    Resuming an active series returns it unchanged.

    Raises
    ------
    SeriesNotFoundError, StateConflictError, VersionConflictError
        404, 409 (ended or cancelled), 412 (stale ``If-Match``).
    """
    return _switch(owner, series_id, "resume", if_match=if_match, deps=deps)


def delete_series(owner: str, series_id: str, *, if_match: str | None, deps: SeriesDeps) -> Series:
    """End a series for good: every not-yet-claimed occurrence is cancelled; published ones
    stay. Deleting a cancelled series returns it unchanged; deleting an ended one cancels what
    it still has scheduled and returns it unchanged.

    Raises
    ------
    SeriesNotFoundError, VersionConflictError
        404, 412 (stale ``If-Match``).
    """
    current = _switch(owner, series_id, "delete", if_match=if_match, deps=deps)
    if current.status == SeriesStatus.ENDED:
        for post in occurrences.candidates(current, deps.clock.now(), deps):
            occurrences.cancel(post, OccurrenceCancelReason.SERIES_DELETED, deps)
    return current
