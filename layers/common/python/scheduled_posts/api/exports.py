"""Exports: ``GET /v1/scheduled-posts/export.csv``, the calendar feed (``POST/DELETE
/v1/me/calendar-feed``, public ``GET /v1/calendar-feeds/{token}``) (logic:
``logic/post_csv.py``, ``logic/calendar_feed.py``)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from pydantic import BaseModel

from scheduled_posts.api.docs import COMMON, responses
from scheduled_posts.api.params import JSON, Deps, Owner
from scheduled_posts.logic import calendar_feed, post_csv
from scheduled_posts.logic.exports import export_posts, feed_posts

router = APIGatewayHttpRouter()


def _text(
    media_type: str,
    description: str,
    errors: tuple[int, ...],
    overrides: dict[int, str] | None = None,
) -> dict[int, OpenAPIResponse]:
    """The responses of a route whose success answer is text of ``media_type``."""
    documented = responses(None, description=description, errors=errors, overrides=overrides)
    documented[200]["content"] = {
        media_type.split(";", maxsplit=1)[0]: {"schema": {"type": "string"}}
    }
    return documented


Token = Annotated[str, Path(max_length=64, description="The feed's secret token")]


class CalendarFeedOut(BaseModel):
    """The caller's calendar feed: subscribe to ``url`` (it carries the secret: keep it so)."""

    url: str
    path: str


@router.get(
    "/v1/scheduled-posts/export.csv",
    summary="Your posts as CSV (the import's format; formulas escaped)",
    responses=_text(post_csv.MEDIA_TYPE, "RFC 4180 CSV, a header line first", COMMON),
)
def export_csv(
    owner: Owner,
    deps: Deps,
    from_: Annotated[
        str | None, Query(alias="from", max_length=64, description="RFC 3339, inclusive")
    ] = None,
    to: Annotated[str | None, Query(max_length=64, description="RFC 3339, exclusive")] = None,
) -> Response[str]:
    posts = export_posts(owner, from_=from_, to=to, deps=deps.post_deps, codec=deps.cursor_codec())
    return Response(
        status_code=200,
        content_type=post_csv.MEDIA_TYPE,
        body=post_csv.posts_csv(posts),
        headers={"Content-Disposition": 'attachment; filename="scheduled-posts.csv"'},
    )


def _feed_out(token: str) -> CalendarFeedOut:
    path = f"/v1/calendar-feeds/{token}"
    host = router.current_event.request_context.domain_name or ""
    scheme = "http" if host.split(":")[0] in ("127.0.0.1", "localhost") else "https"
    return CalendarFeedOut(url=f"{scheme}://{host}{path}", path=path)


@router.post(
    "/v1/me/calendar-feed",
    summary="Create your calendar feed, or rotate its secret URL (the old one stops working)",
    responses=responses(CalendarFeedOut, 201, "Created"),
)
def issue_calendar_feed(owner: Owner, deps: Deps) -> Response[CalendarFeedOut]:
    token = calendar_feed.issue(owner, store=deps.calendar_feeds, now=deps.clock.now())
    return Response(status_code=201, content_type=JSON, body=_feed_out(token))


@router.delete(
    "/v1/me/calendar-feed",
    summary="Revoke your calendar feed (its URL answers 404)",
    responses=responses(None, 204, "Revoked"),
)
def revoke_calendar_feed(owner: Owner, deps: Deps) -> Response[None]:
    calendar_feed.revoke(owner, store=deps.calendar_feeds, now=deps.clock.now())
    return Response(status_code=204)


@router.get(
    "/v1/calendar-feeds/<token>",
    summary="A calendar feed (RFC 5545), by its secret token: no sign-in, for calendar apps",
    responses=_text(
        calendar_feed.MEDIA_TYPE,
        "An RFC 5545 iCalendar",
        (400, 404, 413, 415, 422),
        overrides={404: "No such feed (unknown, rotated away or revoked)"},
    ),
)
def get_calendar_feed(token: Token, deps: Deps) -> Response[bytes]:
    owner = calendar_feed.owner_of(token, store=deps.calendar_feeds)
    posts, names = feed_posts(owner, deps=deps.post_deps, codec=deps.cursor_codec())
    return Response(
        status_code=200,
        content_type=calendar_feed.MEDIA_TYPE,
        body=calendar_feed.calendar_of(posts, names),
    )
