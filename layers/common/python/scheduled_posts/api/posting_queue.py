"""Posting schedules and the queue: ``PUT/GET/DELETE /v1/channels/{channel_id}/posting-schedule``,
``GET /v1/channels/{channel_id}/queue`` (logic: ``logic/posting_queue.py``)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from scheduled_posts.api.docs import responses
from scheduled_posts.api.params import ChannelId, Deps, Owner
from scheduled_posts.logic import posting_queue
from scheduled_posts.models.posting_queue import (
    MAX_QUEUE_COUNT,
    PostingScheduleIn,
    PostingScheduleOut,
    QueueOut,
)

router = APIGatewayHttpRouter()
_PATH = "/v1/channels/<channel_id>/posting-schedule"

Count = Annotated[
    int, Query(ge=1, le=MAX_QUEUE_COUNT, description="How many upcoming slots to list")
]


@router.put(
    _PATH,
    summary="Set a channel's posting schedule: weekly slots in an IANA zone",
    responses=responses(PostingScheduleOut),
)
def put_posting_schedule(
    channel_id: ChannelId, body: PostingScheduleIn, owner: Owner, deps: Deps
) -> PostingScheduleOut:
    return posting_queue.put_schedule(owner, channel_id, body, deps=deps.queue_deps)


@router.get(
    _PATH,
    summary="Get a channel's posting schedule and its next slots",
    responses=responses(PostingScheduleOut),
)
def get_posting_schedule(channel_id: ChannelId, owner: Owner, deps: Deps) -> PostingScheduleOut:
    return posting_queue.get_schedule(owner, channel_id, deps=deps.queue_deps)


@router.delete(
    _PATH,
    summary="Remove a channel's posting schedule (queued posts keep their slots)",
    responses=responses(None, 204, "Removed"),
)
def delete_posting_schedule(channel_id: ChannelId, owner: Owner, deps: Deps) -> Response[None]:
    posting_queue.delete_schedule(owner, channel_id, deps=deps.queue_deps)
    return Response(status_code=204)


@router.get(
    "/v1/channels/<channel_id>/queue",
    summary="The channel's next posting slots, each with the post that holds it (or free)",
    responses=responses(QueueOut),
)
def get_queue(channel_id: ChannelId, owner: Owner, deps: Deps, count: Count = 10) -> QueueOut:
    return posting_queue.queue(owner, channel_id, count, deps=deps.queue_deps)
