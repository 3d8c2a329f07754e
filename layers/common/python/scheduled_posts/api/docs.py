"""The OpenAPI ``responses`` of the routes: the success answer plus the problem+json errors.

Only documentation: the answers themselves come from the routes and ``scheduled_posts.problems``.
"""

from __future__ import annotations

from typing import Any, cast

from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse

from scheduled_posts import problems
from scheduled_posts.api.params import JSON
from scheduled_posts.models.api import GatewayMessage, Problem

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
#: The errors every route with a caller can answer.
COMMON = (400, 401, 404, 413, 415, 422)


def responses(
    model: type | None,
    code: int = 200,
    description: str = "OK",
    *,
    errors: tuple[int, ...] = COMMON,
    overrides: dict[int, str] | None = None,
) -> dict[int, OpenAPIResponse]:
    """OpenAPI responses: the success ``code`` with ``model`` plus the problem+json ``errors``
    (``overrides`` rewrites an error's description)."""
    result: dict[int, Any] = {code: {"description": description}}
    if model is not None:
        result[code]["content"] = {JSON: {"model": model}}
    for error in errors:
        result[error] = dict(_ERROR_DOCS[error])
    for error, text in (overrides or {}).items():
        result[error]["description"] = text
    return cast(dict[int, OpenAPIResponse], result)
