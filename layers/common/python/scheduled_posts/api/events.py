"""The event feed: ``GET /v1/events``, the caller's outcome events after an opaque cursor
(logic: ``logic/event_feed.py``; the events: ``docs/events.md``). A post's own trail is
``GET /v1/scheduled-posts/{schedule_id}/events`` (``posts.py``)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from scheduled_posts.api.docs import responses
from scheduled_posts.api.params import Deps, Owner, PageSize
from scheduled_posts.logic import event_feed
from scheduled_posts.models.api import EventEntry, EventPage

router = APIGatewayHttpRouter()


@router.get(
    "/v1/events",
    summary="Your outcome events, oldest first, after an opaque cursor",
    responses=responses(EventPage, errors=(400, 401, 422)),
)
def list_events(
    owner: Owner,
    deps: Deps,
    after: Annotated[
        str | None, Query(max_length=1024, description="next_cursor of the previous page")
    ] = None,
    limit: PageSize = 50,
) -> EventPage:
    page = event_feed.list_events(
        owner, after=after, limit=limit, feed=deps.event_feed, codec=deps.cursor_codec()
    )
    return EventPage(
        items=[EventEntry(event=e.event, trace_id=e.trace_id) for e in page.events],
        next_cursor=page.next_cursor,
    )
