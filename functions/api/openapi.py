"""Print the API's OpenAPI 3 document, generated from the code by Powertools.

``python -m functions.api.openapi > openapi.json`` (``make openapi``); a test fails when the
committed ``openapi.json`` differs from what this prints.
"""

from __future__ import annotations

import json

from aws_lambda_powertools.event_handler.openapi.models import HTTPBearer

from functions.api.handler import app

TITLE = "scheduled-posts API"
VERSION = "1.0.0"
DESCRIPTION = (
    "Schedule social-media posts; each is published once per channel, never early. "
    "Every error the service returns is application/problem+json (RFC 9457). API Gateway "
    'itself answers 401 {"message":"Unauthorized"} (JWT authorizer) and '
    '429 {"message":"Too Many Requests"} (throttling).'
)


def openapi_document() -> str:
    """The OpenAPI 3 document as indented JSON (stable key order, trailing newline)."""
    raw = app.get_openapi_json_schema(
        title=TITLE,
        version=VERSION,
        description=DESCRIPTION,
        security_schemes={"bearerAuth": HTTPBearer(scheme="bearer", bearerFormat="JWT")},
        security=[{"bearerAuth": []}],
    )
    return json.dumps(json.loads(raw), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    print(openapi_document(), end="")
