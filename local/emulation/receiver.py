"""The webhook receiver on loopback: one HTTP server, and ``make receiver``'s ledger.

:class:`WebhookServer` serves webhook requests on 127.0.0.1 (optionally over TLS) and answers
each with what its ``respond`` callable says (an answer may be delayed, or the connection closed
without one, to play a slow or broken receiver). :class:`Receiver` is ``make receiver``'s
ledger on it, used by the demo, the end-to-end test and the lag benchmark; the tests' scripted
receiver (``tests/support/http_receiver.py``) serves its own ledger on the same server.

:class:`Receiver` follows the webhook contract (docs in
``scheduled_posts.platforms.signing``): verifies the Standard Webhooks signature over the raw
body with the ``standardwebhooks`` package (``Webhook(secret).verify``) and the channels'
secrets when given (``RECEIVER_SECRET``, comma-separated: a delivery passes when
signed with any of them, so several channels can share one receiver), and deduplicates by the
signed body's ``idempotency_key`` (the ``Idempotency-Key`` header must agree, or the request is
refused): a repeated key is answered with the same ``{"id": ...}`` and counted as a re-send,
never accepted twice. ``GET /deliveries`` returns what it accepted (JSON), for scripts, with
each delivery's ``media`` items (their download ``url`` and ``sha256``); ``make receiver``
prints each item under its ``DELIVERED`` line as ``MEDIA <type> <w>x<h> size= sha256= alt= url=``.

It also takes **notifications** (register ``<origin>/notify`` as a notification
endpoint): a body with ``event_id`` and ``type`` is an outcome event, verified with the
endpoints' secrets when given (``RECEIVER_NOTIFY_SECRET``, comma-separated too), deduplicated
by ``event_id``
(the ``Idempotency-Key`` header must agree) and printed as ``NOTIFIED <type> ...`` with the
post's ``publish_lag_seconds`` and ``remote_url`` when the event has them; ``GET
/notifications`` returns them.
"""

from __future__ import annotations

import contextlib
import json
import ssl
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from scheduled_posts.clock import parse_instant

#: Largest request body read, in bytes (the API caps posts far below this).
MAX_BODY_BYTES = 1024 * 1024

#: ``RECEIVER_SECRET`` / ``RECEIVER_NOTIFY_SECRET``: one secret, several (a comma-separated
#: string or a sequence), or none (signatures not verified).
Secrets = str | Sequence[str] | None


def secret_list(secrets: Secrets) -> tuple[str, ...]:
    """The secrets of ``secrets``: a string is split on commas; blanks are dropped."""
    items = secrets.split(",") if isinstance(secrets, str) else list(secrets or ())
    return tuple(dict.fromkeys(item.strip() for item in items if item and item.strip()))


def signed_with_any(headers: Mapping[str, str], secrets: Sequence[str], body: bytes) -> bool:
    """Whether the Standard Webhooks headers (``webhook-id``, ``webhook-timestamp``,
    ``webhook-signature``) sign ``body`` with one of ``secrets`` (``whsec_...``), as
    ``standardwebhooks.Webhook(secret).verify`` says: a timestamp within 5 minutes of this
    machine's clock and any ``v1,`` matching."""
    from standardwebhooks import Webhook, WebhookVerificationError

    for secret in secrets:
        try:
            Webhook(secret).verify(body, dict(headers), json_parse=False)
        except (WebhookVerificationError, ValueError):  # ValueError: not base64, not UTF-8
            continue
        return True
    return False


@dataclass(frozen=True)
class WebhookRequest:
    """One request as received: ``method``, ``url`` (from the ``Host`` header), ``path``,
    the client's address, the headers (as sent) and the raw body."""

    method: str
    url: str
    path: str
    client_ip: str
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class WebhookReply:
    """What to answer: ``status``, ``headers``, ``body``; ``delay_seconds`` to wait first;
    ``drop`` to close the connection without any answer (after the delay)."""

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    delay_seconds: float = 0.0
    drop: bool = False

    @classmethod
    def json(cls, status: int, payload: Any) -> WebhookReply:
        """A JSON answer (``content-type: application/json``)."""
        return cls(status, {"content-type": "application/json"}, json.dumps(payload).encode())


