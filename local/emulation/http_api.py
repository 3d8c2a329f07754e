"""API Gateway HTTP API (payload format 2.0) events, built as API Gateway builds them.

The local HTTP front (``local/http_front.py``) turns each real request into one; the tests
build them for in-process calls of the API Lambda (``tests/support/api.py``). Source: API
Gateway developer guide, "Create AWS Lambda proxy integrations for HTTP APIs" (payload 2.0)
and "Control access to HTTP APIs with JWT authorizers" (claims under
``requestContext.authorizer.jwt``).
"""

from __future__ import annotations

import base64
import json
import uuid
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from local.emulation.lambda_runtime import ACCOUNT

_TEXT_TYPES = ("text/", "application/json", "application/problem+json", "application/xml")


def claims_for_event(claims: dict[str, Any]) -> dict[str, str]:
    """Claims as API Gateway puts them in the event: every value a string.

    Numbers become their decimal text, booleans ``true``/``false``, arrays ``[a b]``.
    """

    def text(value: Any) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, list):
            return "[" + " ".join(text(v) for v in value) + "]"
        if isinstance(value, dict):
            return json.dumps(value, separators=(",", ":"))
        return str(value)

    return {name: text(value) for name, value in claims.items()}


def scopes_for_event(claims: dict[str, Any]) -> list[str] | None:
    """The ``scope`` (space-separated) or ``scp`` claim as a list; ``None`` when absent."""
    raw = claims.get("scope", claims.get("scp"))
    if raw is None:
        return None
    if isinstance(raw, list):
        return [str(s) for s in raw]
    return [s for s in str(raw).split(" ") if s]


def build_event(
    *,
    method: str,
    target: str,
    headers: list[tuple[str, str]],
    body: bytes,
    claims: dict[str, Any] | None,
    source_ip: str,
    host: str,
    now: datetime | None = None,
    route_key: str = "$default",
    path_parameters: dict[str, str] | None = None,
    request_id: str | None = None,
    api_id: str = "local",
) -> dict[str, Any]:
    """An API Gateway HTTP API payload v2 event for one request.

    ``target`` is the request target (path and query string); ``claims`` the JWT claims of
    the authorizer (``None``: no ``authorizer`` in the event, as for a route without one).
    Repeated headers and query parameters are joined with commas; cookies go to ``cookies``;
    a body that is not text is base64-encoded (``isBase64Encoded``), as API Gateway does.
    ``request_id`` defaults to a random one, ``now``
    to the current time.
    """
    now = now or datetime.now(UTC)
    parts = urlsplit(target)
    merged: dict[str, str] = {}
    cookies: list[str] = []
    for name, value in headers:
        key = name.lower()
        if key == "cookie":
            cookies.extend(c.strip() for c in value.split(";") if c.strip())
            continue
        merged[key] = f"{merged[key]},{value}" if key in merged else value
    query: dict[str, str] = {}
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        query[name] = f"{query[name]},{value}" if name in query else value
    content_type = merged.get("content-type", "").lower()
    is_text = not body or content_type.startswith(_TEXT_TYPES) or content_type == ""
    text_body: str | None = None
    if body:
        try:
            text_body = body.decode("utf-8") if is_text else None
        except UnicodeDecodeError:
            text_body = None
    if request_id is None:
        request_id = base64.b64encode(uuid.uuid4().bytes[:10]).decode().rstrip("=")
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": route_key,
        "rawPath": parts.path,
        "rawQueryString": parts.query,
        "headers": merged,
        "requestContext": {
            "accountId": ACCOUNT,
            "apiId": api_id,
            "domainName": host,
            "domainPrefix": host.split(".", 1)[0].split(":", 1)[0],
            "http": {
                "method": method,
                "path": parts.path,
                "protocol": "HTTP/1.1",
                "sourceIp": source_ip,
                "userAgent": merged.get("user-agent", ""),
            },
            "requestId": request_id,
            "routeKey": route_key,
            "stage": "$default",
            "time": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "timeEpoch": int(now.timestamp() * 1000),
        },
        "isBase64Encoded": False,
    }
    if claims is not None:
        event["requestContext"]["authorizer"] = {
            "jwt": {"claims": claims_for_event(claims), "scopes": scopes_for_event(claims)}
        }
    if cookies:
        event["cookies"] = cookies
    if query:
        event["queryStringParameters"] = query
    if path_parameters:
        event["pathParameters"] = path_parameters
    if body:
        if text_body is not None:
            event["body"] = text_body
        else:
            event["body"] = base64.b64encode(body).decode()
            event["isBase64Encoded"] = True
    return event
