"""The request pre-check: what the API refuses before routing, as API Gateway events go.

:func:`precheck` refuses an event without a usable ``sub`` claim (401: missing, over 255
characters or with control characters; not asked of the route table's public routes), a body
over 64 KiB (413, before parsing), a body without ``Content-Type: application/json`` or with a
charset other than UTF-8 (415), and a body that is not UTF-8 JSON, nests deeper than
:data:`MAX_JSON_DEPTH` or repeats a member name in an object (400). Every refusal is a
``scheduled_posts.problems`` error, answered as problem+json by :func:`proxy_problem`.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from scheduled_posts import problems
from scheduled_posts.api.routes import is_public_request

#: Largest accepted request body, in bytes (64 KiB, checked before parsing).
MAX_BODY_BYTES = 64 * 1024
JSON = "application/json"
#: Longest ``sub`` claim accepted (OpenID Connect Core 1.0 section 2: at most 255 characters).
#: It goes into DynamoDB keys (``OWNER#<sub>``), whose partition keys hold at most 2,048 bytes.
MAX_SUB_LENGTH = 255
#: Deepest JSON nesting accepted (a request needs 2). A body that ``json.loads`` can just parse
#: in the precheck could overflow the stack when Powertools parses it again, deeper: a 500.
MAX_JSON_DEPTH = 32


def caller(event: dict[str, Any]) -> str | None:
    """The JWT's ``sub`` claim of a payload v2 event, or ``None`` when missing or unusable."""
    context = event.get("requestContext") or {}
    claims = (((context.get("authorizer") or {}).get("jwt") or {}).get("claims")) or {}
    sub = claims.get("sub") if isinstance(claims, dict) else None
    if not isinstance(sub, str) or not 0 < len(sub) <= MAX_SUB_LENGTH or not sub.isprintable():
        return None
    return sub


def is_public(event: dict[str, Any]) -> bool:
    """Whether the event asks for a route that needs no caller (``routes.is_public_request``)."""
    method = ((event.get("requestContext") or {}).get("http") or {}).get("method")
    return is_public_request(method, event.get("rawPath"))


def precheck(event: dict[str, Any]) -> problems.ServiceError | None:
    """401 without a caller; 413 over 64 KiB; 415 when not JSON or not UTF-8; 400 when not
    UTF-8 JSON, nested too deeply or with a repeated member name. ``None``: go on."""
    if caller(event) is None and not is_public(event):
        return problems.UnauthenticatedError("the request carries no authenticated caller")
    body = event.get("body")
    if body is None or body == "":
        return None
    try:
        raw = (
            base64.b64decode(body, validate=True)
            if event.get("isBase64Encoded")
            else body.encode("utf-8", "surrogatepass")
        )
    except (binascii.Error, ValueError):
        return problems.MalformedBodyError("the body is not valid base64")
    if len(raw) > MAX_BODY_BYTES:
        return problems.PayloadTooLargeError(f"the body is over {MAX_BODY_BYTES} bytes")
    refused = _media_type_problem(event)
    if refused is not None:
        return refused
    return _json_problem(raw)


def _json_problem(raw: bytes) -> problems.ServiceError | None:
    """400 unless ``raw`` is UTF-8 JSON, at most :data:`MAX_JSON_DEPTH` deep, with unique
    member names."""
    too_deep = f"the body is nested too deeply (at most {MAX_JSON_DEPTH} levels)"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return problems.MalformedBodyError("the body is not valid UTF-8")
    try:
        parsed = json.loads(text, object_pairs_hook=_unique_members)
    except _DuplicateMemberError as exc:
        return problems.MalformedBodyError(str(exc))
    except RecursionError:
        return problems.MalformedBodyError(too_deep)
    except ValueError:
        return problems.MalformedBodyError("the body is not valid JSON")
    if _nesting(parsed) > MAX_JSON_DEPTH:
        return problems.MalformedBodyError(too_deep)
    return None


def _media_type_problem(event: dict[str, Any]) -> problems.ServiceError | None:
    """415 unless ``Content-Type`` is ``application/json`` with no charset or ``utf-8``
    (RFC 8259 section 8.1: JSON exchanged between systems is UTF-8; RFC 9110 section 8.3)."""
    headers = {str(k).lower(): v for k, v in (event.get("headers") or {}).items()}
    value = headers.get("content-type")
    if not isinstance(value, str) or not value.strip():
        return problems.UnsupportedMediaTypeError(
            "send the body with Content-Type: application/json"
        )
    media_type, *params = (part.strip() for part in value.split(";"))
    if media_type.lower() != JSON:
        return problems.UnsupportedMediaTypeError("send the body as application/json")
    for param in params:
        name, _, param_value = param.partition("=")
        if name.strip().lower() == "charset" and param_value.strip().strip('"').lower() not in (
            "utf-8",
            "utf8",
        ):
            return problems.UnsupportedMediaTypeError("send the body in UTF-8 (charset=utf-8)")
    return None


class _DuplicateMemberError(ValueError):
    """A JSON object names a member twice (RFC 8259 section 4: names SHOULD be unique; which
    value wins differs between parsers, so the request is ambiguous)."""


def _unique_members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for name, value in pairs:
        if name in result:
            shown = name if len(name) <= 40 and name.isprintable() else "a member"
            raise _DuplicateMemberError(f"the body names {shown!r} twice in one object")
        result[name] = value
    return result


def _nesting(value: Any) -> int:
    """How deep arrays and objects nest in ``value`` (iterative: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in children)
    return deepest


def lower_media_type(event: dict[str, Any]) -> dict[str, Any]:
    """Media types are case-insensitive (RFC 9110 section 8.3.1), but Powertools compares the
    ``content-type`` header with ``application/json`` as is: hand it the lower-case value."""
    headers = event.get("headers")
    if not isinstance(headers, dict):
        return event
    lowered = {
        k: v.lower() if str(k).lower() == "content-type" and isinstance(v, str) else v
        for k, v in headers.items()
    }
    return {**event, "headers": lowered}


def proxy_problem(error: problems.ServiceError) -> dict[str, Any]:
    """The payload v2 result of a refusal: problem+json with the error's status and detail."""
    body: dict[str, Any] = {"type": problems.type_for(error.title), "title": error.title}
    body.update({"status": error.status, "detail": error.detail})
    return {
        "statusCode": error.status,
        "headers": {"Content-Type": problems.PROBLEM_JSON},
        "body": json.dumps(body, ensure_ascii=False),
        "isBase64Encoded": False,
    }
