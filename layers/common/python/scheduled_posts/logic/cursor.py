"""Opaque, tamper-proof pagination cursors bound to the caller and to the query.

A cursor is ``<payload>.<mac>``, both base64url without padding: ``payload`` is compact JSON
``{"v": 1, "k": <last gsi1sk>, "q": <query fingerprint>}`` and ``mac`` is
HMAC-SHA256 (RFC 2104) over ``"<owner>\\n<payload>"`` with the cursor secret. A cursor that was
forged, altered, issued to another user or for other filters fails verification
(:class:`InvalidCursorError`, a 400), so it can never reveal another user's data or push a
Query outside its key range.

The secret is ``CURSOR_SECRET``, or, when ``CURSOR_SECRET_ARN`` is set, that Secrets Manager
secret read through Powertools parameters (cached in memory for 5 minutes).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Callable
from functools import lru_cache

from scheduled_posts.errors import InvalidCursorError
from scheduled_posts.observability import logger
from scheduled_posts.settings import Settings

#: Longest cursor accepted, in characters (a real one is about 200).
MAX_CURSOR_LENGTH = 1024
_VERSION = 1
_SORT_KEY = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#[A-Za-z0-9_-]{1,64}$")
_SECRET_MAX_AGE_SECONDS = 300
#: The query of a channel-list cursor, whose key is a channel id (not a ``gsi1sk``).
CHANNELS_QUERY = "channels"
_CHANNEL_KEY = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
#: The query of an event-feed cursor, whose key is a feed position (decimal digits,
#: ``feed_order.py``); feed cursors issued before feed positions carry :data:`OLD_FEED_QUERY`.
FEED_QUERY = "feed"
OLD_FEED_QUERY = "events"
_FEED_KEY = re.compile(r"^\d{1,20}$")
#: The query of a media-list cursor, whose key is a media id (``GET /v1/media``).
MEDIA_QUERY = "media"
_KEYS = {CHANNELS_QUERY: _CHANNEL_KEY, FEED_QUERY: _FEED_KEY, MEDIA_QUERY: _CHANNEL_KEY}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class CursorCodec:
    """Signs and verifies cursors with one secret (``bytes``, any length)."""

    def __init__(self, secret: bytes) -> None:
        if not secret:
            raise ValueError("the cursor secret must not be empty")
        self._secret = secret

    def _mac(self, owner: str, payload: str) -> str:
        message = f"{owner}\n{payload}".encode()
        return _b64(hmac.new(self._secret, message, hashlib.sha256).digest())

    def encode(self, *, owner: str, last_key: str, query: str) -> str:
        """A cursor that resumes after ``last_key`` (a ``gsi1sk``) for ``owner`` and ``query``."""
        body = json.dumps({"v": _VERSION, "k": last_key, "q": query}, separators=(",", ":"))
        payload = _b64(body.encode())
        return f"{payload}.{self._mac(owner, payload)}"

    def decode(self, cursor: str, *, owner: str, query: str) -> str:
        """The ``gsi1sk`` (a channel id for :data:`CHANNELS_QUERY`, a feed position for
        :data:`FEED_QUERY`) to resume after.

        Raises
        ------
        InvalidCursorError
            When the cursor is malformed, its MAC does not verify for ``owner``, or it was
            issued for another query.
        """
        if not isinstance(cursor, str) or len(cursor) > MAX_CURSOR_LENGTH:
            raise InvalidCursorError("the cursor is not valid")
        payload, dot, mac = cursor.partition(".")
        if not dot or not payload or not mac:
            raise InvalidCursorError("the cursor is not valid")
        if not hmac.compare_digest(mac.encode(), self._mac(owner, payload).encode()):
            raise InvalidCursorError("the cursor is not valid for this caller")
        try:
            data = json.loads(_unb64(payload))
        except (ValueError, binascii.Error) as exc:
            raise InvalidCursorError("the cursor is not valid") from exc
        if not isinstance(data, dict) or data.get("v") != _VERSION:
            raise InvalidCursorError("the cursor is not valid")
        if query == FEED_QUERY and data.get("q") == OLD_FEED_QUERY:
            raise InvalidCursorError(
                "the cursor comes from the event feed's earlier order: read the feed again "
                "without after (docs/events.md)"
            )
        if data.get("q") != query:
            raise InvalidCursorError("the cursor was issued for other filters")
        last_key = data.get("k")
        pattern = _KEYS.get(query, _SORT_KEY)
        if not isinstance(last_key, str) or not pattern.match(last_key):
            raise InvalidCursorError("the cursor is not valid")
        return last_key


def query_fingerprint(
    status: str | None, from_: str | None, to: str | None, channel_id: str | None = None
) -> str:
    """What a cursor is bound to besides the caller: the list filters, normalised."""
    base = f"{status or ''}|{from_ or ''}|{to or ''}"
    return f"{base}|{channel_id}" if channel_id else base


@lru_cache(maxsize=1)
def _process_secret() -> bytes:
    logger.warning("no CURSOR_SECRET or CURSOR_SECRET_ARN: cursors are valid in this process only")
    return secrets.token_bytes(32)


def _secret_from_arn(arn: str) -> bytes:
    from aws_lambda_powertools.utilities import parameters

    value = parameters.get_secret(arn, max_age=_SECRET_MAX_AGE_SECONDS)
    return value.encode() if isinstance(value, str) else bytes(value)


def codec_for(
    settings: Settings, *, fetch_secret: Callable[[str], bytes] = _secret_from_arn
) -> CursorCodec:
    """The codec for ``settings``: ``CURSOR_SECRET_ARN`` (Secrets Manager, cached 5 min by
    Powertools) when set, else ``CURSOR_SECRET``, else a random per-process secret (logged)."""
    if settings.CURSOR_SECRET_ARN:
        return CursorCodec(fetch_secret(settings.CURSOR_SECRET_ARN))
    if settings.CURSOR_SECRET:
        return CursorCodec(settings.CURSOR_SECRET.encode())
    return CursorCodec(_process_secret())
