"""The parameter types the routers share: path ids, headers, paging, and the ``Depends``
injections (the caller, the collaborators).

Every route takes its caller and collaborators the same way, through Powertools' ``Depends``
(``aws_lambda_powertools.event_handler.Depends``): ``owner: Owner`` is the JWT's ``sub`` (put
in the resolver's context by ``functions/api/handler.py`` after the pre-check), ``deps: Deps``
the process's :class:`~scheduled_posts.api_app.ApiDependencies` (tests install their own with
``set_dependencies``). A dependency only reads what is already built: calls that may fail
(Secrets Manager for the cursor key) stay in the route, so their errors reach
``scheduled_posts.problems`` unwrapped.
"""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends, Request
from aws_lambda_powertools.event_handler.openapi.params import Header, Path, Query

from scheduled_posts.api_app import ApiDependencies, get_dependencies
from scheduled_posts.logic.posts import PostDeps
from scheduled_posts.logic.series import SeriesDeps
from scheduled_posts.models.api import ID_PATTERN

JSON = "application/json"

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
#: A page size of 1 to 100 (the default is the route's).
PageSize = Annotated[int, Query(ge=1, le=100, description="Page size")]
#: The ``next_cursor`` of the previous page.
Cursor = Annotated[str | None, Query(max_length=1024, description="next_cursor")]


def caller(request: Request) -> str:
    """The caller: the JWT's ``sub``, checked by the pre-check (``precheck.caller``)."""
    return str(request.context["owner"])


def post_deps(deps: Annotated[ApiDependencies, Depends(get_dependencies)]) -> PostDeps:
    """The post logic's collaborators."""
    return deps.post_deps


def series_deps(deps: Annotated[ApiDependencies, Depends(get_dependencies)]) -> SeriesDeps:
    """The recurring-schedule logic's collaborators."""
    return deps.series_deps


#: The caller (the JWT's ``sub``).
Owner = Annotated[str, Depends(caller)]
#: The process's collaborators.
Deps = Annotated[ApiDependencies, Depends(get_dependencies)]
#: The post logic's collaborators.
PostDepsArg = Annotated[PostDeps, Depends(post_deps)]
#: The recurring-schedule logic's collaborators.
SeriesDepsArg = Annotated[SeriesDeps, Depends(series_deps)]
