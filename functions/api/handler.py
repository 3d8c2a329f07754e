"""The scheduling API Lambda: API Gateway HTTP API (payload v2) -> one logic call per route.

Routes (JSON; the caller is the JWT's ``sub``, checked by API Gateway's JWT authorizer):

* ``POST/GET /v1/channels``, ``GET/PATCH/DELETE /v1/channels/{channel_id}``
* ``POST/GET /v1/scheduled-posts``,
  ``GET/PATCH/DELETE /v1/scheduled-posts/{schedule_id}``,
  ``GET /v1/scheduled-posts/{schedule_id}/attempts``
* ``POST /v1/scheduled-posts/{schedule_id}/retry``, ``POST /v1/channels/{channel_id}/rotate-secret``
* ``POST/GET /v1/notification-endpoints``, ``DELETE /v1/notification-endpoints/{endpoint_id}``,
  ``POST .../{endpoint_id}/rotate-secret`` (issue 14)
* ``GET /v1/me/export``, ``DELETE /v1/me``, ``GET /v1/me/erasure``
* ``POST/GET /v1/recurring-schedules``, ``POST /v1/recurring-schedules/preview`` (nothing
  stored), ``GET/PATCH/DELETE /v1/recurring-schedules/{series_id}``,
  ``GET .../{series_id}/occurrences``, ``POST .../{series_id}/pause`` and ``.../resume``
  (issue 13)

Before routing, :func:`lambda_handler` refuses an event without a usable ``sub`` claim (401:
missing, over 255 characters or with control characters), a body
over 64 KiB (413, before parsing), a body without ``Content-Type: application/json`` or with a
charset other than UTF-8 (415), and a body that is not UTF-8 JSON, nests deeper than
:data:`MAX_JSON_DEPTH` or repeats a member name in an object (400). After routing, a query
parameter the route does not define is a 422 naming it. Every error is
``application/problem+json`` (``scheduled_posts.problems``); JSON answers are UTF-8 without
``\\uXXXX`` escapes of non-ASCII characters.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from functools import partial
from typing import Annotated, Any, cast

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Depends, Response
from aws_lambda_powertools.event_handler.api_gateway import BaseRouter
from aws_lambda_powertools.event_handler.openapi.params import Header, Path, Query
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.shared.json_encoder import Encoder
from aws_lambda_powertools.utilities.typing import LambdaContext

from scheduled_posts import problems
from scheduled_posts.api_app import get_dependencies
from scheduled_posts.errors import ValidationFailedError
from scheduled_posts.logic import account, event_feed, recovery, rotation
from scheduled_posts.logic import channels as channel_logic
from scheduled_posts.logic import notifications as notification_logic
from scheduled_posts.logic import posts as post_logic
from scheduled_posts.logic import series as series_logic
from scheduled_posts.models.api import (
    ID_PATTERN,
    AttemptList,
    AttemptOut,
    ChannelCreate,
    ChannelCreated,
    ChannelList,
    ChannelOut,
    ChannelPatch,
    ErasureStatus,
    EventEntry,
    EventPage,
    EventTrail,
    GatewayMessage,
    PostCreate,
    PostOut,
    PostPage,
    PostPatch,
    Problem,
    SecretRotation,
    etag_of,
)
from scheduled_posts.models.notifications import (
    NotificationEndpointCreate,
    NotificationEndpointCreated,
    NotificationEndpointList,
    NotificationEndpointOut,
)
from scheduled_posts.models.post import PostStatus
from scheduled_posts.models.recurring import (
    AccountExport,
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
from scheduled_posts.observability import logger, metrics, tracer

#: Largest accepted request body, in bytes (issue 2: 64 KiB, checked before parsing).
MAX_BODY_BYTES = 64 * 1024
JSON = "application/json"
#: Longest ``sub`` claim accepted (OpenID Connect Core 1.0 section 2: at most 255 characters).
#: It goes into DynamoDB keys (``OWNER#<sub>``), whose partition keys hold at most 2,048 bytes.
MAX_SUB_LENGTH = 255
#: Deepest JSON nesting accepted (a request needs 2). A body that ``json.loads`` can just parse
#: in the precheck could overflow the stack when Powertools parses it again, deeper: a 500.
MAX_JSON_DEPTH = 32

app = APIGatewayHttpResolver(
    enable_validation=True,
    serializer=partial(json.dumps, separators=(",", ":"), ensure_ascii=False, cls=Encoder),
)
problems.register(app)


def _known_query_only(router: BaseRouter, next_middleware: Callable[..., Response]) -> Response:
    """422 for a query parameter the matched route does not define (issue 17), naming each."""
    route = router.context.get("_route")
    given = router.current_event.query_string_parameters or {}
    if route is not None and given:
        known = {param.alias for param in route.dependant.query_params}
        unknown = sorted(name for name in given if name not in known)
        if unknown:
            raise ValidationFailedError(
                f"unknown query parameter: {', '.join(unknown)}"[:300],
                [
                    {"loc": ["query", name], "msg": "unknown query parameter", "type": "unknown"}
                    for name in unknown[:20]
                ],
            )
    return next_middleware(router)


app.use(middlewares=[_known_query_only])

ChannelId = Annotated[str, Path(pattern=ID_PATTERN, description="A channel id")]
EndpointId = Annotated[str, Path(pattern=ID_PATTERN, description="A notification endpoint id")]
ScheduleId = Annotated[str, Path(pattern=ID_PATTERN, description="A scheduled post id")]
SeriesId = Annotated[str, Path(pattern=ID_PATTERN, description="A recurring schedule id")]
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=255,
        pattern=r"^[\x21-\x7e]+$",
        description="Repeat a create safely for 24 h: same key and body, same 201 answer",
    ),
]
IfMatch = Annotated[
    str | None,
    Header(alias="If-Match", max_length=64, description='The version you read: "<version>"'),
]

_PROBLEM = {"content": {problems.PROBLEM_JSON: {"model": Problem}}}
_ERROR_DOCS: dict[int, dict[str, Any]] = {
    400: {"description": "Malformed JSON or an invalid cursor", **_PROBLEM},
    401: {
        "description": 'No caller (from API Gateway itself: {"message":"Unauthorized"})',
        "content": {JSON: {"model": GatewayMessage}},
    },
    404: {"description": "Not found, or not yours", **_PROBLEM},
    409: {"description": "The post is not scheduled", **_PROBLEM},
    412: {"description": "If-Match is stale", **_PROBLEM},
    413: {"description": "Body over 64 KiB", **_PROBLEM},
    415: {"description": "Not application/json, or a charset other than UTF-8", **_PROBLEM},
    422: {"description": "Validation failed (per-field errors)", **_PROBLEM},
    429: {"description": "MAX_PENDING_POSTS reached", **_PROBLEM},
    502: {"description": "The network could not check the credentials; nothing stored", **_PROBLEM},
}
_COMMON = (400, 401, 404, 413, 415, 422)


def _responses(
    model: type | None,
    code: int = 200,
    description: str = "OK",
    *,
    errors: tuple[int, ...] = _COMMON,
    overrides: dict[int, str] | None = None,
) -> dict[int, OpenAPIResponse]:
    """OpenAPI responses: the success ``code`` with ``model`` plus the problem+json errors."""
    result: dict[int, Any] = {code: {"description": description}}
    if model is not None:
        result[code]["content"] = {JSON: {"model": model}}
    for error in errors:
        result[error] = dict(_ERROR_DOCS[error])
    for error, text in (overrides or {}).items():
        result[error]["description"] = text
    return cast(dict[int, OpenAPIResponse], result)


def _owner() -> str:
    return str(app.context["owner"])


def _series_deps() -> series_logic.SeriesDeps:
    return get_dependencies().series_deps


#: The caller (the JWT's ``sub``), injected into a route by Powertools' ``Depends``.
Owner = Annotated[str, Depends(_owner)]
#: The recurring-schedule logic's collaborators, injected by ``Depends``.
SeriesDepsArg = Annotated[series_logic.SeriesDeps, Depends(_series_deps)]
#: The responses of a route that changes a recurring schedule under ``If-Match``.
_SERIES_CHANGED = _responses(SeriesOut, errors=(*_COMMON, 409, 412))


def _post_response(post: PostOut, status: int = 200) -> Response[PostOut]:
    return Response(
        status_code=status,
        content_type=JSON,
        body=post,
        headers={"ETag": etag_of(post.model_dump(mode="json"))},
    )


# ------------------------------------------------------------------ channels


@app.post(
    "/v1/channels",
    summary="Create a channel (webhook, mastodon, bluesky); credentials are checked, never shown",
    responses=_responses(
        ChannelCreated,
        201,
        "Created (a webhook's signing secret is shown only here)",
        errors=(*_COMMON, 429, 502),
        overrides={
            422: "Validation failed, or the network refused the credentials",
            429: "MAX_CHANNELS_PER_USER reached",
        },
    ),
)
def create_channel(body: ChannelCreate) -> Response[ChannelCreated]:
    deps = get_dependencies()
    channel = channel_logic.create_channel(
        body,
        owner=_owner(),
        channels=deps.channels,
        settings=deps.settings,
        clock=deps.clock,
        resolver=deps.resolver,
        checker=deps.credential_checker,
        channel_secrets=deps.channel_secrets,
    )
    return Response(status_code=201, content_type=JSON, body=ChannelCreated.of_new(channel))


@app.get(
    "/v1/channels", summary="List your channels by channel_id", responses=_responses(ChannelList)
)
def list_channels(
    limit: Annotated[int, Query(ge=1, le=100, description="Page size")] = 20,
    cursor: Annotated[str | None, Query(max_length=1024, description="next_cursor")] = None,
) -> ChannelList:
    deps = get_dependencies()
    found, next_cursor = channel_logic.list_channel_page(
        _owner(), limit=limit, cursor=cursor, codec=deps.cursor_codec(), channels=deps.channels
    )
    return ChannelList(items=[ChannelOut.of(c) for c in found], next_cursor=next_cursor)


@app.get(
    "/v1/channels/<channel_id>",
    summary="Get a channel",
    responses=_responses(ChannelOut),
)
def get_channel(channel_id: ChannelId) -> ChannelOut:
    channel = channel_logic.get_channel(_owner(), channel_id, channels=get_dependencies().channels)
    return ChannelOut.of(channel)


@app.patch(
    "/v1/channels/<channel_id>",
    summary="Change a channel's name, rate limit, webhook URL or credentials (checked again)",
    responses=_responses(
        ChannelOut,
        errors=(*_COMMON, 502),
        overrides={422: "Validation failed, or the network refused the credentials"},
    ),
)
def update_channel(channel_id: ChannelId, body: ChannelPatch) -> ChannelOut:
    deps = get_dependencies()
    channel = channel_logic.update_channel(
        _owner(),
        channel_id,
        body,
        channels=deps.channels,
        settings=deps.settings,
        resolver=deps.resolver,
        checker=deps.credential_checker,
        channel_secrets=deps.channel_secrets,
    )
    return ChannelOut.of(channel)


@app.delete(
    "/v1/channels/<channel_id>",
    summary="Delete a channel (its pending deliveries become skipped)",
    responses=_responses(None, 204, "Deleted"),
)
def delete_channel(channel_id: ChannelId) -> Response[None]:
    channel_logic.delete_channel(_owner(), channel_id, channels=get_dependencies().channels)
    return Response(status_code=204)


@app.post(
    "/v1/channels/<channel_id>/rotate-secret",
    summary="Rotate the signing secret (the old one stays valid for SECRET_OVERLAP_SECONDS)",
    responses=_responses(
        ChannelCreated,
        200,
        "Rotated: the new secret is shown only here",
        errors=(*_COMMON, 409),
        overrides={
            409: "A concurrent rotation won, too many secrets are still valid, or the channel "
            "is a network channel (mastodon, bluesky: no signing secret)"
        },
    ),
)
def rotate_channel_secret(
    channel_id: ChannelId, body: SecretRotation | None = None
) -> Response[ChannelCreated]:
    deps = get_dependencies()
    channel = rotation.rotate_signing_secret(
        _owner(),
        channel_id,
        channels=deps.channels,
        settings=deps.settings,
        clock=deps.clock,
        revoke_previous=body.revoke_previous if body is not None else False,
    )
    return Response(status_code=200, content_type=JSON, body=ChannelCreated.of_new(channel))


# ---------------------------------------------------- notification endpoints (issue 14)


@app.post(
    "/v1/notification-endpoints",
    summary="Register a URL that receives your outcome events, signed (docs/events.md)",
    responses=_responses(
        NotificationEndpointCreated,
        201,
        "Created: the signing secret is shown only here",
        errors=(*_COMMON, 429),
        overrides={429: "MAX_NOTIFICATION_ENDPOINTS_PER_USER reached"},
    ),
)
def create_notification_endpoint(
    body: NotificationEndpointCreate,
) -> Response[NotificationEndpointCreated]:
    deps = get_dependencies()
    endpoint = notification_logic.create_endpoint(
        body,
        owner=_owner(),
        endpoints=deps.notification_endpoints,
        settings=deps.settings,
        clock=deps.clock,
        resolver=deps.resolver,
    )
    return Response(
        status_code=201, content_type=JSON, body=NotificationEndpointCreated.of_new(endpoint)
    )


@app.get(
    "/v1/notification-endpoints",
    summary="List your notification endpoints (never their secrets)",
    responses=_responses(NotificationEndpointList),
)
def list_notification_endpoints() -> NotificationEndpointList:
    found = notification_logic.list_endpoints(
        _owner(), endpoints=get_dependencies().notification_endpoints
    )
    return NotificationEndpointList(items=[NotificationEndpointOut.of(e) for e in found])


@app.delete(
    "/v1/notification-endpoints/<endpoint_id>",
    summary="Delete a notification endpoint (queued notifications to it are dropped)",
    responses=_responses(None, 204, "Deleted"),
)
def delete_notification_endpoint(endpoint_id: EndpointId) -> Response[None]:
    notification_logic.delete_endpoint(
        _owner(), endpoint_id, endpoints=get_dependencies().notification_endpoints
    )
    return Response(status_code=204)


@app.post(
    "/v1/notification-endpoints/<endpoint_id>/rotate-secret",
    summary="Rotate the signing secret (the old one stays valid for SECRET_OVERLAP_SECONDS)",
    responses=_responses(
        NotificationEndpointCreated,
        200,
        "Rotated: the new secret is shown only here",
        errors=(*_COMMON, 409),
        overrides={409: "A concurrent rotation won, or too many secrets are still valid"},
    ),
)
def rotate_notification_endpoint_secret(
    endpoint_id: EndpointId, body: SecretRotation | None = None
) -> Response[NotificationEndpointCreated]:
    deps = get_dependencies()
    endpoint = notification_logic.rotate_endpoint_secret(
        _owner(),
        endpoint_id,
        endpoints=deps.notification_endpoints,
        settings=deps.settings,
        clock=deps.clock,
        revoke_previous=body.revoke_previous if body is not None else False,
    )
    return Response(
        status_code=200, content_type=JSON, body=NotificationEndpointCreated.of_new(endpoint)
    )


# -------------------------------------------------------------------- posts


@app.post(
    "/v1/scheduled-posts",
    summary="Schedule a post",
    responses=_responses(
        PostOut,
        201,
        "Created",
        errors=(*_COMMON, 409, 429),
        overrides={409: "The first request with this Idempotency-Key is still running"},
    ),
)
def create_post(body: PostCreate, idempotency_key: IdempotencyKey = None) -> Response[PostOut]:
    created = get_dependencies().creator.create(
        body, owner=_owner(), idempotency_key=idempotency_key
    )
    return _post_response(created, 201)


@app.get(
    "/v1/scheduled-posts",
    summary="List your posts by (publish_at, schedule_id)",
    responses=_responses(PostPage),
)
def list_posts(
    *,
    status: Annotated[PostStatus | None, Query(description="Only posts in this status")] = None,
    from_: Annotated[
        str | None, Query(alias="from", max_length=64, description="RFC 3339, inclusive")
    ] = None,
    to: Annotated[str | None, Query(max_length=64, description="RFC 3339, exclusive")] = None,
    limit: Annotated[int, Query(ge=1, le=100, description="Page size")] = 20,
    cursor: Annotated[str | None, Query(max_length=1024, description="next_cursor")] = None,
    channel_id: Annotated[
        str | None, Query(pattern=ID_PATTERN, description="Only posts to this channel")
    ] = None,
    series_id: Annotated[
        str | None,
        Query(pattern=ID_PATTERN, description="Only this recurring schedule's occurrences"),
    ] = None,
) -> PostPage:
    deps = get_dependencies()
    page = post_logic.list_posts(
        _owner(),
        channel_id=channel_id,
        status=status,
        from_=from_,
        to=to,
        limit=limit,
        cursor=cursor,
        codec=deps.cursor_codec(),
        deps=deps.post_deps,
        series_id=series_id,
    )
    return PostPage(items=[PostOut.of(p) for p in page.posts], next_cursor=page.next_cursor)


@app.get(
    "/v1/scheduled-posts/<schedule_id>",
    summary="Get a post",
    responses=_responses(PostOut),
)
def get_post(schedule_id: ScheduleId) -> Response[PostOut]:
    post = post_logic.get_post(_owner(), schedule_id, deps=get_dependencies().post_deps)
    return _post_response(PostOut.of(post))


@app.patch(
    "/v1/scheduled-posts/<schedule_id>",
    summary="Edit a scheduled post",
    responses=_responses(PostOut, errors=(*_COMMON, 409, 412)),
)
def update_post(
    schedule_id: ScheduleId, body: PostPatch, if_match: IfMatch = None
) -> Response[PostOut]:
    post = post_logic.update_post(
        _owner(), schedule_id, body, if_match=if_match, deps=get_dependencies().post_deps
    )
    return _post_response(PostOut.of(post))


@app.delete(
    "/v1/scheduled-posts/<schedule_id>",
    summary="Cancel a scheduled post",
    responses=_responses(PostOut, errors=(*_COMMON, 409, 412)),
)
def cancel_post(schedule_id: ScheduleId, if_match: IfMatch = None) -> Response[PostOut]:
    post = post_logic.cancel_post(
        _owner(), schedule_id, if_match=if_match, deps=get_dependencies().post_deps
    )
    return _post_response(PostOut.of(post))


@app.get(
    "/v1/scheduled-posts/<schedule_id>/attempts",
    summary="The delivery attempts of a post",
    responses=_responses(AttemptList),
)
def list_attempts(schedule_id: ScheduleId) -> AttemptList:
    found = post_logic.list_attempts(_owner(), schedule_id, deps=get_dependencies().post_deps)
    return AttemptList(items=[AttemptOut.of(a) for a in found])


@app.get(
    "/v1/scheduled-posts/<schedule_id>/events",
    summary="The outcome events of a post, in commit order (its trail)",
    responses=_responses(EventTrail),
)
def list_post_events(schedule_id: ScheduleId) -> EventTrail:
    deps = get_dependencies()
    found = event_feed.post_events(_owner(), schedule_id, feed=deps.event_feed, deps=deps.post_deps)
    return EventTrail(items=[EventEntry(event=e.event, trace_id=e.trace_id) for e in found])


@app.get(
    "/v1/events",
    summary="Your outcome events, oldest first, after an opaque cursor",
    responses=_responses(EventPage, errors=(400, 401, 422)),
)
def list_events(
    after: Annotated[
        str | None, Query(max_length=1024, description="next_cursor of the previous page")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=100, description="Page size")] = 50,
) -> EventPage:
    deps = get_dependencies()
    page = event_feed.list_events(
        _owner(), after=after, limit=limit, feed=deps.event_feed, codec=deps.cursor_codec()
    )
    return EventPage(
        items=[EventEntry(event=e.event, trace_id=e.trace_id) for e in page.events],
        next_cursor=page.next_cursor,
    )


@app.post(
    "/v1/scheduled-posts/<schedule_id>/retry",
    summary="Deliver a failed or partially published post again (only its failed channels)",
    responses=_responses(
        PostOut,
        202,
        "Accepted: the post is publishing again",
        errors=(*_COMMON, 409),
        overrides={409: "Not failed/partially_published, past the misfire grace, or raced"},
    ),
)
def retry_post(schedule_id: ScheduleId) -> Response[PostOut]:
    deps = get_dependencies()
    post = recovery.retry_post(
        _owner(), schedule_id, deps=recovery.RecoveryDeps(deps.settings, clock=deps.clock)
    )
    return _post_response(PostOut.of(post), 202)


# ------------------------------------------------------------------- account


@app.get(
    "/v1/me/export",
    summary="Everything the service holds about you, as one JSON document",
    responses=_responses(AccountExport),
)
def export_account() -> AccountExport:
    deps = get_dependencies()
    document = account.export_account(
        _owner(), store=deps.account, deps=deps.post_deps, series_deps=deps.series_deps
    )
    return AccountExport.model_validate(document)


@app.delete(
    "/v1/me",
    summary="Erase your account: end series, cancel posts, then delete every item of yours",
    responses=_responses(
        ErasureStatus, 202, "Accepted: GET /v1/me/erasure tells when it is complete"
    ),
)
def erase_account() -> Response[ErasureStatus]:
    deps = get_dependencies()
    status = account.erase_account(
        _owner(), store=deps.account, deps=deps.post_deps, series_deps=deps.series_deps
    )
    return Response(status_code=202, content_type=JSON, body=ErasureStatus(status=status))


@app.get(
    "/v1/me/erasure",
    summary="Whether your erasure is complete",
    responses=_responses(ErasureStatus),
)
def erasure_status() -> ErasureStatus:
    status = account.erasure_status(_owner(), store=get_dependencies().account)
    return ErasureStatus.model_validate({"status": status})


# ------------------------------------------------------- recurring schedules


@app.post(
    "/v1/recurring-schedules/preview",
    summary="The next occurrences of a recurrence rule (stores nothing)",
    responses=_responses(PreviewOut),
)
def preview_recurring_schedule(body: PreviewRequest) -> PreviewOut:
    deps = get_dependencies()
    found = series_logic.preview_occurrences(body, now=deps.clock.now(), settings=deps.settings)
    return PreviewOut(occurrences=[OccurrenceOut.of(o) for o in found])


def _series_response(series: Series, status: int = 200) -> Response[SeriesOut]:
    body = series_logic.series_out(series, now=get_dependencies().clock.now())
    return Response(
        status_code=status,
        content_type=JSON,
        body=body,
        headers={"ETag": series_logic.etag(series)},
    )


@app.post(
    "/v1/recurring-schedules",
    summary="Create a recurring schedule (its first occurrences are materialized at once)",
    responses=_responses(
        SeriesOut,
        201,
        "Created",
        errors=(*_COMMON, 409),
        overrides={409: "The first request with this Idempotency-Key is still running"},
    ),
)
def create_recurring_schedule(
    body: SeriesCreate, idempotency_key: IdempotencyKey = None
) -> Response[SeriesOut]:
    created = get_dependencies().series_creator.create(
        body, owner=_owner(), idempotency_key=idempotency_key
    )
    return Response(
        status_code=201,
        content_type=JSON,
        body=created,
        headers={"ETag": f'"{created.version}"'},
    )


@app.get(
    "/v1/recurring-schedules",
    summary="List your recurring schedules (creation order)",
    responses=_responses(SeriesPage),
)
def list_recurring_schedules(
    limit: Annotated[int, Query(ge=1, le=100, description="Page size")] = 20,
    cursor: Annotated[str | None, Query(max_length=1024, description="next_cursor")] = None,
) -> SeriesPage:
    deps = get_dependencies()
    found, next_cursor = series_logic.list_series(
        _owner(), limit=limit, cursor=cursor, codec=deps.cursor_codec(), deps=deps.series_deps
    )
    now = deps.clock.now()
    return SeriesPage(
        items=[series_logic.series_out(s, now=now) for s in found], next_cursor=next_cursor
    )


@app.get(
    "/v1/recurring-schedules/<series_id>",
    summary="Get a recurring schedule",
    responses=_responses(SeriesOut),
)
def get_recurring_schedule(
    series_id: SeriesId, owner: Owner, deps: SeriesDepsArg
) -> Response[SeriesOut]:
    return _series_response(series_logic.get_series(owner, series_id, deps=deps))


@app.get(
    "/v1/recurring-schedules/<series_id>/occurrences",
    summary="Upcoming occurrences, materialized or not (schedule_id and status once they exist)",
    responses=_responses(SeriesOccurrenceList),
)
def list_recurring_occurrences(
    series_id: SeriesId,
    owner: Owner,
    deps: SeriesDepsArg,
    limit: Annotated[int, Query(ge=1, le=100, description="How many")] = 20,
) -> SeriesOccurrenceList:
    items = series_logic.list_occurrences(owner, series_id, limit=limit, deps=deps)
    return SeriesOccurrenceList(items=items)


@app.patch(
    "/v1/recurring-schedules/<series_id>",
    summary="Edit a recurring schedule (not-yet-claimed, not-detached occurrences follow)",
    responses=_SERIES_CHANGED,
)
def update_recurring_schedule(
    series_id: SeriesId,
    body: SeriesPatch,
    owner: Owner,
    deps: SeriesDepsArg,
    if_match: IfMatch = None,
) -> Response[SeriesOut]:
    series = series_logic.update_series(owner, series_id, body, if_match=if_match, deps=deps)
    return _series_response(series)


@app.post(
    "/v1/recurring-schedules/<series_id>/pause",
    summary="Pause: not-yet-claimed occurrences are cancelled until resume",
    responses=_SERIES_CHANGED,
)
def pause_recurring_schedule(
    series_id: SeriesId, owner: Owner, deps: SeriesDepsArg, if_match: IfMatch = None
) -> Response[SeriesOut]:
    return _series_response(
        series_logic.pause_series(owner, series_id, if_match=if_match, deps=deps)
    )


@app.post(
    "/v1/recurring-schedules/<series_id>/resume",
    summary="Resume from now (the past is never back-filled)",
    responses=_SERIES_CHANGED,
)
def resume_recurring_schedule(
    series_id: SeriesId, owner: Owner, deps: SeriesDepsArg, if_match: IfMatch = None
) -> Response[SeriesOut]:
    return _series_response(
        series_logic.resume_series(owner, series_id, if_match=if_match, deps=deps)
    )


@app.delete(
    "/v1/recurring-schedules/<series_id>",
    summary="End a recurring schedule: not-yet-claimed occurrences are cancelled",
    responses=_responses(SeriesOut, errors=(*_COMMON, 412)),
)
def delete_recurring_schedule(
    series_id: SeriesId, owner: Owner, deps: SeriesDepsArg, if_match: IfMatch = None
) -> Response[SeriesOut]:
    return _series_response(
        series_logic.delete_series(owner, series_id, if_match=if_match, deps=deps)
    )


# ------------------------------------------------------------------- entry


def _caller(event: dict[str, Any]) -> str | None:
    context = event.get("requestContext") or {}
    claims = (((context.get("authorizer") or {}).get("jwt") or {}).get("claims")) or {}
    sub = claims.get("sub") if isinstance(claims, dict) else None
    if not isinstance(sub, str) or not 0 < len(sub) <= MAX_SUB_LENGTH or not sub.isprintable():
        return None
    return sub


def _precheck(event: dict[str, Any]) -> problems.ServiceError | None:
    """401 without a caller; 413 over 64 KiB; 415 when not JSON or not UTF-8; 400 when not
    UTF-8 JSON, nested too deeply or with a repeated member name."""
    if _caller(event) is None:
        return problems.UnauthenticatedError("the request carries no authenticated caller")
    body = event.get("body")
    if body is None or body == "":
        return None
    try:
        raw = (
            base64.b64decode(body, validate=True)
            if event.get("isBase64Encoded")
            else body.encode("utf-8", "surrogatepass")
        )
    except (binascii.Error, ValueError):
        return problems.MalformedBodyError("the body is not valid base64")
    if len(raw) > MAX_BODY_BYTES:
        return problems.PayloadTooLargeError(f"the body is over {MAX_BODY_BYTES} bytes")
    refused = _media_type_problem(event)
    if refused is not None:
        return refused
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return problems.MalformedBodyError("the body is not valid UTF-8")
    try:
        parsed = json.loads(text, object_pairs_hook=_unique_members)
    except _DuplicateMemberError as exc:
        return problems.MalformedBodyError(str(exc))
    except RecursionError:
        return problems.MalformedBodyError(
            f"the body is nested too deeply (at most {MAX_JSON_DEPTH} levels)"
        )
    except ValueError:
        return problems.MalformedBodyError("the body is not valid JSON")
    if _nesting(parsed) > MAX_JSON_DEPTH:
        return problems.MalformedBodyError(
            f"the body is nested too deeply (at most {MAX_JSON_DEPTH} levels)"
        )
    return None


def _media_type_problem(event: dict[str, Any]) -> problems.ServiceError | None:
    """415 unless ``Content-Type`` is ``application/json`` with no charset or ``utf-8``
    (RFC 8259 section 8.1: JSON exchanged between systems is UTF-8; RFC 9110 section 8.3)."""
    headers = {str(k).lower(): v for k, v in (event.get("headers") or {}).items()}
    value = headers.get("content-type")
    if not isinstance(value, str) or not value.strip():
        return problems.UnsupportedMediaTypeError(
            "send the body with Content-Type: application/json"
        )
    media_type, *params = (part.strip() for part in value.split(";"))
    if media_type.lower() != JSON:
        return problems.UnsupportedMediaTypeError("send the body as application/json")
    for param in params:
        name, _, param_value = param.partition("=")
        if name.strip().lower() == "charset" and param_value.strip().strip('"').lower() not in (
            "utf-8",
            "utf8",
        ):
            return problems.UnsupportedMediaTypeError("send the body in UTF-8 (charset=utf-8)")
    return None


class _DuplicateMemberError(ValueError):
    """A JSON object names a member twice (RFC 8259 section 4: names SHOULD be unique; which
    value wins differs between parsers, so the request is ambiguous)."""


def _unique_members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for name, value in pairs:
        if name in result:
            shown = name if len(name) <= 40 and name.isprintable() else "a member"
            raise _DuplicateMemberError(f"the body names {shown!r} twice in one object")
        result[name] = value
    return result


def _nesting(value: Any) -> int:
    """How deep arrays and objects nest in ``value`` (iterative: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in children)
    return deepest


