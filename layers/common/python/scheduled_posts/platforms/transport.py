"""The outbound HTTP transport the webhook adapter, the notifier and the network adapters share.

One request to a checked :class:`~scheduled_posts.platforms.url_policy.Destination`: the
transport connects to the checked address itself (no second lookup, so a DNS answer that changes
between check and connect cannot reach a private address), sends the original ``Host`` header,
verifies TLS against the host name (SNI + certificate hostname), follows no redirect, bounds the
whole exchange by one wall-clock deadline and reads at most :data:`MAX_RESPONSE_BYTES` of the
answer. Attempt errors start with one word of a stable vocabulary (:class:`AttemptError`), never
an HTTP library's exception name; a final status maps to an outcome by
:func:`outcome_for_status` (the table is in ``docs/dispatch.md``).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
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

from scheduled_posts.platforms.url_policy import Destination

#: Most response bytes read (64 KiB); the rest is discarded unread.
MAX_RESPONSE_BYTES = 64 * 1024


class AttemptError(StrEnum):
    """The first word of every attempt error the webhook adapter writes (decision "Outbound ports
    and attempt error words"): stable, so receivers' operators and dashboards can match on it. HTTP
    answers are ``http_<status>``."""

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
    """Closes the connection's socket when the wall-clock deadline passes (decision "One wall-clock
    deadline per attempt").

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
