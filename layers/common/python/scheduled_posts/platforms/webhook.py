"""The ``webhook`` platform: a signed JSON POST to the channel's URL (issue 3's contract).

Request::

    POST <channel url>
    Content-Type: application/json
    Idempotency-Key: <schedule_id>:<channel_id>        (the same on every retry)
    webhook-id, webhook-timestamp, webhook-signature, X-Signature  (platforms/signing.py)
    User-Agent: scheduled-posts-webhook/1

    {"schedule_id", "channel_id", "content", "media_ids", "publish_at", "attempt",
     "idempotency_key", "media", "parts"}   ("media" only with resolved media:
     platforms/webhook_media.py; "parts" only for a thread: its replies after "content")

Safety at send time: the URL is checked again with
:func:`~scheduled_posts.platforms.url_policy.check_destination` (a fresh DNS answer), and the
transport connects to the checked address itself (no second lookup, so a DNS answer that
changes between check and connect cannot reach a private address), sending the original
``Host`` header and verifying TLS against the host name (SNI + certificate hostname). No
redirect is followed, the whole exchange is bounded by ``DELIVERY_TIMEOUT_SECONDS`` and at
most :data:`MAX_RESPONSE_BYTES` of the response are read.

The body's ``idempotency_key`` and ``webhook-id`` equal the header's, under the signature.

Outcomes by status: :func:`outcome_for_status` (the table is in ``docs/dispatch.md``). Attempt
errors start with one word of a stable vocabulary (:class:`AttemptError`): ``connect_failed``,
``timeout``, ``tls_error``, ``dns_error``, ``connection_lost``, ``destination_refused`` or
``http_<status>``, never an HTTP library's exception name.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

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
from scheduled_posts.platforms.answers import receipt_from
from scheduled_posts.platforms.base import DeliveryRequest, DeliveryResult, MediaObjects
from scheduled_posts.platforms.retry_after import bounded_retry_after
from scheduled_posts.platforms.signing import signature_headers
from scheduled_posts.platforms.url_policy import (
    Destination,
    Resolver,
    UnresolvableDestinationError,
    UnsafeDestinationError,
    check_destination,
    system_resolver,
)
from scheduled_posts.platforms.webhook_media import MediaStoreMissingError, media_entries
from scheduled_posts.settings import Settings

#: Most response bytes read (64 KiB); the rest is discarded unread.
MAX_RESPONSE_BYTES = 64 * 1024
#: ``User-Agent`` of every delivery.
USER_AGENT = "scheduled-posts-webhook/1"
#: Longest ``remote_id`` kept, in characters.
MAX_REMOTE_ID_CHARS = 256
#: Longest excerpt of a response body kept in ``DeliveryResult.error``, in characters.
MAX_ERROR_EXCERPT_CHARS = 200


class AttemptError(StrEnum):
    """The first word of every attempt error the webhook adapter writes (issue 17): stable, so
    receivers' operators and dashboards can match on it. HTTP answers are ``http_<status>``."""

    CONNECT_FAILED = "connect_failed"  # TCP connect refused/unreachable: nothing was sent
    TIMEOUT = "timeout"  # DELIVERY_TIMEOUT_SECONDS passed (connect, headers or body)
    TLS_ERROR = "tls_error"  # handshake or certificate verification failed
    DNS_ERROR = "dns_error"  # the host did not resolve at send time
    CONNECTION_LOST = "connection_lost"  # the connection broke after the request was sent
    DESTINATION_REFUSED = "destination_refused"  # the URL policy refuses the URL now


def http_word(status: int) -> str:
    """The attempt-error word of an HTTP answer: ``http_<status>`` (docs/dispatch.md), used by
    the webhook and the network adapters alike."""
    return f"http_{status}"


class StatusOutcome(StrEnum):
    """What a final HTTP status means for a delivery (:func:`outcome_for_status`)."""

    PUBLISHED = "published"
    RETRY = "retry"
    RATE_LIMITED = "rate_limited"
    FAILED = "failed"


#: 4xx answers that say "try again" rather than "your request is wrong": 408 Request Timeout
#: (RFC 9110 section 15.5.9) and 425 Too Early (RFC 8470 section 5.2).
RETRYABLE_CLIENT_ERRORS = frozenset({408, 425})


