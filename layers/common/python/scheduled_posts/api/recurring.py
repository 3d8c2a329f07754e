"""Recurring schedules: ``POST/GET /v1/recurring-schedules``, ``POST .../preview`` (stores
nothing), ``GET/PATCH/DELETE .../{series_id}``, ``GET .../{series_id}/occurrences``,
``POST .../{series_id}/pause`` and ``.../resume`` (logic: ``logic/series.py``; rules:
``docs/recurring.md``). A single-schedule answer carries its ``ETag`` for ``If-Match``."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from scheduled_posts.api.docs import COMMON, responses
from scheduled_posts.api.params import (
    JSON,
    Cursor,
    Deps,
    IdempotencyKey,
    IfMatch,
    Owner,
    PageSize,
    SeriesDepsArg,
    SeriesId,
)
from scheduled_posts.logic import series as series_logic
from scheduled_posts.logic.series import SeriesDeps
from scheduled_posts.models.recurring import (
    OccurrenceOut,
    PreviewOut,
    PreviewRequest,
    SeriesCreate,
    SeriesOccurrenceList,
    SeriesOut,
    SeriesPage,
    SeriesPatch,
)
from scheduled_posts.models.series import Series

router = APIGatewayHttpRouter()

#: The responses of a route that changes a recurring schedule under ``If-Match``.
_CHANGED = responses(SeriesOut, errors=(*COMMON, 409, 412))


def _series_response(series: Series, deps: SeriesDeps) -> Response[SeriesOut]:
    return Response(
        status_code=200,
        content_type=JSON,
        body=series_logic.series_out(series, now=deps.clock.now()),
        headers={"ETag": series_logic.etag(series)},
    )


@router.post(
    "/v1/recurring-schedules/preview",
    summary="The next occurrences of a recurrence rule (stores nothing)",
    responses=responses(PreviewOut),
)
def preview_recurring_schedule(body: PreviewRequest, deps: Deps) -> PreviewOut:
    found = series_logic.preview_occurrences(body, now=deps.clock.now(), settings=deps.settings)
    return PreviewOut(occurrences=[OccurrenceOut.of(o) for o in found])


@router.post(
    "/v1/recurring-schedules",
    summary="Create a recurring schedule (its first occurrences are materialized at once)",
    responses=responses(
        SeriesOut,
        201,
        "Created",
        errors=(*COMMON, 409),
        overrides={409: "The first request with this Idempotency-Key is still running"},
    ),
)
def create_recurring_schedule(
    body: SeriesCreate, owner: Owner, deps: Deps, idempotency_key: IdempotencyKey = None
) -> Response[SeriesOut]:
    created = deps.series_creator.create(body, owner=owner, idempotency_key=idempotency_key)
    return Response(
        status_code=201,
        content_type=JSON,
        body=created,
        headers={"ETag": f'"{created.version}"'},
    )


@router.get(
    "/v1/recurring-schedules",
    summary="List your recurring schedules (creation order)",
    responses=responses(SeriesPage),
)
def list_recurring_schedules(
    owner: Owner, deps: Deps, limit: PageSize = 20, cursor: Cursor = None
) -> SeriesPage:
    found, next_cursor = series_logic.list_series(
        owner, limit=limit, cursor=cursor, codec=deps.cursor_codec(), deps=deps.series_deps
    )
    now = deps.clock.now()
    return SeriesPage(
        items=[series_logic.series_out(s, now=now) for s in found], next_cursor=next_cursor
    )


@router.get(
    "/v1/recurring-schedules/<series_id>",
    summary="Get a recurring schedule",
    responses=responses(SeriesOut),
)
def get_recurring_schedule(
    series_id: SeriesId, owner: Owner, deps: SeriesDepsArg
) -> Response[SeriesOut]:
    return _series_response(series_logic.get_series(owner, series_id, deps=deps), deps)


@router.get(
    "/v1/recurring-schedules/<series_id>/occurrences",
    summary="Upcoming occurrences, materialized or not (schedule_id and status once they exist)",
    responses=responses(SeriesOccurrenceList),
)
def list_recurring_occurrences(
    series_id: SeriesId,
    owner: Owner,
    deps: SeriesDepsArg,
    limit: Annotated[int, Query(ge=1, le=100, description="How many")] = 20,
) -> SeriesOccurrenceList:
    items = series_logic.list_occurrences(owner, series_id, limit=limit, deps=deps)
    return SeriesOccurrenceList(items=items)


@router.patch(
    "/v1/recurring-schedules/<series_id>",
    summary="Edit a recurring schedule (not-yet-claimed, not-detached occurrences follow)",
    responses=_CHANGED,
)
def update_recurring_schedule(
    series_id: SeriesId,
    body: SeriesPatch,
    owner: Owner,
    deps: SeriesDepsArg,
    if_match: IfMatch = None,
) -> Response[SeriesOut]:
    series = series_logic.update_series(owner, series_id, body, if_match=if_match, deps=deps)
    return _series_response(series, deps)


@router.post(
    "/v1/recurring-schedules/<series_id>/pause",
    summary="Pause: not-yet-claimed occurrences are cancelled until resume",
    responses=_CHANGED,
)
def pause_recurring_schedule(
    series_id: SeriesId, owner: Owner, deps: SeriesDepsArg, if_match: IfMatch = None
) -> Response[SeriesOut]:
    series = series_logic.pause_series(owner, series_id, if_match=if_match, deps=deps)
    return _series_response(series, deps)


@router.post(
    "/v1/recurring-schedules/<series_id>/resume",
    summary="Resume from now (the past is never back-filled)",
    responses=_CHANGED,
)
def resume_recurring_schedule(
    series_id: SeriesId, owner: Owner, deps: SeriesDepsArg, if_match: IfMatch = None
) -> Response[SeriesOut]:
    series = series_logic.resume_series(owner, series_id, if_match=if_match, deps=deps)
    return _series_response(series, deps)


@router.delete(
    "/v1/recurring-schedules/<series_id>",
    summary="End a recurring schedule: not-yet-claimed occurrences are cancelled",
    responses=responses(SeriesOut, errors=(*COMMON, 412)),
)
def delete_recurring_schedule(
    series_id: SeriesId, owner: Owner, deps: SeriesDepsArg, if_match: IfMatch = None
) -> Response[SeriesOut]:
    series = series_logic.delete_series(owner, series_id, if_match=if_match, deps=deps)
    return _series_response(series, deps)
