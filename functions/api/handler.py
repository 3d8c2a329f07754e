"""The scheduling API Lambda: API Gateway HTTP API (payload v2) -> one logic call per route.

The routes live with their resources in ``scheduled_posts/api/`` (one Powertools router each,
assembled in ``scheduled_posts.api.resolver``); the route table is
``scheduled_posts/api/routes.py``. The caller is the JWT's ``sub``, checked by API Gateway's
JWT authorizer. Before routing, ``scheduled_posts.api.precheck`` refuses an event without a
usable caller (401), a body over 64 KiB (413), a body that is not ``application/json`` in
UTF-8 (415) and one that is not plain UTF-8 JSON (400). Every error is
``application/problem+json`` (``scheduled_posts.problems``). Every answer carries
``Cache-Control: no-store`` and ``X-Content-Type-Options: nosniff``
(``scheduled_posts.api.headers``).
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from scheduled_posts.api.headers import with_api_headers
from scheduled_posts.api.precheck import caller, lower_media_type, precheck, proxy_problem
from scheduled_posts.api.resolver import app
from scheduled_posts.api_app import get_dependencies
from scheduled_posts.observability import logger, metrics, tracer

__all__ = ["app", "lambda_handler"]


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Answer one API Gateway HTTP API (payload v2) event."""
    deps = get_dependencies()
    deps.creator.idempotency_config.register_lambda_context(context)
    deps.series_creator.idempotency_config.register_lambda_context(context)
    refused = precheck(event)
    if refused is not None:
        return with_api_headers(proxy_problem(refused))
    app.append_context(owner=caller(event))
    return with_api_headers(app.resolve(lower_media_type(event), context))
