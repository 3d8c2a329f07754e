"""S3 browser uploads (pre-signed POST) held to their policy on the embedded AWS.

moto accepts a POST upload without reading its policy and ignores its ``tagging`` field, so
locally a bigger, differently typed or late upload would land, untagged. This WSGI middleware,
in front of moto, does what S3 does (S3 API Reference, "POST Object"; S3 User Guide, "Creating
a POST policy"): it refuses an expired policy, a form field no condition covers, and a broken
condition (exact match, ``eq``, ``starts-with``, ``content-length-range`` on the file's size),
then, once moto stored the object, applies the ``tagging`` field. It does not check the
signature (moto never does). Every other request passes through untouched.
"""

from __future__ import annotations

import base64
import io
import json
import logging
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any
from xml.sax.saxutils import escape

from werkzeug.formparser import parse_form_data

log = logging.getLogger("local.aws")
StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]
#: Form fields no condition needs to cover (S3 User Guide, "Creating a POST policy").
_UNCOVERED = {"policy", "x-amz-signature", "file", "awsaccesskeyid", "signature"}
#: A signature-shaped header so moto's dispatcher routes the internal tagging call to S3.
_S3_AUTH = (
    "AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/s3/aws4_request, "
    "SignedHeaders=host, Signature=0"
)


