"""The one place that turns errors into HTTP answers: RFC 9457 problem details.

Every error the service itself returns is ``application/problem+json``::

    {"type": "/problems/validation-failed", "title": "Validation failed", "status": 422,
     "detail": "the request is not valid",
     "errors": [{"loc": ["body", "publish_at"], "msg": "...", "type": "..."}]}

``type`` is a relative URI reference naming the kind of problem (RFC 9457 section 3.1.1);
``errors`` appears on 422 only. Details never carry secrets, stack traces or the offending
input (a hostile value is not echoed back).

Errors raised before the request reaches the Lambda come from API Gateway itself and are not
problem+json: its JWT authorizer's ``401 {"message":"Unauthorized"}`` and its throttling
``429 {"message":"Too Many Requests"}``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.exceptions import NotFoundError as RouteNotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyPersistenceLayerError,
    IdempotencyValidationError,
)
from botocore.exceptions import ClientError

from scheduled_posts.errors import ServiceError, ValidationFailedError
from scheduled_posts.observability import logger

PROBLEM_JSON = "application/problem+json"
_MAX_MSG = 300
#: What pydantic puts before the message of a ``ValueError`` raised in a validator.
_PYDANTIC_PREFIXES = ("Value error, ",)


class UnauthenticatedError(ServiceError, status=401, title="Unauthorized"):
    """The event carries no caller (no ``sub`` claim): the authorizer was bypassed."""


class MalformedBodyError(ServiceError, status=400, title="Malformed request body"):
    """The body is not JSON (RFC 8259) or not UTF-8."""


class PayloadTooLargeError(ServiceError, status=413, title="Payload too large"):
    """The body is over the API's 64 KiB limit (checked before parsing)."""


class UnsupportedMediaTypeError(ServiceError, status=415, title="Unsupported media type"):
    """The body is not ``application/json``."""


def type_for(title: str) -> str:
    """The problem ``type`` of a title: ``/problems/<title-in-kebab-case>``."""
    return "/problems/" + "-".join(title.lower().split())


def problem(
    status: int,
    title: str,
    detail: str,
    *,
    errors: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    """A problem+json :class:`Response` (RFC 9457 members ``type, title, status, detail``)."""
    body: dict[str, Any] = {
        "type": type_for(title),
        "title": title,
        "status": status,
        "detail": detail,
    }
    if errors is not None:
        body["errors"] = errors
    return Response(
        status_code=status,
        content_type=PROBLEM_JSON,
        body=json.dumps(body, ensure_ascii=False),
        headers=headers,
    )


def _clean_loc(loc: Any) -> list[str | int]:
    parts = loc if isinstance(loc, list | tuple) else [loc]
    return [p if isinstance(p, int) else str(p)[:100] for p in parts]


def clean_errors(errors: Any) -> list[dict[str, Any]]:
    """``[{"loc", "msg", "type"}]`` from pydantic-style errors, without inputs or contexts,
    and without pydantic's ``Value error, `` before our validators' own messages."""
    cleaned = []
    for error in errors or []:
        msg = str(error.get("msg", "invalid"))
        for prefix in _PYDANTIC_PREFIXES:
            msg = msg.removeprefix(prefix)
        cleaned.append(
            {
                "loc": _clean_loc(error.get("loc", [])),
                "msg": msg[:_MAX_MSG],
                "type": str(error.get("type", "value_error")),
            }
        )
    return cleaned


def from_service_error(exc: ServiceError) -> Response:
    """The problem for a typed domain error (its ``status``, ``title`` and ``detail``)."""
    if isinstance(exc, ValidationFailedError):
        return problem(exc.status, exc.title, exc.detail, errors=clean_errors(exc.errors))
    return problem(exc.status, exc.title, exc.detail)


def from_request_validation(exc: RequestValidationError) -> Response:
    """400 for a body that is not JSON; otherwise 422 with per-field ``errors``."""
    errors = list(exc.errors())
    if any(e.get("type") == "json_invalid" for e in errors):
        return problem(400, MalformedBodyError.title, "the body is not valid JSON")
    return problem(
        422, ValidationFailedError.title, "the request is not valid", errors=clean_errors(errors)
    )


#: DynamoDB/SQS error codes that mean "slow down", left after botocore's own retries
#: (DynamoDB API reference, "Error handling"; SQS API reference, "Common errors").
THROTTLING_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "TransactionConflictException",
        "TransactionInProgressException",
    }
)


def _unavailable(detail: str) -> Response:
    """503 with ``Retry-After: 1`` (RFC 9110 section 15.6.4): a transient storage failure."""
    logger.warning("storage unavailable", extra={"detail": detail})
    return problem(
        HTTPStatus.SERVICE_UNAVAILABLE.value,
        "Service unavailable",
        f"{detail}; retry shortly (a create retried with the same Idempotency-Key never makes "
        "a second post)",
        headers={"Retry-After": "1"},
    )


def _service(exc: ServiceError) -> Response:
    if exc.status >= 500:
        logger.exception("service error")
    return from_service_error(exc)


def _content_type(exc: RequestUnsupportedContentType) -> Response:
    return problem(415, UnsupportedMediaTypeError.title, "send application/json")


def _in_flight(exc: IdempotencyAlreadyInProgressError) -> Response:
    return problem(
        409,
        "Request in progress",
        "a request with this Idempotency-Key is still being processed; retry later",
    )


def _key_reused(exc: IdempotencyValidationError) -> Response:
    return problem(
        422,
        ValidationFailedError.title,
        "this Idempotency-Key was used with a different request body",
        errors=[
            {
                "loc": ["header", "Idempotency-Key"],
                "msg": "already used with a different body",
                "type": "idempotency_key_reused",
            }
        ],
    )


def _no_route(exc: RouteNotFoundError) -> Response:
    return problem(404, "Not found", "no such route")


def _aws(exc: ClientError) -> Response:
    if exc.response.get("Error", {}).get("Code") in THROTTLING_CODES:
        return _unavailable("AWS throttled the request after the SDK's retries")
    return _unexpected(exc)


def _idempotency_store(exc: IdempotencyPersistenceLayerError) -> Response:
    return _unavailable("the idempotency store could not be reached")


def _unexpected(exc: Exception) -> Response:
    logger.exception("unhandled error")
    return problem(
        HTTPStatus.INTERNAL_SERVER_ERROR.value,
        "Internal error",
        "the request could not be completed; try again later",
    )


#: Each exception class and its answer. Powertools picks the handler of the nearest class in
#: the raised exception's MRO, so ``Exception`` catches only what nothing else names.
_HANDLERS: tuple[tuple[type[Exception], Callable[[Any], Response]], ...] = (
    (ServiceError, _service),
    (RequestUnsupportedContentType, _content_type),
    (RequestValidationError, from_request_validation),
    (IdempotencyAlreadyInProgressError, _in_flight),
    (IdempotencyValidationError, _key_reused),
    (RouteNotFoundError, _no_route),
    (ClientError, _aws),
    (IdempotencyPersistenceLayerError, _idempotency_store),
    (Exception, _unexpected),
)


def register(app: APIGatewayHttpResolver) -> None:
    """Install every exception handler on ``app`` (the only error mapping of the API)."""
    for kind, handler in _HANDLERS:
        app.exception_handler(kind)(handler)
