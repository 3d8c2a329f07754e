"""What a destination's answer may put on a post: bounded, checked values only (decision
"Network answers are bounded before they are stored").

A destination is chosen by the user (a Mastodon ``instance_url``, a Bluesky ``service_url``, a
webhook URL), so whatever it answers is untrusted input. Every value of a
:class:`~scheduled_posts.platforms.base.DeliveryResult` that reaches the post item, its attempt
rows, events and the API is bounded here first:

- ``remote_id``: at most :data:`MAX_REMOTE_ID_CHARS` visible ASCII characters (``!`` .. ``~``),
  else dropped. Mastodon ids are decimal strings of at most 20 digits
  (https://docs.joinmastodon.org/api/guidelines/#id); the longest Bluesky id is an ``at://``
  URI of a ``did:web`` on a 253-character DNS name, 299 characters; 512 leaves room for both.
- ``remote_url``: at most :data:`MAX_REMOTE_URL_CHARS` visible ASCII characters, ``https`` with
  a host, or an origin of ``OUTBOUND_ALLOWED_ORIGINS`` (the local stand-ins' ``http``), else
  dropped: never ``javascript:``, ``data:`` or another scheme the API would hand to a browser.
  2,048 is the de-facto longest URL that every browser, search engine and sitemap accepts
  (the Sitemaps protocol's limit: https://www.sitemaps.org/protocol.html).
- ``receipt`` (decision "Receipts"): ``cid`` and ``rev`` at most :data:`MAX_RECEIPT_TOKEN_CHARS`
  visible ASCII characters (a CIDv1 of a SHA-256 in base32 is 59 characters, a TID ``rev`` 13:
  https://atproto.com/specs/record-key#record-key-type-tid), ``created_at`` an RFC 3339 instant
  with an offset, stored as UTC milliseconds, ``http_status`` 100..599, ``body_sha256`` 64
  lowercase hex digits; anything else is dropped, and an empty receipt is none.
- ``error``: at most :data:`MAX_ERROR_CHARS` characters (the network's own message is already
  cut to 300 by ``platforms/network_adapter.py``; this bounds every error, whatever its source).

A dropped value never changes the outcome: the network did publish the post, so it is
``published`` without that id or link. With these bounds a post's 10 channels hold at most
about 40 KB of answers, far below DynamoDB's 400 KB item limit
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TypeVar
from urllib.parse import urlsplit

from scheduled_posts.clock import format_instant
from scheduled_posts.models.receipt import Receipt
from scheduled_posts.platforms.base import DeliveryResult
from scheduled_posts.platforms.url_policy import origin_allowed

MAX_REMOTE_ID_CHARS = 512
MAX_REMOTE_URL_CHARS = 2048
MAX_ERROR_CHARS = 1000
MAX_RECEIPT_TOKEN_CHARS = 128

_VISIBLE_ASCII = re.compile(r"[!-~]+")
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")
ResultT = TypeVar("ResultT", bound=DeliveryResult)


def safe_remote_id(value: object) -> str | None:
    """``value`` as a remote id (a string, or an integer as JSON numbers are), or ``None``
    when it is empty, longer than :data:`MAX_REMOTE_ID_CHARS` or holds anything but visible
    ASCII."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    text = str(value)
    if len(text) > MAX_REMOTE_ID_CHARS or not _VISIBLE_ASCII.fullmatch(text):
        return None
    return text


def safe_remote_url(value: object, *, allowed_origins: Sequence[str]) -> str | None:
    """``value`` when it is a URL the API may show as a link, else ``None``: at most
    :data:`MAX_REMOTE_URL_CHARS` visible ASCII characters, ``https://<host>...``, or
    ``http(s)`` on an origin of ``allowed_origins`` (``Settings.allowed_origins``)."""
    if not isinstance(value, str) or len(value) > MAX_REMOTE_URL_CHARS:
        return None
    if not _VISIBLE_ASCII.fullmatch(value):
        return None
    try:
        parts = urlsplit(value)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not host or parts.scheme not in ("https", "http"):
        return None
    if parts.scheme == "https":
        return value
    return value if origin_allowed("http", host, port or 80, allowed_origins) else None


def bounded_error(error: str | None) -> str | None:
    """``error`` cut to :data:`MAX_ERROR_CHARS` characters (an ellipsis marks the cut)."""
    if error is None or len(error) <= MAX_ERROR_CHARS:
        return error
    return error[: MAX_ERROR_CHARS - 1] + "\u2026"


def bounded_result(result: ResultT, *, allowed_origins: Sequence[str]) -> ResultT:
    """``result`` with its ``remote_id``, ``remote_url``, ``receipt`` and ``error`` checked and
    bounded (see the module docstring); the outcome, status and reason are kept."""
    return result.model_copy(
        update={
            "remote_id": safe_remote_id(result.remote_id),
            "remote_url": safe_remote_url(result.remote_url, allowed_origins=allowed_origins),
            "error": bounded_error(result.error),
            "receipt": bounded_receipt(result.receipt),
        }
    )


def _token(value: object) -> str | None:
    if not isinstance(value, str) or len(value) > MAX_RECEIPT_TOKEN_CHARS:
        return None
    return value if _VISIBLE_ASCII.fullmatch(value) else None


def _instant(value: object) -> str | None:
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        instant = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if instant.tzinfo is None:
        return None
    return format_instant(instant.astimezone(UTC))


def receipt_from(
    *,
    cid: object = None,
    rev: object = None,
    created_at: object = None,
    http_status: object = None,
    body_sha256: object = None,
) -> Receipt | None:
    """A receipt of raw answer values (any JSON value), each checked as the module docstring
    says; ``None`` when nothing is left."""
    status = (
        http_status if isinstance(http_status, int) and not isinstance(http_status, bool) else 0
    )
    sha = body_sha256 if isinstance(body_sha256, str) else ""
    kept = Receipt(
        cid=_token(cid),
        rev=_token(rev),
        created_at=_instant(created_at),
        http_status=status if 100 <= status <= 599 else None,
        body_sha256=sha if _SHA256_HEX.fullmatch(sha) else None,
    )
    return None if kept.empty else kept


def bounded_receipt(receipt: Receipt | None) -> Receipt | None:
    """``receipt`` with each field checked again (:func:`receipt_from`)."""
    return None if receipt is None else receipt_from(**receipt.model_dump())
