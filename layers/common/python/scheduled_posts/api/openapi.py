"""The API's OpenAPI 3 document, generated from the routers by Powertools.

Served by ``GET /openapi.json`` (``service.py``) and printed by ``python -m functions.api.openapi``
(``make openapi``, which writes the committed ``openapi.json``; a test holds the two equal).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver
from aws_lambda_powertools.event_handler.openapi.models import HTTPBearer

from scheduled_posts.api.routes import PUBLIC

TITLE = "scheduled-posts API"
VERSION = "1.0.0"
DESCRIPTION = (
    "Schedule social-media posts; each is published once per channel, never early. "
    "Every error the service returns is application/problem+json (RFC 9457). API Gateway "
    'itself answers 401 {"message":"Unauthorized"} (JWT authorizer) and '
    '429 {"message":"Too Many Requests"} (throttling).'
)

#: The one spelling of each header name the API documents (RFC 9110 field names are
#: case-insensitive; Powertools writes its header parameters in lower case, the docs do not).
HEADER_NAMES = {name.lower(): name for name in ("Idempotency-Key", "If-Match")}
#: The ``ETag`` every single-post answer carries (``models.api.etag_of``).
ETAG_HEADER = {
    "ETag": {
        "description": 'The post\'s entity tag: "<version>" while scheduled, then '
        '"<version>-<digest>"; send it back in If-Match',
        "schema": {"type": "string"},
    }
}


def _canonical(document: dict[str, Any]) -> dict[str, Any]:
    """Header parameters in their documented spelling; ``ETag`` on single-post answers; no
    security requirement on the route table's public routes (OpenAPI 3.1 section 4.8.10:
    an empty ``security`` list removes the document's requirement)."""
    for path, operations in document.get("paths", {}).items():
        for method, operation in operations.items():
            if (method.upper(), path) in PUBLIC:
                operation["security"] = []
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "header":
                    parameter["name"] = HEADER_NAMES.get(parameter["name"], parameter["name"])
            for code, response in operation.get("responses", {}).items():
                schema = response.get("content", {}).get("application/json", {}).get("schema", {})
                if code.startswith("2") and schema.get("$ref") == "#/components/schemas/PostOut":
                    response["headers"] = ETAG_HEADER
    return document


@cache
def openapi_document(resolver: ApiGatewayResolver) -> str:
    """The OpenAPI 3 document of ``resolver`` as indented JSON (stable key order, trailing
    newline); computed once per resolver."""
    raw = resolver.get_openapi_json_schema(
        title=TITLE,
        version=VERSION,
        description=DESCRIPTION,
        security_schemes={"bearerAuth": HTTPBearer(scheme="bearer", bearerFormat="JWT")},
        security=[{"bearerAuth": []}],
    )
    return json.dumps(_canonical(json.loads(raw)), indent=2, sort_keys=True) + "\n"
