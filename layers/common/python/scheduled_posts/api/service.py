"""The service's own routes, answered without a caller (public in ``routes.py``):
``GET /v1/health`` for load balancers and the page, ``GET /openapi.json`` for the contract and
``GET /docs``, the contract as a Swagger UI page that works offline (Powertools ships Swagger
UI's script and style sheet, inlined into the page: no CDN)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver
from aws_lambda_powertools.event_handler.openapi import swagger_ui
from aws_lambda_powertools.event_handler.openapi.swagger_ui import generate_swagger_html
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


def _resolver() -> ApiGatewayResolver:
    resolver = router.api_resolver
    if not isinstance(resolver, ApiGatewayResolver):
        raise TypeError("the service router is not included in a resolver")
    return resolver


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
    return Response(status_code=200, content_type=JSON, body=openapi_document(_resolver()))


@cache
def api_page(resolver: ApiGatewayResolver) -> str:
    """The Swagger UI page of ``resolver``'s document, script and styles inlined (about 1.7 MB;
    ``</`` escaped in the document so it cannot close the page's ``<script>``), linking to
    ``/openapi.json``."""
    assets = Path(swagger_ui.__file__).parent
    page = generate_swagger_html(
        openapi_document(resolver).replace("</", "<\\/"),
        (assets / "swagger-ui-bundle.min.js").read_text(encoding="utf-8"),
        (assets / "swagger-ui.min.css").read_text(encoding="utf-8"),
        "",
        None,
    )
    # The page's link to its document: ours is /openapi.json (Powertools' is ?format=json).
    return page.replace('currentUrl.pathname + "?format=json"', '"/openapi.json"')


@router.get("/docs", include_in_schema=False, compress=True)
def docs_page() -> Response[str]:
    """The API page (gzip when the client accepts it: about 0.45 MB)."""
    return Response(status_code=200, content_type="text/html", body=api_page(_resolver()))
