"""A tiny real webhook receiver on loopback (stdlib ``ThreadingHTTPServer`` on 127.0.0.1:0).

Same ledger, scripts and assertions as the in-process :class:`tests.support.receiver.FakeReceiver`
(``accepted(key)``, ``raw_resends()``, ``requests_for(key)``, ``early_requests()``...), but over
real HTTP, served by the local stack's webhook server
(:class:`local.emulation.receiver.WebhookServer`): the adapter's loopback tests start it.
Time is the real clock unless a clock is passed; ``tls=`` (an ``ssl.SSLContext``) serves HTTPS
instead. The URL recorded for a request is built from its ``Host`` header.
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
import json
import ssl
import sys

from local.emulation.receiver import Served, WebhookReply, WebhookRequest, WebhookServer
from tests.support.receiver import ReceiverLedger, _Now


class HttpReceiver(ReceiverLedger, Served):
    """A :class:`ReceiverLedger` served over HTTP on ``host:port`` (port 0 = a free one), on the
    local stack's :class:`~local.emulation.receiver.WebhookServer`."""

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
        self.echo = echo
        self.server = WebhookServer(self._respond, host=host, port=port, tls=tls)

    def _respond(self, request: WebhookRequest) -> WebhookReply:
        if request.method == "GET":
            return WebhookReply(200, {}, b"ok")
        record, response_body = self.handle(
            request.url, request.client_ip, request.headers, request.body
        )
        if self.echo:
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
        answer = record.answer
        headers = dict(answer.headers)
        if response_body and "content-type" not in {k.lower() for k in headers}:
            headers["Content-Type"] = "application/json"
        return WebhookReply(
            answer.status,
            headers,
            response_body,
            delay_seconds=answer.delay_seconds,
            drop=answer.kind in ("timeout", "accept_then_timeout", "connect_error"),
        )

    def url(self, path: str = "/hook") -> str:
        """A URL on this receiver."""
        return f"{self.origin}{path}"

    def serve_forever(self) -> None:
        """Serve in this thread (the CLI)."""
        self.server.serve_forever()


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
