"""A tiny real webhook receiver on loopback (stdlib ``ThreadingHTTPServer`` on 127.0.0.1:0).

Same ledger, scripts and assertions as the in-process :class:`tests.support.receiver.FakeReceiver`
(``accepted(key)``, ``raw_resends()``, ``requests_for(key)``, ``early_requests()``...), but over
real HTTP: the local-stack end-to-end test, the benchmarks and the adapter's loopback tests start
it. Time is the real clock unless a clock is passed; ``tls=`` (an ``ssl.SSLContext``) serves
HTTPS instead. The URL recorded for a request is built from its ``Host`` header.
``Answer.timeout(delay_seconds=...)`` sleeps before closing the connection without a response;
``Answer.connect_error()`` closes the connection at once.

Use::

    with HttpReceiver() as receiver:
        receiver.add_secret(None, secret)          # verify every request with it
        url = receiver.url("/hook")                # http://127.0.0.1:<port>/hook
        ...
        assert receiver.accepted(key) == 1

Run standalone (prints each delivery; Ctrl-C stops)::

    python -m tests.support.http_receiver --port 9000 --secret <signing secret>
"""

from __future__ import annotations

import argparse
import contextlib
import json
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from tests.support.receiver import ReceiverLedger, _Now

#: Largest request body read, in bytes (the API caps posts far below this).
MAX_REQUEST_BYTES = 1024 * 1024


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        ledger = self.server.ledger
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(min(length, MAX_REQUEST_BYTES))
        host = self.headers.get("Host", "")
        scheme = "https" if isinstance(self.connection, ssl.SSLSocket) else "http"
        url = f"{scheme}://{host}{self.path}" if host else self.path
        headers = dict(self.headers.items())
        record, response_body = ledger.handle(url, self.client_address[0], headers, body)
        answer = record.answer
        if self.server.echo:
            print(
                json.dumps(
                    {
                        "at": record.at.isoformat(),
                        "idempotency_key": record.idempotency_key,
                        "signature_valid": record.signature_valid,
                        "accepted": record.accepted,
                        "raw_resend": record.raw_resend,
                        "payload": record.payload,
                    }
                ),
                flush=True,
            )
        if answer.delay_seconds > 0:
            time.sleep(answer.delay_seconds)
        if answer.kind in ("timeout", "accept_then_timeout", "connect_error"):
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(2)
            return
        self.send_response(answer.status)
        sent = {k.lower() for k in answer.headers}
        for name, value in answer.headers.items():
            self.send_header(name, value)
        if "content-type" not in sent and response_body:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(response_body)))
        self.end_headers()
        with contextlib.suppress(OSError):
            self.wfile.write(response_body)

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    ledger: ReceiverLedger
    echo: bool = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hung up early (timeouts, the 64 KiB read cap) is expected here.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class HttpReceiver(ReceiverLedger):
    """A :class:`ReceiverLedger` served over HTTP on ``host:port`` (port 0 = a free one)."""

    def __init__(
        self,
        clock: _Now | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        tolerance_seconds: int = 300,
        echo: bool = False,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        super().__init__(clock, tolerance_seconds=tolerance_seconds)
        self._host = host
        self._scheme = "https" if tls is not None else "http"
        self._server = _Server((host, port), _Handler)
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self._server.ledger = self
        self._server.echo = echo
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:<port>`` (``https`` when started with ``tls``)."""
        return f"{self._scheme}://{self._host}:{self.port}"

    def url(self, path: str = "/hook") -> str:
        """A URL on this receiver."""
        return f"{self.origin}{path}"

    def start(self) -> HttpReceiver:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def serve_forever(self) -> None:
        """Serve in this thread (the CLI)."""
        self._server.serve_forever(poll_interval=0.2)

    def __enter__(self) -> HttpReceiver:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    """CLI: serve on ``--host``/``--port``, verify with ``--secret`` (repeatable), print each
    delivery as one JSON line."""
    parser = argparse.ArgumentParser(description="A webhook receiver that prints deliveries.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9000)
    parser.add_argument("--secret", action="append", default=[])
    args = parser.parse_args(argv)
    receiver = HttpReceiver(host=args.host, port=args.port, echo=True)
    for secret in args.secret:
        receiver.add_secret(None, secret)
    print(f"receiver listening on {receiver.origin}", flush=True)
    try:
        receiver.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        receiver.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
