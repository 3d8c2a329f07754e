"""Print the API's OpenAPI 3 document, generated from the code by Powertools.

``python -m functions.api.openapi > openapi.json`` (``make openapi``); a test fails when the
committed ``openapi.json`` differs from what this prints, or from what ``GET /openapi.json``
serves. The document itself is built in ``scheduled_posts.api.openapi``.
"""

from __future__ import annotations

from scheduled_posts.api import openapi
from scheduled_posts.api.resolver import app


def openapi_document() -> str:
    """The document of the API's resolver (indented JSON with a trailing newline)."""
    return openapi.openapi_document(app)


if __name__ == "__main__":
    print(openapi_document(), end="")