def outcome_for_status(status: int) -> StatusOutcome:
    """The outcome of an HTTP ``status`` (the table of ``docs/dispatch.md``).

    2xx published; 429 rate limited; 408, 425 and every 5xx retried; everything else (1xx as a
    final answer, 3xx since redirects are not followed, other 4xx, codes outside 100-599)
    failed at once.
    """
    if 200 <= status < 300:
        return StatusOutcome.PUBLISHED
    if status == 429:
        return StatusOutcome.RATE_LIMITED
    if status in RETRYABLE_CLIENT_ERRORS or 500 <= status < 600:
        return StatusOutcome.RETRY
    return StatusOutcome.FAILED


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
    connection failed), so the next checked address may be tried. ``kind`` is the attempt
    error word (:class:`AttemptError`); by default derived from the flags.
    """

    def __init__(
        self,
        message: str,
        *,
        timeout: bool = False,
        connect_failed: bool = False,
        kind: AttemptError | None = None,
    ):
        super().__init__(message)
        self.timeout = timeout
        self.connect_failed = connect_failed
        if kind is None:
            if timeout:
                kind = AttemptError.TIMEOUT
            elif connect_failed:
                kind = AttemptError.CONNECT_FAILED
            else:
                kind = AttemptError.CONNECTION_LOST
        self.kind = kind


class Transport(Protocol):
    """Sends one request. Implementations never follow redirects and never resolve names."""

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
        """Send ``method`` (``POST`` for webhooks; the network adapters also ``GET``) with
        ``body`` to ``destination.target`` at ``address``:``destination.port``.

        ``headers`` include ``Host``; TLS (``https``) uses ``destination.host`` for SNI and
        certificate verification. ``timeout`` (float seconds) bounds the whole exchange.

        Raises
        ------
        TransportError
            On a timeout or a connection error.
        """
        ...


def send_to_addresses(
    destination: Destination, timeout: float, send: Callable[[str, float], TransportResponse]
) -> TransportResponse:
    """``send(address, remaining_seconds)`` to each checked address of ``destination`` in turn,
    all within one deadline of ``timeout`` seconds; the next address is tried only when nothing
    was sent to the previous one (``connect_failed``). Used by the webhook and the network
    adapters (``platforms/http.py``).

    Raises
    ------
    TransportError
        The last address's error, or a timeout (``connect_failed=True``: nothing was sent) when
        no address could be tried in time.
    """
    deadline = time.monotonic() + timeout
    last: TransportError | None = None
    for address in destination.addresses:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        try:
            return send(address, remaining)
        except TransportError as exc:
            last = exc
            if not exc.connect_failed:
                raise
    if last is None:
        raise TransportError("no address answered in time", timeout=True, connect_failed=True)
    raise last


def header(headers: Mapping[str, str], name: str) -> str | None:
    """Case-insensitive header lookup (field names are case-insensitive: RFC 9110 section 5.1)."""
    wanted = name.lower()
    for key, value in headers.items():
        if key.lower() == wanted:
            return value
    return None


class _Deadline:
    """Closes the connection's socket when the wall-clock deadline passes (issue 17).

    urllib3's timeouts bound each socket operation, and a read timeout restarts on every byte
    received, so a receiver that drips one byte a second could keep an attempt alive for ever.
    A timer that shuts the socket down ends any blocked connect, send or read at the deadline.
    """

    def __init__(self, seconds: float) -> None:
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self.expired = False
        self._timer = threading.Timer(max(0.0, seconds), self._expire)
        self._timer.daemon = True

    def start(self) -> None:
        self._timer.start()

    def watch(self, sock: socket.socket | None) -> None:
        with self._lock:
            self._socket = sock
            if self.expired:
                self._shutdown()

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            self._shutdown()

    def _shutdown(self) -> None:
        if self._socket is not None:
            with contextlib.suppress(OSError):
                # socket.socket's own shutdown, also for an SSLSocket: no TLS alert is sent.
                socket.socket.shutdown(self._socket, socket.SHUT_RDWR)

    def cancel(self) -> None:
        self._timer.cancel()


def _watched(base: type[Any], deadline: _Deadline) -> type[Any]:
    """A subclass of urllib3's connection class ``base`` that hands its socket to ``deadline``
    as soon as it is connected."""

    class _WatchedConnection(base):  # type: ignore[misc,valid-type]
        def connect(self) -> None:
            super().connect()
            deadline.watch(self.sock)

    return _WatchedConnection


class Urllib3Transport:
    """The production transport, on urllib3 (already in the runtime through botocore).

    Connects to the checked IP address, sends the real ``Host`` header, verifies the server
    certificate against the host name with SNI, never retries, never follows redirects, does
    not decode content encodings (no decompression bomb), and reads at most
    ``max_response_bytes``. ``method`` is ``POST`` for webhooks; the network adapters
    (``platforms/http.py``) also send ``GET``. ``timeout`` is one wall-clock deadline over
    connect, request, headers and body (:class:`_Deadline`). ``ca_certs`` (a PEM path) replaces
    the system trust store (tests).
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
        deadline = _Deadline(timeout)
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
        pool.ConnectionCls = _watched(pool.ConnectionCls, deadline)
        deadline.start()
        try:
            response = self._exchange(pool, destination, body, headers, timeout, method=method)
            if deadline.expired:
                # The shutdown can look like a clean end of headers or body to http.client.
                raise TransportError("deadline passed", timeout=True)
            return response
        except (NewConnectionError, SSLError) as exc:
            if deadline.expired:
                raise TransportError("deadline passed", timeout=True) from exc
            # Checked first: urllib3 2.x's NewConnectionError subclasses ConnectTimeoutError.
            kind = AttemptError.TLS_ERROR if isinstance(exc, SSLError) else None
            raise TransportError(
                f"connection failed: {type(exc).__name__}", connect_failed=True, kind=kind
            ) from exc
        except ConnectTimeoutError as exc:
            raise TransportError("timed out connecting", timeout=True, connect_failed=True) from exc
        except (Urllib3TimeoutError, TimeoutError) as exc:
            raise TransportError(f"timed out: {type(exc).__name__}", timeout=True) from exc
        except (ProtocolError, HTTPError, OSError, ValueError) as exc:
            if deadline.expired:
                raise TransportError("deadline passed", timeout=True) from exc
            raise TransportError(f"connection error: {type(exc).__name__}") from exc
        finally:
            deadline.cancel()
            pool.close()

    def _exchange(
        self,
        pool: urllib3.HTTPConnectionPool,
        destination: Destination,
        body: bytes,
        headers: Mapping[str, str],
        timeout: float,
        *,
        method: str = "POST",
    ) -> TransportResponse:
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


