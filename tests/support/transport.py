"""One scripted fake of the outbound transport, for the tests of the webhook and network adapters.

The adapters send through ``Transport.send(destination, address, body, headers, timeout, *,
method="POST")`` (:class:`scheduled_posts.platforms.transport.Transport`). That signature is
written once here: :class:`AnsweringTransport` hands every request to ``answer`` as a
:class:`SentRequest`; :class:`ScriptedTransport` also keeps the requests and, by default,
hands out the scripted answers in order. A test that needs another behaviour (count, delay,
forward to a real server, lose an answer) subclasses one and overrides ``answer`` only.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass

from scheduled_posts.platforms.transport import Transport, TransportError, TransportResponse
from scheduled_posts.platforms.url_policy import Destination


@dataclass(frozen=True)
class SentRequest:
    """One request handed to the transport: the arguments of ``Transport.send``."""

    destination: Destination
    address: str
    body: bytes
    headers: Mapping[str, str]
    timeout: float
    method: str = "POST"

    @property
    def path(self) -> str:
        """The request target without its query string (``/api/v1/statuses``)."""
        return self.destination.target.split("?", 1)[0]

    def forward(self, transport: Transport) -> TransportResponse:
        """Send this same request through ``transport`` (a real one, or a fake receiver)."""
        return transport.send(
            self.destination,
            self.address,
            self.body,
            self.headers,
            self.timeout,
            method=self.method,
        )


class AnsweringTransport:
    """``Transport.send`` written once: each request is handed to :meth:`answer` as a
    :class:`SentRequest`. Subclasses (the fake receiver, the network fault injector, the
    scripted transport) override ``answer``; :meth:`record` sees every request first."""

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
        """Hand the request to :meth:`record`, then answer it with :meth:`answer` (which may
        raise :class:`TransportError`)."""
        request = SentRequest(destination, address, body, headers, timeout, method)
        self.record(request)
        return self.answer(request)

    def record(self, request: SentRequest) -> None:
        """Called with every request before it is answered; keeps nothing here."""

    def answer(self, request: SentRequest) -> TransportResponse:
        """The answer to ``request``: subclasses say."""
        raise NotImplementedError


class ScriptedTransport(AnsweringTransport):
    """A transport answering each request with the next of ``answers`` (a
    :class:`TransportError` among them is raised instead); every request is kept, in order, in
    ``requests``. Safe to share between threads."""

    def __init__(self, *answers: TransportResponse | TransportError) -> None:
        self.answers = list(answers)
        self.requests: list[SentRequest] = []
        self._lock = threading.Lock()

    def record(self, request: SentRequest) -> None:
        """Keep ``request`` in ``requests``."""
        with self._lock:
            self.requests.append(request)

    @property
    def paths(self) -> list[str]:
        """The paths requested so far, in order (query strings cut)."""
        with self._lock:
            return [request.path for request in self.requests]

    def answer(self, request: SentRequest) -> TransportResponse:
        """The next scripted answer; raises it when it is a :class:`TransportError`, and
        ``IndexError`` when the script has run out (a request the test did not expect)."""
        with self._lock:
            answer = self.answers.pop(0)
        if isinstance(answer, TransportError):
            raise answer
        return answer
