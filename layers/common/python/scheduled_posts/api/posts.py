"""Scheduled posts: ``POST/GET /v1/scheduled-posts``,
``GET/PATCH/DELETE /v1/scheduled-posts/{schedule_id}``, and a post's ``attempts``, ``events``
and ``retry`` (logic: ``logic/posts.py``, ``logic/drafts.py`` for PATCH and DELETE, which hands
what is not a draft on to ``logic/posts.py``, ``logic/event_feed.py``, ``logic/recovery.py``).

A single-post answer carries the post's ``ETag`` (``models.api.etag_of``), to send back in
``If-Match``.
"""

from __future__ import annotations

from typing import Annotated, cast

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
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
    PostDepsArg,
    ScheduleId,
)
from scheduled_posts.logic import drafts, event_feed, post_reads, recovery, verify
from scheduled_posts.logic.permalinks import planned_urls_of
from scheduled_posts.models.api import (
    ID_PATTERN,
    AttemptList,
    AttemptOut,
    EventEntry,
    EventTrail,
    PostCreate,
    PostOut,
    PostPage,
    etag_of,
)
from scheduled_posts.models.drafts import PostEditBody
from scheduled_posts.models.post import PostStatus

router = APIGatewayHttpRouter()

_CHANGED = responses(
    PostOut,
    errors=(*COMMON, 409, 412),
    overrides={
        409: "The post is neither scheduled nor waiting for its next attempt; or it waits but"
        " an attempt may have published (cancel it instead), or the edit moves its publish_at"
        " or channels"
    },
)
_CANCELLED = {
    **responses(
        PostOut,
        errors=(*COMMON, 409, 412),
        overrides={409: "The post is neither scheduled nor waiting for its next attempt"},
        description="Cancelled: the cancelled post",
    ),
    204: cast(OpenAPIResponse, {"description": "A draft, deleted (nothing is left to show)"}),
}


def _post_response(post: PostOut, status: int = 200) -> Response[PostOut]:
    return Response(
        status_code=status,
        content_type=JSON,
        body=post,
        headers={"ETag": etag_of(post.model_dump(mode="json"))},
    )


@router.post(
    "/v1/scheduled-posts",
    summary="Schedule a post (or, without publish_at, create a draft)",
    responses=responses(
        PostOut,
        201,
        "Created",
        errors=(*COMMON, 409, 429),
        overrides={409: "The first request with this Idempotency-Key is still running"},
    ),
)
def create_post(
    body: PostCreate, owner: Owner, deps: Deps, idempotency_key: IdempotencyKey = None
) -> Response[PostOut]:
    created = deps.creator.create(body, owner=owner, idempotency_key=idempotency_key)
    return _post_response(created, 201)


@router.get(
    "/v1/scheduled-posts",
    summary="List your posts by (publish_at, schedule_id)",
    responses=responses(PostPage),
)
def list_posts(
    *,
    owner: Owner,
    deps: Deps,
    status: Annotated[PostStatus | None, Query(description="Only posts in this status")] = None,
    from_: Annotated[
        str | None, Query(alias="from", max_length=64, description="RFC 3339, inclusive")
    ] = None,
    to: Annotated[str | None, Query(max_length=64, description="RFC 3339, exclusive")] = None,
    limit: PageSize = 20,
    cursor: Cursor = None,
    channel_id: Annotated[
        str | None, Query(pattern=ID_PATTERN, description="Only posts to this channel")
    ] = None,
    series_id: Annotated[
        str | None,
        Query(pattern=ID_PATTERN, description="Only this recurring schedule's occurrences"),
    ] = None,
) -> PostPage:
    page = post_reads.list_posts(
        owner,
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


@router.get(
    "/v1/scheduled-posts/<schedule_id>",
    summary="Get a post",
    responses=responses(PostOut),
)
def get_post(schedule_id: ScheduleId, owner: Owner, deps: PostDepsArg) -> Response[PostOut]:
    post = post_reads.get_post(owner, schedule_id, deps=deps)
    return _post_response(PostOut.of(post, planned_urls_of(owner, post, deps.channels)))


@router.patch(
    "/v1/scheduled-posts/<schedule_id>",
    summary="Edit a scheduled post or a draft (a draft given publish_at is scheduled)",
    responses=_CHANGED,
)
def update_post(
    schedule_id: ScheduleId,
    body: PostEditBody,
    owner: Owner,
    deps: PostDepsArg,
    if_match: IfMatch = None,
) -> Response[PostOut]:
    post = drafts.update_post(owner, schedule_id, body, if_match=if_match, deps=deps)
    return _post_response(PostOut.of(post, planned_urls_of(owner, post, deps.channels)))


@router.delete(
    "/v1/scheduled-posts/<schedule_id>",
    summary="Cancel a scheduled post, or delete a draft",
    responses=_CANCELLED,
)
def cancel_post(
    schedule_id: ScheduleId, owner: Owner, deps: PostDepsArg, if_match: IfMatch = None
) -> Response[PostOut | None]:
    post = drafts.delete_post(owner, schedule_id, if_match=if_match, deps=deps)
    if post is None:
        return Response(status_code=204)
    return _post_response(PostOut.of(post))  # type: ignore[return-value]


@router.get(
    "/v1/scheduled-posts/<schedule_id>/attempts",
    summary="The delivery attempts of a post",
    responses=responses(AttemptList),
)
def list_attempts(schedule_id: ScheduleId, owner: Owner, deps: PostDepsArg) -> AttemptList:
    found = post_reads.list_attempts(owner, schedule_id, deps=deps)
    return AttemptList(items=[AttemptOut.of(a) for a in found])


@router.get(
    "/v1/scheduled-posts/<schedule_id>/events",
    summary="The outcome events of a post, in commit order (its trail)",
    responses=responses(EventTrail),
)
def list_post_events(schedule_id: ScheduleId, owner: Owner, deps: Deps) -> EventTrail:
    found = event_feed.post_events(owner, schedule_id, feed=deps.event_feed, deps=deps.post_deps)
    return EventTrail(items=[EventEntry(event=e.event, trace_id=e.trace_id) for e in found])


@router.post(
    "/v1/scheduled-posts/<schedule_id>/retry",
    summary="Deliver a failed or partially published post again (only its failed channels)",
    responses=responses(
        PostOut,
        202,
        "Accepted: the post is publishing again",
        errors=(*COMMON, 409),
        overrides={409: "Not failed/partially_published, past the misfire grace, or raced"},
    ),
)
def retry_post(schedule_id: ScheduleId, owner: Owner, deps: Deps) -> Response[PostOut]:
    post = recovery.retry_post(
        owner, schedule_id, deps=recovery.RecoveryDeps(deps.settings, clock=deps.clock)
    )
    return _post_response(PostOut.of(post), 202)


@router.post(
    "/v1/scheduled-posts/<schedule_id>/verify",
    summary="Read the post's published deliveries back from their networks now",
    responses=responses(PostOut),
)
def verify_post(schedule_id: ScheduleId, owner: Owner, deps: Deps) -> Response[PostOut]:
    verify.verify_post(owner, schedule_id, deps=deps.verify_deps)
    post = post_reads.get_post(owner, schedule_id, deps=deps.post_deps)
    return _post_response(PostOut.of(post))