def build_body(request: DeliveryRequest, media: list[dict[str, Any]] | None = None) -> bytes:
    """The JSON body, UTF-8, compact: ``schedule_id``, ``channel_id``, ``content``,
    ``media_ids`` (list), ``publish_at`` (``YYYY-MM-DDTHH:MM:SS.mmmZ``), ``attempt`` (int),
    ``idempotency_key`` (the header's value, here under the signature), and ``media`` when
    given (``webhook_media.media_entries``); a thread's ``parts`` (``[{content, media_ids}]``,
    the replies after ``content``) when it has any."""
    payload: dict[str, Any] = {
        "schedule_id": request.schedule_id,
        "channel_id": request.channel_id,
        "content": request.content,
        "media_ids": list(request.media_ids),
        "publish_at": format_instant(request.publish_at),
        "attempt": request.attempt,
        "idempotency_key": request.idempotency_key,
    }
    if media:
        payload["media"] = media
    if request.parts:  # a thread: the replies after content, in order, in the one signed body
        payload["parts"] = [
            {"content": part.content, "media_ids": list(part.media_ids)} for part in request.parts
        ]
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def signing_secrets(channel: Channel, now: datetime) -> list[str]:
    """The secrets to sign with at ``now``, newest first: the channel's secret, plus every
    replaced secret still in its overlap (``SECRET_OVERLAP_SECONDS`` after its replacement)."""
    return [channel.signing_secret, *(p.secret for p in channel.valid_previous_secrets(now))]


