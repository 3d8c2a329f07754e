"""The ``webhook`` platform: a signed JSON POST to the channel's URL (issue 3's contract).

Request::

    POST <channel url>
    Content-Type: application/json
    Idempotency-Key: <schedule_id>:<channel_id>        (the same on every retry)
    X-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256("<t>.<raw body>")>[,v1=<previous>]
    User-Agent: scheduled-posts-webhook/1

    {"schedule_id", "channel_id", "content", "media_ids", "publish_at", "attempt"}

Safety at send time: the URL is checked again with
:func:`~scheduled_posts.platforms.url_policy.check_destination` (a fresh DNS answer), and the
transport connects to the checked address itself (no second lookup, so a DNS answer that
changes between check and connect cannot reach a private address), sending the original
``Host`` header and verifying TLS against the host name (SNI + certificate hostname). No
redirect is followed, the whole exchange is bounded by ``DELIVERY_TIMEOUT_SECONDS`` and at
most :data:`MAX_RESPONSE_BYTES` of the response are read.

Outcomes: 2xx -> ``published`` (``remote_id`` = ``"id"`` of a JSON object body, if any);
429 -> :class:`~scheduled_posts.errors.RetryableDeliveryError` with ``rate_limited=True`` and
``Retry-After`` in seconds; 5xx, timeouts, connection errors and a host that does not resolve
-> ``RetryableDeliveryError``; a destination the URL policy refuses, 3xx and every other status
-> ``failed`` (permanent).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Protocol

import urllib3
from urllib3.exceptions import (
    ConnectTimeoutError,
    HTTPError,
    NewConnectionError,
    ProtocolError,
    SSLError,
)
from urllib3.exceptions import TimeoutError as Urllib3TimeoutError

from scheduled_posts.clock import format_instant
from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.base import DeliveryRequest, DeliveryResult
from scheduled_posts.platforms.signing import SIGNATURE_HEADER, sign
from scheduled_posts.platforms.url_policy import (
    Destination,
    Resolver,
    UnresolvableDestinationError,
    UnsafeDestinationError,
    check_destination,
    system_resolver,
)
from scheduled_posts.settings import Settings

#: Most response bytes read (64 KiB); the rest is discarded unread.
MAX_RESPONSE_BYTES = 64 * 1024
#: ``User-Agent`` of every delivery.
USER_AGENT = "scheduled-posts-webhook/1"
#: Longest ``remote_id`` kept, in characters.
MAX_REMOTE_ID_CHARS = 256
#: Longest excerpt of a response body kept in ``DeliveryResult.error``, in characters.
MAX_ERROR_EXCERPT_CHARS = 200


@dataclass(frozen=True)
class TransportResponse:
    """What came back: ``status``; ``headers`` (any case: look up case-insensitively with
    :func:`header`); ``body``, at most :data:`MAX_RESPONSE_BYTES` bytes."""

    status: int
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""


class TransportError(Exception):
    """No HTTP response: a timeout (``timeout=True``) or a connection error.

    ``connect_failed=True`` means no byte of the request left this host (the TCP or TLS
    connection failed), so the next checked address may be tried.
    """

    def __init__(self, message: str, *, timeout: bool = False, connect_failed: bool = False):
        super().__init__(message)
        self.timeout = timeout
        self.connect_failed = connect_failed


class Transport(Protocol):
    """Sends one request. Implementations never follow redirects and never resolve names."""

    def send(
        self,
        destination: Destination,
        address: str,
        body: bytes,
        headers: Mapping[str, str],
        timeout: float,
    ) -> TransportResponse:
        """POST ``body`` to ``destination.target`` at ``address``:``destination.port``.

        ``headers`` include ``Host``; TLS (``https``) uses ``destination.host`` for SNI and
        certificate verification. ``timeout`` (float seconds) bounds the whole exchange.

        Raises
        ------
        TransportError
            On a timeout or a connection error.
        """
        ...


def header(headers: Mapping[str, str], name: str) -> str | None:
    """Case-insensitive header lookup (field names are case-insensitive: RFC 9110 section 5.1)."""
    wanted = name.lower()
    for key, value in headers.items():
        if key.lower() == wanted:
            return value
    return None


class Urllib3Transport:
    """The production transport, on urllib3 (already in the runtime through botocore).

    Connects to the checked IP address, sends the real ``Host`` header, verifies the server
    certificate against the host name with SNI, never retries, never follows redirects, does
    not decode content encodings (no decompression bomb), and reads at most
    ``max_response_bytes``. ``method`` is ``POST`` for webhooks; the network adapters
    (``platforms/http.py``) also send ``GET``. ``ca_certs`` (a PEM path) replaces the system
    trust store (tests).
    """

    def __init__(
        self, *, max_response_bytes: int = MAX_RESPONSE_BYTES, ca_certs: str | None = None
    ) -> None:
        self.max_response_bytes = max_response_bytes
        self.ca_certs = ca_certs

    def send(
        self,
        destination: Destination,
        address: str,
        body: bytes,
        headers: Mapping[str, str],
        timeout: float,
        *,
        method: str = "POST",
    ) -> TransportResponse:
        deadline = time.monotonic() + timeout
        pool: urllib3.HTTPConnectionPool
        if destination.scheme == "https":
            pool = urllib3.HTTPSConnectionPool(
                host=address,
                port=destination.port,
                server_hostname=destination.host,
                assert_hostname=destination.host,
                cert_reqs="CERT_REQUIRED",
                ca_certs=self.ca_certs,
                maxsize=1,
                retries=False,
            )
        else:
            pool = urllib3.HTTPConnectionPool(
                host=address, port=destination.port, maxsize=1, retries=False
            )
        try:
            response = pool.urlopen(
                method,
                destination.target,
                body=body,
                headers=dict(headers),
                retries=False,
                redirect=False,
                assert_same_host=False,
                preload_content=False,
                decode_content=False,
                timeout=urllib3.Timeout(total=timeout),
            )
            try:
                chunks: list[bytes] = []
                size = 0
                while size < self.max_response_bytes:
                    if time.monotonic() > deadline:
                        raise TransportError("response not read in time", timeout=True)
                    chunk = response.read(
                        min(16 * 1024, self.max_response_bytes - size), decode_content=False
                    )
                    if not chunk:
                        break
                    chunks.append(chunk)
                    size += len(chunk)
                return TransportResponse(
                    status=response.status,
                    headers=dict(response.headers.items()),
                    body=b"".join(chunks)[: self.max_response_bytes],
                )
            finally:
                response.close()
        except (NewConnectionError, SSLError) as exc:
            # Checked first: urllib3 2.x's NewConnectionError subclasses ConnectTimeoutError.
            raise TransportError(
                f"connection failed: {type(exc).__name__}", connect_failed=True
            ) from exc
        except ConnectTimeoutError as exc:
            raise TransportError("timed out connecting", timeout=True, connect_failed=True) from exc
        except (Urllib3TimeoutError, TimeoutError) as exc:
            raise TransportError(f"timed out: {type(exc).__name__}", timeout=True) from exc
        except (ProtocolError, HTTPError, OSError) as exc:
            raise TransportError(f"connection error: {type(exc).__name__}") from exc
        finally:
            pool.close()


def build_body(request: DeliveryRequest) -> bytes:
    """The JSON body, UTF-8, compact: ``schedule_id``, ``channel_id``, ``content``,
    ``media_ids`` (list), ``publish_at`` (``YYYY-MM-DDTHH:MM:SS.mmmZ``), ``attempt`` (int)."""
    payload = {
        "schedule_id": request.schedule_id,
        "channel_id": request.channel_id,
        "content": request.content,
        "media_ids": list(request.media_ids),
        "publish_at": format_instant(request.publish_at),
        "attempt": request.attempt,
    }
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def signing_secrets(channel: Channel, now: datetime) -> list[str]:
    """The secrets to sign with at ``now``, newest first: the channel's secret, plus the
    previous one while ``now < previous_secret_expires_at`` (the rotation overlap)."""
    secrets = [channel.signing_secret]
    previous, expires = channel.previous_signing_secret, channel.previous_secret_expires_at
    if previous and expires is not None and now < expires:
        secrets.append(previous)
    return secrets


def parse_retry_after(value: str | None, *, now: datetime) -> float | None:
    """``Retry-After`` in seconds from ``now`` (RFC 9110 section 10.2.3): delta-seconds
    (``"120"``) or an HTTP-date (``"Wed, 21 Oct 2026 07:28:00 GMT"``). A date in the past gives
    0; a missing or malformed value gives ``None``."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return float(int(text))
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)  # RFC 9110 HTTP-dates are GMT
    return max(0.0, (when - now).total_seconds())


