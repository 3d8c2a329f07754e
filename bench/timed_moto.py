"""The embedded AWS (moto's server) with a timing middleware, for ``bench/local_lag.py``.

``python -m bench.timed_moto --port P`` serves moto on ``127.0.0.1:P`` exactly as
``python -m local aws`` does (``make run`` reuses a moto server already listening on
``AWS_PORT``), and records the wall time spent serving each request, by operation
(``X-Amz-Target`` or ``Action``). ``GET /bench/stats`` returns the totals as JSON;
``POST /bench/reset`` clears them. Requests to ``/moto-api`` are passed through untimed.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qs

StartResponse = Callable[..., Any]


class TimingMiddleware:
    """Wraps a WSGI app; sums seconds and counts requests per operation (thread-safe)."""

    def __init__(self, app: Callable[[dict[str, Any], StartResponse], Iterable[bytes]]) -> None:
        self.app = app
        self.lock = threading.Lock()
        self.seconds: dict[str, float] = defaultdict(float)
        self.count: dict[str, int] = defaultdict(int)

    @staticmethod
    def operation(environ: dict[str, Any]) -> str:
        target = environ.get("HTTP_X_AMZ_TARGET")
        if target:
            return str(target)
        action = parse_qs(environ.get("QUERY_STRING", "")).get("Action")
        return (
            action[0] if action else f"{environ.get('REQUEST_METHOD')} {environ.get('PATH_INFO')}"
        )

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == "/bench/stats":
            with self.lock:
                body = json.dumps(
                    {"seconds": dict(self.seconds), "count": dict(self.count)}
                ).encode()
            start_response("200 OK", [("Content-Type", "application/json")])
            return [body]
        if path == "/bench/reset":
            with self.lock:
                self.seconds.clear()
                self.count.clear()
            start_response("204 No Content", [])
            return [b""]
        if path.startswith("/moto-api"):
            return self.app(environ, start_response)
        started = time.perf_counter()
        body = b"".join(self.app(environ, start_response))
        elapsed = time.perf_counter() - started
        name = self.operation(environ)
        with self.lock:
            self.seconds[name] += elapsed
            self.count[name] += 1
        return [body]


def serve(port: int) -> None:
    """Serve until SIGINT/SIGTERM."""
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server

    from local.embedded_aws import SerialisedApp
    from local.moto_speed import fast_moto_transactions

    for name in ("werkzeug", "moto", "botocore", "urllib3"):
        logging.getLogger(name).setLevel(logging.ERROR)
    # The same emulator as ``make run`` (requests serialised, fast transactions), timed inside
    # the lock so that waiting for it is not counted as moto's work.
    app = SerialisedApp(TimingMiddleware(DomainDispatcherApplication(create_backend_app)))
    server = make_server("127.0.0.1", port, app, True, request_handler=MotoRequestHandler)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    with fast_moto_transactions():
        thread.start()
        print(f"timed moto at http://127.0.0.1:{port}", flush=True)
        stop.wait()
        server.shutdown()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, required=True)
    serve(parser.parse_args().port)
