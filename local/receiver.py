"""``make receiver``: a small webhook receiver on loopback that prints each delivery with its lag.

It follows the webhook contract (docs in ``scheduled_posts.platforms.signing``): verifies
``X-Signature`` over the raw body with the channel's secret when one is given
(``RECEIVER_SECRET``), and deduplicates by ``Idempotency-Key``: a repeated key is answered with
the same ``{"id": ...}`` and counted as a re-send, never accepted twice. ``GET /deliveries``
returns what it accepted (JSON), for scripts.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from scheduled_posts.clock import parse_instant
from scheduled_posts.platforms.signing import SIGNATURE_HEADER, verify

MAX_BODY_BYTES = 1024 * 1024


@dataclass
class Delivery:
    """One accepted delivery: who, when it arrived, and how late (``lag_seconds``, float)."""

    idempotency_key: str
    schedule_id: str
    channel_id: str
    publish_at: str
    received_at: str
    lag_seconds: float
    attempt: int
    remote_id: str
    content: str


class Receiver:
    """The receiver's state and HTTP server.

    ``secret`` may be set after start (the demo learns the channel's secret only after it has
    created the channel with this receiver's URL). ``deliveries`` holds the accepted ones in
    arrival order; ``resends`` counts repeated Idempotency-Keys; ``rejected`` bad signatures.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        secret: str | None = None,
        status_for: Callable[[dict[str, Any]], int] | None = None,
        printer: Callable[[str], None] | None = None,
    ) -> None:
        self.secret = secret
        self.status_for = status_for
        self.printer = printer
        self.deliveries: list[Delivery] = []
        self.resends = 0
        self.rejected = 0
        self.requests = 0
        self._by_key: dict[str, Delivery] = {}
        self._lock = threading.Lock()
        receiver = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(min(length, MAX_BODY_BYTES))
                status, payload = receiver.handle(dict(self.headers.items()), body)
                self._reply(status, payload)

            def do_GET(self) -> None:
                if self.path.rstrip("/") != "/deliveries":
                    self._reply(404, {"message": "not found"})
                    return
                with receiver._lock:
                    items = [asdict(d) for d in receiver.deliveries]
                self._reply(200, {"deliveries": items, "resends": receiver.resends})

            def _reply(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer((host, port), _Handler)
        self.server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>/hook``: the webhook URL to give a channel."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def start(self) -> Receiver:
        """Serve in a background thread; returns self."""
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.server.shutdown()
        self.server.server_close()

    def handle(self, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        """Judge one delivery: ``(status, JSON answer)``.

        401 on a bad signature (when a secret is set), 400 on a body that is not the webhook
        JSON, otherwise ``status_for(payload)`` (default 200) with ``{"id": remote_id}``.
        """
        now = datetime.now(UTC)
        lower = {k.lower(): v for k, v in headers.items()}
        with self._lock:
            self.requests += 1
        if self.secret and not verify(
            lower.get(SIGNATURE_HEADER.lower(), ""), self.secret, body, now=int(now.timestamp())
        ):
            with self._lock:
                self.rejected += 1
            self._print(f"REJECTED bad signature ({len(body)} bytes)")
            return 401, {"message": "bad signature"}
        try:
            payload = json.loads(body)
            publish_at = parse_instant(payload["publish_at"])
        except (ValueError, KeyError, TypeError):
            return 400, {"message": "not a webhook delivery"}
        status = self.status_for(payload) if self.status_for else 200
        if not 200 <= status < 300:
            return status, {"message": "refused by the test receiver"}
        key = (
            lower.get("idempotency-key")
            or f"{payload.get('schedule_id')}:{payload.get('channel_id')}"
        )
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
                attempt=int(payload.get("attempt") or 1),
                remote_id=f"rcv-{uuid.uuid4().hex[:12]}",
                content=str(payload.get("content", "")),
            )
            self._by_key[key] = delivery
            self.deliveries.append(delivery)
        self._print(
            f"DELIVERED {delivery.schedule_id} channel={delivery.channel_id} "
            f"publish_at={delivery.publish_at} lag={delivery.lag_seconds:+.3f}s "
            f"attempt={delivery.attempt} content={delivery.content[:40]!r}"
        )
        return 200, {"id": delivery.remote_id}

    def snapshot(self) -> list[Delivery]:
        """A copy of the accepted deliveries."""
        with self._lock:
            return list(self.deliveries)

    def _print(self, line: str) -> None:
        if self.printer is not None:
            self.printer(line)


def serve(port: int, secret: str | None) -> None:
    """Run a receiver in the foreground until Ctrl-C (``make receiver``)."""
    receiver = Receiver(port=port, secret=secret, printer=lambda s: print(s, flush=True))
    receiver.start()
    mode = "verifying X-Signature" if secret else "NOT verifying signatures (no RECEIVER_SECRET)"
    print(f"Webhook receiver at {receiver.url} ({mode})", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        receiver.stop()