class PostPolicyApp:
    """WSGI middleware: a ``multipart/form-data`` POST to ``/<bucket>`` is checked against its
    policy (refused with S3's 403 ``AccessDenied`` or 400 ``EntityTooLarge``/``EntityTooSmall``
    answers) and, once stored, tagged as its ``tagging`` field says. ``now`` gives the current
    instant (the policy's ``expiration`` is compared with it)."""

    def __init__(self, app: WsgiApp, *, now: Callable[[], datetime] | None = None) -> None:
        self.app = app
        self.now = now or (lambda: datetime.now(UTC))

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        bucket = _upload_bucket(environ)
        if bucket is None:
            return self.app(environ, start_response)
        length = int(environ.get("CONTENT_LENGTH") or 0)
        raw = environ["wsgi.input"].read(length) if length else b""
        fields, size = _form(environ, raw)
        refusal = policy_refusal(fields, bucket=bucket, size=size, now=self.now())
        if refusal is not None:
            status, code, message = refusal
            start_response(status, [("Content-Type", "application/xml")])
            return [_error_xml(code, message)]
        answer: dict[str, Any] = {}

        def capture(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            answer["status"], answer["headers"] = status, headers
            return start_response(status, headers, exc_info)

        body = b"".join(
            self.app(
                {**environ, "wsgi.input": io.BytesIO(raw), "CONTENT_LENGTH": str(len(raw))}, capture
            )
        )
        if str(answer.get("status", "")).startswith("2") and fields.get("tagging"):
            self._tag(environ, bucket, fields.get("key", ""), fields["tagging"])
        return [body]

    def _tag(self, environ: dict[str, Any], bucket: str, key: str, tagging: str) -> None:
        """``PUT /<bucket>/<key>?tagging`` into moto with the form's tag set."""
        payload = tagging.encode()
        request = {
            **environ,
            "REQUEST_METHOD": "PUT",
            "PATH_INFO": f"/{bucket}/{key}",
            "QUERY_STRING": "tagging",
            # werkzeug's server also passes the raw request line, which moto prefers.
            "REQUEST_URI": f"/{bucket}/{key}?tagging",
            "RAW_URI": f"/{bucket}/{key}?tagging",
            "CONTENT_TYPE": "application/xml",
            "CONTENT_LENGTH": str(len(payload)),
            "HTTP_AUTHORIZATION": _S3_AUTH,
            "wsgi.input": io.BytesIO(payload),
        }
        answer: list[str] = []
        for _ in self.app(request, lambda status, *_: answer.append(status)):
            pass
        if not answer or not answer[0].startswith("2"):
            log.warning("tagging the upload %s/%s failed: %s", bucket, key, answer)


def _upload_bucket(environ: dict[str, Any]) -> str | None:
    """The bucket of a path-style browser upload (``POST /<bucket>``), else None."""
    if environ.get("REQUEST_METHOD") != "POST" or environ.get("QUERY_STRING"):
        return None
    if not str(environ.get("CONTENT_TYPE", "")).startswith("multipart/form-data"):
        return None
    path = str(environ.get("PATH_INFO", "")).strip("/")
    return path if path and "/" not in path else None


def _form(environ: dict[str, Any], raw: bytes) -> tuple[dict[str, str], int]:
    """The form's fields (names lower-cased, as S3 compares them) and the file's size."""
    copy = {**environ, "wsgi.input": io.BytesIO(raw), "CONTENT_LENGTH": str(len(raw))}
    _, form, files = parse_form_data(copy)
    fields = {name.lower(): value for name, value in form.items()}
    upload = files.get("file")
    size = len(upload.read()) if upload is not None else 0
    if upload is not None:
        fields["file"] = upload.filename or ""
    return fields, size


def policy_refusal(
    fields: dict[str, str], *, bucket: str, size: int, now: datetime
) -> tuple[str, str, str] | None:
    """``(HTTP status, S3 error code, message)`` when S3 would refuse this upload, else None.
    ``fields``: the form's fields, names lower-cased; ``size``: the file's bytes."""
    try:
        policy = json.loads(base64.b64decode(fields.get("policy", "")))
        expires = datetime.fromisoformat(str(policy["expiration"]).replace("Z", "+00:00"))
        conditions = list(policy.get("conditions", []))
    except (ValueError, KeyError, TypeError):
        return "403 Forbidden", "AccessDenied", "Invalid Policy: Invalid JSON."
    if now >= expires:
        return _forbidden("Policy expired.")
    values = {**fields, "bucket": bucket}
    covered: set[str] = {"bucket"}
    for condition in conditions:
        refusal = _condition_refusal(condition, values, size, covered)
        if refusal is not None:
            return refusal
    extra = sorted(
        n for n in fields if n not in covered | _UNCOVERED and not n.startswith("x-ignore-")
    )
    if extra:
        return _forbidden(f"Extra input fields: {extra[0]}")
    return None


def _condition_refusal(
    condition: object, values: dict[str, str], size: int, covered: set[str]
) -> tuple[str, str, str] | None:
    """The refusal of one policy condition, else None; adds the fields it covers."""
    if isinstance(condition, dict):
        for name, expected in condition.items():
            covered.add(name.lower())
            if values.get(name.lower()) != expected:
                return _failed(condition)
        return None
    if not (isinstance(condition, list) and len(condition) == 3):
        return _forbidden("Invalid Policy: a condition is neither an object nor a triple")
    op, name, expected = condition
    if op == "content-length-range":
        if size > int(expected):
            return ("400 Bad Request", "EntityTooLarge",
                    "Your proposed upload exceeds the maximum allowed size")  # fmt: skip
        if size < int(name):
            return ("400 Bad Request", "EntityTooSmall",
                    "Your proposed upload is smaller than the minimum allowed size")  # fmt: skip
        return None
    field = str(name).removeprefix("$").lower()
    covered.add(field)
    value = values.get(field, "")
    if op == "eq" and value != expected:
        return _failed(condition)
    if op == "starts-with" and not value.startswith(str(expected)):
        return _failed(condition)
    return None


def _forbidden(reason: str) -> tuple[str, str, str]:
    return "403 Forbidden", "AccessDenied", f"Invalid according to Policy: {reason}"


def _failed(condition: object) -> tuple[str, str, str]:
    return _forbidden(f"Policy Condition failed: {json.dumps(condition)}")


def _error_xml(code: str, message: str) -> bytes:
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
        f"<Message>{escape(message)}</Message></Error>"
    ).encode()