Responder = Callable[[WebhookRequest], WebhookReply]


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _serve(self) -> None:
        try:
            length = int(self.headers.get("content-length") or 0)
        except ValueError:
            self.close_connection = True  # the body's end is unknown
            self._reply(WebhookReply.json(400, {"message": "Content-Length is not a number"}))
            return
        body = self.rfile.read(min(length, MAX_BODY_BYTES)) if length > 0 else b""
        host = self.headers.get("host", "")
        scheme = "https" if isinstance(self.connection, ssl.SSLSocket) else "http"
        request = WebhookRequest(
            method=self.command,
            url=f"{scheme}://{host}{self.path}" if host else self.path,
            path=self.path,
            client_ip=self.client_address[0],
            headers=dict(self.headers.items()),
            body=body,
        )
        reply = self.server.respond(request)
        if reply.delay_seconds > 0:
            time.sleep(reply.delay_seconds)
        if reply.drop:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(2)
            return
        self._reply(reply)

    def _reply(self, reply: WebhookReply) -> None:
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(reply.body)))
        self.end_headers()
        with contextlib.suppress(OSError):
            self.wfile.write(reply.body)

    do_GET = do_POST = _serve


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    respond: Responder

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hung up early (timeouts, the body-size cap) is expected here.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class WebhookServer:
    """An HTTP(S) server on ``host:port`` (port 0: a free one) answering with ``respond``.

    ``tls`` (an ``ssl.SSLContext``) serves HTTPS. Serves GET and POST; ``respond`` runs on the
    server's request threads and must be thread-safe.
    """

    def __init__(
        self,
        respond: Responder,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.host = host
        self.scheme = "https" if tls is not None else "http"
        self._server = _Server((host, port), _Handler)
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self._server.respond = respond
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The bound port."""
        return int(self._server.server_address[1])

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:<port>`` (``https`` with ``tls``)."""
        return f"{self.scheme}://{self.host}:{self.port}"

    def start(self) -> None:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def serve_forever(self) -> None:
        """Serve in this thread (until :meth:`stop` from another, or Ctrl-C)."""
        self._server.serve_forever(poll_interval=0.2)

    def stop(self) -> None:
        """Stop serving (when started) and close the socket."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()


class Served:
    """Start, stop and address of a receiver served by its :class:`WebhookServer`
    (``self.server``); usable as a context manager (started on enter, stopped on exit)."""

    server: WebhookServer

    @property
    def port(self) -> int:
        """The bound port."""
        return self.server.port

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:<port>`` (``https`` with TLS)."""
        return self.server.origin

    def start(self) -> Self:
        """Serve in a background thread; returns self."""
        self.server.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.server.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


@dataclass
class Delivery:
    """One accepted delivery: who, when it arrived, and how late (``lag_seconds``, float);
    ``media`` is the signed body's ``media`` list as sent (each item's ``content_type``,
    ``size``, ``sha256``, ``width``, ``height``, ``alt_text`` and download ``url``), empty
    without media."""

    idempotency_key: str
    schedule_id: str
    channel_id: str
    publish_at: str
    received_at: str
    lag_seconds: float
    attempt: int
    remote_id: str
    content: str
    media: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Notification:
    """One accepted notification: the event's id and type, its post, when it arrived, and how
    long after the event's ``occurred_at`` (``lag_seconds``); the whole event in ``event``."""

    event_id: str
    type: str
    schedule_id: str
    received_at: str
    lag_seconds: float
    event: dict[str, Any]


class Receiver(Served):
    """``make receiver``'s ledger and its HTTP server.

    ``secret`` (deliveries) and ``notify_secret`` (notifications) are :data:`Secrets`: one, a
    comma-separated string or a sequence; either may be set after start (the demo learns the
    channel's secret only after it has created the channel with this receiver's URL).
    ``deliveries`` holds the accepted ones in arrival order; ``resends`` counts repeated
    Idempotency-Keys; ``rejected`` bad signatures.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        secret: Secrets = None,
        status_for: Callable[[dict[str, Any]], int] | None = None,
        printer: Callable[[str], None] | None = None,
        notify_secret: Secrets = None,
    ) -> None:
        self.secret = secret
        self.notify_secret = notify_secret
        self.status_for = status_for
        self.printer = printer
        self.deliveries: list[Delivery] = []
        self.notifications: list[Notification] = []
        self._notified: set[str] = set()
        self.resends = 0
        self.rejected = 0
        self.requests = 0
        self._by_key: dict[str, Delivery] = {}
        self._lock = threading.Lock()
        self.server = WebhookServer(self._respond, host=host, port=port)

    def _respond(self, request: WebhookRequest) -> WebhookReply:
        if request.method == "GET":
            path = request.path.rstrip("/")
            with self._lock:
                if path == "/notifications":
                    notes = [asdict(n) for n in self.notifications]
                    return WebhookReply.json(200, {"notifications": notes})
                if path != "/deliveries":
                    return WebhookReply.json(404, {"message": "not found"})
                items = [asdict(d) for d in self.deliveries]
            return WebhookReply.json(200, {"deliveries": items, "resends": self.resends})
        status, payload = self.handle(request.headers, request.body)
        return WebhookReply.json(status, payload)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>/hook``: the webhook URL to give a channel."""
        return f"{self.server.origin}/hook"

    @property
    def notify_url(self) -> str:
        """``http://127.0.0.1:<port>/notify``: the URL to register as a notification endpoint."""
        return f"{self.server.origin}/notify"

    def handle_notification(
        self, headers: Mapping[str, str], body: bytes, event: dict[str, Any], now: datetime
    ) -> tuple[int, dict[str, Any]]:
        """Judge one notification (an outcome event): 401 unless signed with one of the
        ``notify_secret`` secrets (when any is set), 400 when ``Idempotency-Key`` is not the
        ``event_id``, else 200 (a repeated ``event_id`` is counted as a re-send, not accepted
        twice)."""
        secrets = secret_list(self.notify_secret)
        if secrets and not signed_with_any(headers, secrets, body):
            with self._lock:
                self.rejected += 1
            self._print(f"REJECTED notification with a bad signature ({len(body)} bytes)")
            return 401, {"message": "bad signature"}
        event_id = str(event["event_id"])
        if headers.get("idempotency-key", event_id) != event_id:
            return 400, {"message": "Idempotency-Key header differs from the signed event_id"}
        try:
            lag = round((now - parse_instant(str(event.get("occurred_at")))).total_seconds(), 3)
        except ValueError:
            lag = 0.0
        with self._lock:
            if event_id in self._notified:
                self.resends += 1
                self._print(f"RESEND   notification {event_id}")
                return 200, {"id": event_id}
            self._notified.add(event_id)
            note = Notification(
                event_id=event_id,
                type=str(event["type"]),
                schedule_id=str(event.get("schedule_id") or event.get("series_id") or "-"),
                received_at=now.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                lag_seconds=lag,
                event=event,
            )
            self.notifications.append(note)
        extra = ""
        if isinstance(event.get("publish_lag_seconds"), int | float):
            extra += f" publish_lag={float(event['publish_lag_seconds']):+.3f}s"
        channels = event.get("channels")
        urls = (
            [c.get("remote_url") for c in channels if isinstance(c, dict)]
            if isinstance(channels, list)
            else []
        )
        if any(urls):
            extra += f" remote_url={','.join(str(u) for u in urls if u)}"
        self._print(
            f"NOTIFIED {note.type} {note.schedule_id} event_id={event_id} "
            f"after={note.lag_seconds:+.3f}s{extra}"
        )
        return 200, {"id": event_id}

    def handle(self, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        """Judge one delivery: ``(status, JSON answer)``.

        401 unless signed with one of the ``secret`` secrets (when any is set), 400 on a body
        that is not the webhook JSON, otherwise ``status_for(payload)`` (default 200) with
        ``{"id": remote_id}``.
        """
        now = datetime.now(UTC)
        lower = {k.lower(): v for k, v in headers.items()}
        with self._lock:
            self.requests += 1
        if self._is_notification(body):
            return self.handle_notification(lower, body, json.loads(body), now)
        secrets = secret_list(self.secret)
        if secrets and not signed_with_any(lower, secrets, body):
            with self._lock:
                self.rejected += 1
            self._print(f"REJECTED bad signature ({len(body)} bytes)")
            return 401, {"message": "bad signature"}
        try:
            payload = json.loads(body)
            publish_at = parse_instant(payload["publish_at"])
            attempt = int(payload.get("attempt") or 1)
        except (ValueError, KeyError, TypeError):
            return 400, {"message": "not a webhook delivery"}
        status = self.status_for(payload) if self.status_for else 200
        if not 200 <= status < 300:
            return status, {"message": "refused by the test receiver"}
        # Dedupe on the key under the signature; a header that disagrees was tampered with.
        key = str(
            payload.get("idempotency_key")
            or f"{payload.get('schedule_id')}:{payload.get('channel_id')}"
        )
        if lower.get("idempotency-key", key) != key:
            return 400, {"message": "Idempotency-Key header differs from the signed body"}
        with self._lock:
            known = self._by_key.get(key)
            if known is not None:
                self.resends += 1
                self._print(f"RESEND   {key} (answered with the first id)")
                return 200, {"id": known.remote_id}
            delivery = Delivery(
                idempotency_key=key,
                schedule_id=str(payload.get("schedule_id")),
                channel_id=str(payload.get("channel_id")),
                publish_at=payload["publish_at"],
                received_at=now.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                lag_seconds=round((now - publish_at).total_seconds(), 3),
                attempt=attempt,
                remote_id=f"rcv-{uuid.uuid4().hex[:12]}",
                content=str(payload.get("content", "")),
                media=_media_items(payload),
            )
            self._by_key[key] = delivery
            self.deliveries.append(delivery)
        self._print(
            f"DELIVERED {delivery.schedule_id} channel={delivery.channel_id} "
            f"publish_at={delivery.publish_at} lag={delivery.lag_seconds:+.3f}s "
            f"attempt={delivery.attempt} content={delivery.content[:40]!r}"
        )
        for item in delivery.media:
            self._print(
                f"  MEDIA {item.get('content_type')} {item.get('width')}x{item.get('height')} "
                f"size={item.get('size')} sha256={item.get('sha256')} "
                f"alt={item.get('alt_text')!r} url={item.get('url')}"
            )
        return 200, {"id": delivery.remote_id}

    @staticmethod
    def _is_notification(body: bytes) -> bool:
        try:
            payload = json.loads(body)
        except ValueError:
            return False
        return isinstance(payload, dict) and "event_id" in payload and "type" in payload

    def snapshot(self) -> list[Delivery]:
        """A copy of the accepted deliveries."""
        with self._lock:
            return list(self.deliveries)

    def _print(self, line: str) -> None:
        if self.printer is not None:
            self.printer(line)


def _media_items(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """The body's ``media`` list (``platforms/webhook_media.py``), its non-object entries
    dropped; ``[]`` when absent or not a list."""
    media = payload.get("media")
    return [m for m in media if isinstance(m, dict)] if isinstance(media, list) else []


def _mode(secrets: Secrets, variable: str) -> str:
    count = len(secret_list(secrets))
    if not count:
        return f"NOT verifying signatures (no {variable})"
    plural = "s" if count > 1 else ""
    return (
        f"verifying webhook-signature (standardwebhooks) with {count} secret{plural} of {variable}"
    )


def serve(port: int, secret: Secrets, notify_secret: Secrets = None) -> None:
    """Run a receiver in the foreground until Ctrl-C (``make receiver``); ``secret`` and
    ``notify_secret`` are ``RECEIVER_SECRET`` and ``RECEIVER_NOTIFY_SECRET`` (each one secret
    or several, comma-separated)."""
    receiver = Receiver(
        port=port,
        secret=secret,
        notify_secret=notify_secret,
        printer=lambda s: print(s, flush=True),
    )
    receiver.start()
    print(f"Webhook receiver at {receiver.url} ({_mode(secret, 'RECEIVER_SECRET')})", flush=True)
    notify_mode = _mode(notify_secret, "RECEIVER_NOTIFY_SECRET")
    print(f"Notifications at {receiver.notify_url} ({notify_mode})", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        receiver.stop()