def parse_retry_after(value: str | None, *, now: datetime) -> float | None:
    """``Retry-After`` in seconds from ``now`` with the default bounds of :class:`Settings`
    (``RETRY_AFTER_FLOOR_SECONDS`` .. ``RETRY_AFTER_CAP_SECONDS``); ``None`` when absent or
    unreadable. See :mod:`scheduled_posts.platforms.retry_after`. Never raises."""
    defaults = Settings()
    return bounded_retry_after(
        value,
        now=now,
        floor_seconds=defaults.RETRY_AFTER_FLOOR_SECONDS,
        cap_seconds=defaults.RETRY_AFTER_CAP_SECONDS,
    )


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
    media
        The media bucket (``MediaObjects``): the body's download links of a post's media.
    """

    platform = "webhook"

    def __init__(
        self,
        settings: Settings,
        *,
        transport: Transport | None = None,
        resolver: Resolver | None = None,
        user_agent: str = USER_AGENT,
        media: MediaObjects | None = None,
    ) -> None:
        self.settings = settings
        self.media = media
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
            ``published`` on a 2xx; ``failed`` on a refused destination or a status that
            :func:`outcome_for_status` calls failed (3xx, most 4xx).

        Raises
        ------
        RetryableDeliveryError
            On 429 (``rate_limited=True``), 408, 425 and 5xx (``retry_after_seconds`` from
            ``Retry-After``, bounded), a timeout, a connection error, or a host that does not
            resolve now. Its message starts with an :class:`AttemptError` word or ``http_<n>``.
        """
        try:
            body = build_body(request, media_entries(request, self.media, now=now))
        except MediaStoreMissingError as exc:
            return DeliveryResult(outcome="failed", error=str(exc))
        try:
            response = self.post_signed(
                channel.url,
                body,
                secrets=signing_secrets(channel, now),
                idempotency_key=request.idempotency_key,
                now=now,
            )
        except UnsafeDestinationError as exc:
            return DeliveryResult(
                outcome="failed", error=f"{AttemptError.DESTINATION_REFUSED}: {exc}"
            )
        return self._outcome(response, body, now=now)

    def post_signed(
        self,
        url: str,
        body: bytes,
        *,
        secrets: list[str],
        idempotency_key: str,
        now: datetime,
    ) -> TransportResponse:
        """POST ``body`` to ``url`` signed at ``now``: :meth:`deliver`'s and the notification
        endpoints' sender (issue 14): the URL policy checked again, the same
        headers (``Idempotency-Key`` = ``webhook-id``, one ``v1`` per secret), the same
        transport bounds. Returns the answer whatever its status.

        Raises
        ------
        UnsafeDestinationError
            The URL policy refuses ``url`` now (not retryable).
        RetryableDeliveryError
            The host does not resolve now, a timeout or a connection error (the message starts
            with an :class:`AttemptError` word).
        """
        settings = self.settings
        try:
            destination = check_destination(
                url,
                allowed_origins=settings.allowed_origins,
                resolver=self.resolver,
                allowed_ports=settings.allowed_ports,
                refused_ports=settings.refused_ports,
            )
        except UnresolvableDestinationError as exc:
            raise RetryableDeliveryError(f"{AttemptError.DNS_ERROR}: {exc}") from exc
        headers = {
            "Host": destination.host_header,
            "Content-Type": "application/json",
            "Idempotency-Key": idempotency_key,
            **signature_headers(secrets, idempotency_key, math.floor(now.timestamp()), body),
            "User-Agent": self.user_agent,
        }
        return self._send(destination, body, headers)

    def _send(
        self, destination: Destination, body: bytes, headers: Mapping[str, str]
    ) -> TransportResponse:
        try:
            return send_to_addresses(
                destination,
                self.settings.DELIVERY_TIMEOUT_SECONDS,
                lambda address, remaining: self.transport.send(
                    destination, address, body, headers, remaining
                ),
            )
        except TransportError as exc:
            raise RetryableDeliveryError(f"{exc.kind}: {exc}") from exc

    def _outcome(
        self, response: TransportResponse, body: bytes, *, now: datetime
    ) -> DeliveryResult:
        status = response.status
        outcome = outcome_for_status(status)
        word = http_word(status)
        if outcome is StatusOutcome.PUBLISHED:
            return DeliveryResult(
                outcome="published",
                http_status=status,
                remote_id=remote_id_of(response.body),
                receipt=receipt_from(
                    http_status=status, body_sha256=hashlib.sha256(body).hexdigest()
                ),
            )
        if outcome in (StatusOutcome.RATE_LIMITED, StatusOutcome.RETRY):
            raise RetryableDeliveryError(
                word,
                http_status=status,
                rate_limited=outcome is StatusOutcome.RATE_LIMITED,
                retry_after_seconds=bounded_retry_after(
                    header(response.headers, "Retry-After"),
                    now=now,
                    floor_seconds=self.settings.RETRY_AFTER_FLOOR_SECONDS,
                    cap_seconds=self.settings.RETRY_AFTER_CAP_SECONDS,
                ),
            )
        if 300 <= status < 400:
            return DeliveryResult(
                outcome="failed",
                http_status=status,
                error=f"{word}: redirects are not followed; use the final URL",
            )
        return DeliveryResult(
            outcome="failed", http_status=status, error=f"{word}{_excerpt(response.body)}"
        )
