"""Credentials out of quoted network messages.

A network may echo what it was sent in its error (``{"error": "invalid token: Bearer
<token>"}``); the message is then quoted in an attempt's error, a delivery's ``last_error``,
a channel's ``status_reason``, a 422 problem, events, the export and notifications. So every
quoted network message (:func:`~scheduled_posts.platforms.network_adapter.error_message`, the
one place they are quoted) first goes through :func:`redact`: the secrets the request carried, then
anything shaped like a credential, become :data:`REDACTED` (decision: a network's echo of a
credential is redacted).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

REDACTED = "[redacted]"
#: Shorter values are not redacted by value (they would blank ordinary words); their shapes are.
MIN_SECRET_LENGTH = 6
_SHAPES = (
    # an Authorization credential (RFC 6750 bearer token, or any scheme's token68)
    re.compile(r"(?i)(\b(?:bearer|basic|dpop)\s+)[A-Za-z0-9._~+/=-]+"),
    # a JWT (header.payload.signature, base64url: Bluesky's access and refresh tokens)
    re.compile(r"()\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"),
    # a Bluesky app password (xxxx-xxxx-xxxx-xxxx)
    re.compile(r"()\b[A-Za-z0-9]{4}-[A-Za-z0-9]{4}-[A-Za-z0-9]{4}-[A-Za-z0-9]{4}\b"),
)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with each of ``secrets`` (values at least :data:`MIN_SECRET_LENGTH` long, the
    longest first) and every bearer token, JWT or app-password shape replaced by
    :data:`REDACTED`."""
    for secret in sorted({s for s in secrets if len(s) >= MIN_SECRET_LENGTH}, key=len)[::-1]:
        text = text.replace(secret, REDACTED)
    for shape in _SHAPES:
        text = shape.sub(lambda m: m.group(1) + REDACTED, text)
    return text


def authorization_secrets(headers: Mapping[str, str] | None) -> tuple[str, ...]:
    """The credential of an ``Authorization`` header in ``headers`` (the token after its
    scheme, RFC 9110 section 11.4), for :func:`redact`."""
    value = next((v for k, v in (headers or {}).items() if k.lower() == "authorization"), "")
    token = value.split(" ", 1)[-1].strip()
    return (token,) if token else ()