def _lower_media_type(event: dict[str, Any]) -> dict[str, Any]:
    """Media types are case-insensitive (RFC 9110 section 8.3.1), but Powertools compares the
    ``content-type`` header with ``application/json`` as is: hand it the lower-case value."""
    headers = event.get("headers")
    if not isinstance(headers, dict):
        return event
    lowered = {
        k: v.lower() if str(k).lower() == "content-type" and isinstance(v, str) else v
        for k, v in headers.items()
    }
    return {**event, "headers": lowered}


def _proxy_problem(error: problems.ServiceError) -> dict[str, Any]:
    body: dict[str, Any] = {"type": problems.type_for(error.title), "title": error.title}
    body.update({"status": error.status, "detail": error.detail})
    return {
        "statusCode": error.status,
        "headers": {"Content-Type": problems.PROBLEM_JSON},
        "body": json.dumps(body, ensure_ascii=False),
        "isBase64Encoded": False,
    }


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Answer one API Gateway HTTP API (payload v2) event."""
    deps = get_dependencies()
    deps.creator.idempotency_config.register_lambda_context(context)
    deps.series_creator.idempotency_config.register_lambda_context(context)
    refused = _precheck(event)
    if refused is not None:
        return _proxy_problem(refused)
    app.append_context(owner=_caller(event))
    return app.resolve(_lower_media_type(event), context)
