"""The API's route table: every route once, read by the API Lambda (the pre-check and the OpenAPI
document ask it which routes are public), ``infra/api.py`` and the local front
(``local/http_front.py``).

Plain data (no Powertools, no CDK) so that ``cdk synth`` and the local front import it cheaply.
Paths use API Gateway's ``{name}`` syntax; the routers write the same path with Powertools'
``<name>``. A test holds this table equal to the routes the resolver registered, so a route
added to a router without its line here (or the reverse) fails before it can be deployed.

``auth`` is whether the route sits behind the JWT authorizer. A public route (``auth=False``)
answers without a caller: the deployed route has no authorizer, the local front asks for no
token and the API Lambda's pre-check does not ask for a ``sub`` claim.

API Gateway prefers a literal segment over a ``{name}`` one (``preview`` over ``{series_id}``:
"Routing API requests", HTTP APIs); the local front does the same by trying literal routes of
this table first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ApiRoute:
    """One route: HTTP ``method``, ``path`` (``{name}`` parameters) and whether it needs a JWT."""

    method: str
    path: str
    auth: bool = True

    @property
    def key(self) -> str:
        """API Gateway's route key: ``"GET /v1/channels/{channel_id}"``."""
        return f"{self.method} {self.path}"


def _routes(path: str, *methods: str, auth: bool = True) -> tuple[ApiRoute, ...]:
    return tuple(ApiRoute(method, path, auth) for method in methods)


#: Every route of the service, grouped by resource (``scheduled_posts/api/<resource>.py``).
ROUTES: tuple[ApiRoute, ...] = (
    # service.py: no caller needed
    *_routes("/openapi.json", "GET", auth=False),
    *_routes("/v1/health", "GET", auth=False),
    *_routes("/docs", "GET", auth=False),
    # channels.py
    *_routes("/v1/channels", "GET", "POST"),
    *_routes("/v1/channels/{channel_id}", "GET", "PATCH", "DELETE"),
    *_routes("/v1/channels/{channel_id}/rotate-secret", "POST"),
    # posting_queue.py
    *_routes("/v1/channels/{channel_id}/posting-schedule", "GET", "PUT", "DELETE"),
    *_routes("/v1/channels/{channel_id}/queue", "GET"),
    # notification_endpoints.py
    *_routes("/v1/notification-endpoints", "GET", "POST"),
    *_routes("/v1/notification-endpoints/{endpoint_id}", "DELETE"),
    *_routes("/v1/notification-endpoints/{endpoint_id}/rotate-secret", "POST"),
    # posts.py
    *_routes("/v1/scheduled-posts", "GET", "POST"),
    *_routes("/v1/scheduled-posts/{schedule_id}", "GET", "PATCH", "DELETE"),
    *_routes("/v1/scheduled-posts/{schedule_id}/attempts", "GET"),
    *_routes("/v1/scheduled-posts/{schedule_id}/events", "GET"),
    *_routes("/v1/scheduled-posts/{schedule_id}/retry", "POST"),
    *_routes("/v1/scheduled-posts/{schedule_id}/verify", "POST"),
    # exports.py (the feed's token is its credential: no JWT)
    *_routes("/v1/scheduled-posts/export.csv", "GET"),
    *_routes("/v1/me/calendar-feed", "POST", "DELETE"),
    *_routes("/v1/calendar-feeds/{token}", "GET", auth=False),
    # imports.py
    *_routes("/v1/imports", "POST"),
    *_routes("/v1/imports/uploads", "POST"),
    *_routes("/v1/imports/{import_id}", "GET"),
    # events.py
    *_routes("/v1/events", "GET"),
    # account.py
    *_routes("/v1/me", "DELETE"),
    *_routes("/v1/me/export", "GET"),
    *_routes("/v1/me/erasure", "GET"),
    # media.py
    *_routes("/v1/media", "GET", "POST"),
    *_routes("/v1/media/{media_id}", "GET", "PATCH", "DELETE"),
    *_routes("/v1/media/{media_id}/complete", "POST"),
    # recurring.py
    *_routes("/v1/recurring-schedules", "GET", "POST"),
    *_routes("/v1/recurring-schedules/preview", "POST"),
    *_routes("/v1/recurring-schedules/{series_id}", "GET", "PATCH", "DELETE"),
    *_routes("/v1/recurring-schedules/{series_id}/occurrences", "GET"),
    *_routes("/v1/recurring-schedules/{series_id}/pause", "POST"),
    *_routes("/v1/recurring-schedules/{series_id}/resume", "POST"),
)

#: ``(method, path)`` of the routes that answer without a caller (no parameters in their paths).
PUBLIC: frozenset[tuple[str, str]] = frozenset((r.method, r.path) for r in ROUTES if not r.auth)
_PUBLIC_PATTERNS = tuple(
    (r.method, re.compile(re.sub(r"\\\{[a-z_]+\\\}", "[^/]+", re.escape(r.path)) + r"\Z"))
    for r in ROUTES
    if not r.auth
)


def is_public_request(method: str | None, raw_path: str | None) -> bool:
    """Whether ``method raw_path`` (a request's, ``{name}`` segments filled in) asks for a
    route that needs no caller."""
    return any(
        method == m and raw_path is not None and pattern.match(raw_path)
        for m, pattern in _PUBLIC_PATTERNS
    )


def by_path() -> dict[str, tuple[ApiRoute, ...]]:
    """The routes grouped by path, in table order: ``{path: (route, ...)}``."""
    grouped: dict[str, list[ApiRoute]] = {}
    for route in ROUTES:
        grouped.setdefault(route.path, []).append(route)
    return {path: tuple(routes) for path, routes in grouped.items()}