def remote_id_of(body: bytes) -> str | None:
    """The ``"id"`` member of a JSON object body (a string or an integer), else ``None``."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    value = data.get("id")
    if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
        return None
    return str(value)[:MAX_REMOTE_ID_CHARS]


def _excerpt(body: bytes) -> str:
    text = body[: MAX_ERROR_EXCERPT_CHARS * 4].decode("utf-8", errors="replace")
    text = " ".join(text.split())[:MAX_ERROR_EXCERPT_CHARS]
    return f": {text}" if text else ""


class WebhookAdapter:
    """:class:`~scheduled_posts.platforms.base.PlatformAdapter` for ``webhook`` channels.

    Parameters
    ----------
    settings
        ``OUTBOUND_ALLOWED_ORIGINS`` (or ``WEBHOOK_ALLOWED_ORIGINS``) and
        ``DELIVERY_TIMEOUT_SECONDS`` are used.
    transport
        Sends the request (default :class:`Urllib3Transport`); tests pass a fake receiver.
    resolver
        Name resolution for the send-time check (default :func:`system_resolver`).
    """

    platform = "webhook"

    def __init__(
        self,
        settings: Settings,
        *,
        transport: Transport | None = None,
        resolver: Resolver | None = None,
        user_agent: str = USER_AGENT,
    ) -> None:
        self.settings = settings
        self.transport: Transport = transport if transport is not None else Urllib3Transport()
        self.resolver: Resolver = resolver if resolver is not None else system_resolver
        self.user_agent = user_agent

    def deliver(
        self, channel: Channel, request: DeliveryRequest, *, now: datetime
    ) -> DeliveryResult:
        """POST ``request`` to ``channel.url``, signed at ``now``.

        Returns
        -------
        DeliveryResult
            ``published`` on a 2xx; ``failed`` on a refused destination, a 3xx or a 4xx other
            than 429.

        Raises
        ------
        RetryableDeliveryError
            On 429 (``rate_limited=True``, ``retry_after_seconds`` from ``Retry-After``), 5xx,
            a timeout, a connection error, or a host that does not resolve now.
        """
        try:
            destination = check_destination(
                channel.url, allowed_origins=self.settings.allowed_origins, resolver=self.resolver
            )
        except UnresolvableDestinationError as exc:
            raise RetryableDeliveryError(str(exc)) from exc
        except UnsafeDestinationError as exc:
            return DeliveryResult(outcome="failed", error=f"destination refused: {exc}")

        body = build_body(request)
        headers = {
            "Host": destination.host_header,
            "Content-Type": "application/json",
            "Idempotency-Key": request.idempotency_key,
            SIGNATURE_HEADER: sign(
                signing_secrets(channel, now), math.floor(now.timestamp()), body
            ),
            "User-Agent": self.user_agent,
        }
        response = self._send(destination, body, headers)
        return self._outcome(response, now=now)

    def _send(
        self, destination: Destination, body: bytes, headers: Mapping[str, str]
    ) -> TransportResponse:
        timeout = self.settings.DELIVERY_TIMEOUT_SECONDS
        deadline = time.monotonic() + timeout
        last: TransportError | None = None
        for address in destination.addresses:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                return self.transport.send(destination, address, body, headers, remaining)
            except TransportError as exc:
                last = exc
                if not exc.connect_failed:
                    break
        reason = str(last) if last is not None else "timed out"
        raise RetryableDeliveryError(f"webhook {reason}") from last

    @staticmethod
    def _outcome(response: TransportResponse, *, now: datetime) -> DeliveryResult:
        status = response.status
        if 200 <= status < 300:
            return DeliveryResult(
                outcome="published", http_status=status, remote_id=remote_id_of(response.body)
            )
        if status == 429:
            raise RetryableDeliveryError(
                "webhook answered 429 Too Many Requests",
                http_status=429,
                rate_limited=True,
                retry_after_seconds=parse_retry_after(
                    header(response.headers, "Retry-After"), now=now
                ),
            )
        if 500 <= status < 600:
            raise RetryableDeliveryError(
                f"webhook answered HTTP {status}",
                http_status=status,
                retry_after_seconds=parse_retry_after(
                    header(response.headers, "Retry-After"), now=now
                ),
            )
        if 300 <= status < 400:
            return DeliveryResult(
                outcome="failed",
                http_status=status,
                error=f"HTTP {status}: redirects are not followed; use the final URL",
            )
        return DeliveryResult(
            outcome="failed", http_status=status, error=f"HTTP {status}{_excerpt(response.body)}"
        )
