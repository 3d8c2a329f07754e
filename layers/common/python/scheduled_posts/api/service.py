"""The service's own routes, answered without a caller: ``GET /v1/health`` for load balancers
and the page, ``GET /openapi.json`` for the contract (both public in ``routes.py``)."""

from __future__ import annotations

from typing import Literal

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from pydantic import BaseModel

from scheduled_posts.api.docs import responses
from scheduled_posts.api.openapi import openapi_document
from scheduled_posts.api.params import JSON

router = APIGatewayHttpRouter()

#: What a public route can still refuse: a body the pre-check refuses, an unknown query parameter.
_PUBLIC_ERRORS = (400, 413, 415, 422)


_OPENAPI_RESPONSES = responses(None, description="The OpenAPI 3.1 document", errors=_PUBLIC_ERRORS)
_OPENAPI_RESPONSES[200]["content"] = {
    JSON: {"schema": {"type": "object", "description": "An OpenAPI 3.1 document"}}
}


class Health(BaseModel):
    """The API Lambda answers: ``status`` is always ``"ok"``."""

    status: Literal["ok"] = "ok"


@router.get(
    "/v1/health",
    summary="Whether the API answers (no token; reads no table, so it says nothing of storage)",
    responses=responses(Health, errors=_PUBLIC_ERRORS),
)
def health() -> Health:
    return Health()


@router.get(
    "/openapi.json",
    summary="This API's OpenAPI 3 document (no token), generated from the code",
    responses=_OPENAPI_RESPONSES,
)
def openapi_json() -> Response[str]:
    resolver = router.api_resolver
    if not isinstance(resolver, ApiGatewayResolver):
        raise TypeError("the service router is not included in a resolver")
    return Response(status_code=200, content_type=JSON, body=openapi_document(resolver))
