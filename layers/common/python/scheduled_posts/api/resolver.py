"""The API's Powertools resolver, assembled from one router per resource.

``app`` validates requests and answers against the routes' models (``enable_validation``),
maps every error to problem+json (``scheduled_posts.problems``), refuses a query parameter the
matched route does not define (422 naming it) and writes JSON as UTF-8 without ``\\uXXXX``
escapes of non-ASCII characters. ``functions/api/handler.py`` runs it after the pre-check.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.api_gateway import BaseRouter
from aws_lambda_powertools.shared.json_encoder import Encoder

from scheduled_posts import problems
from scheduled_posts.api import (
    account,
    channels,
    events,
    exports,
    imports,
    media,
    notification_endpoints,
    posting_queue,
    posts,
    recurring,
    service,
)
from scheduled_posts.errors import ValidationFailedError


def _known_query_only(router: BaseRouter, next_middleware: Callable[..., Response]) -> Response:
    """422 for a query parameter the matched route does not define, naming each."""
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


def build_resolver() -> APIGatewayHttpResolver:
    """A resolver with every resource's router (``scheduled_posts/api/<resource>.py``)."""
    resolver = APIGatewayHttpResolver(
        enable_validation=True,
        serializer=partial(json.dumps, separators=(",", ":"), ensure_ascii=False, cls=Encoder),
    )
    problems.register(resolver)
    resolver.use(middlewares=[_known_query_only])
    for module in (
        service,
        channels,
        notification_endpoints,
        posts,
        events,
        account,
        recurring,
        media,
        posting_queue,
        exports,
        imports,
    ):
        resolver.include_router(module.router)
    return resolver


#: The process's resolver.
app = build_resolver()
