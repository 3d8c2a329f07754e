"""Outbound JSON over HTTP for the network adapters (Mastodon, Bluesky) and their credential
checks, under the same URL policy and transport as webhooks.

Every request URL is checked with
:func:`~scheduled_posts.platforms.url_policy.check_destination` under the webhooks' policy (a
fresh DNS answer, public addresses only unless the origin is in ``OUTBOUND_ALLOWED_ORIGINS``, the
port rules ``WEBHOOK_ALLOWED_PORTS``/``WEBHOOK_REFUSED_PORTS``), and the transport connects
to a checked address itself (no second lookup), never follows redirects, is bounded by
``DELIVERY_TIMEOUT_SECONDS`` and reads at most
:data:`~scheduled_posts.platforms.transport.MAX_RESPONSE_BYTES` of an answer.

Errors say what happened in the words of webhook attempt errors (docs/dispatch.md):
:attr:`OutboundError.kind` is an :class:`~scheduled_posts.platforms.transport.AttemptError` word or
``http_<status>``, and :func:`answer_error` starts with ``http_<status>``.

Rate-limit headers are read once for both networks in ``platforms/rate_limits.py``; the adapter
base and the attempt-error messages are in ``platforms/network_adapter.py``. Every request of a
delivery attempt ends by the attempt's one deadline (:meth:`OutboundHttp.within`,
``platforms/deadline.py``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from urllib3 import encode_multipart_formdata

from scheduled_posts.platforms.deadline import AttemptDeadline, DeadlinePassedError
from scheduled_posts.platforms.redaction import authorization_secrets
from scheduled_posts.platforms.transport import (
    AttemptError,
    Transport,
    TransportError,
    Urllib3Transport,
    header,
    send_to_addresses,
)
from scheduled_posts.platforms.url_policy import (
    Resolver,
    UnresolvableDestinationError,
    UnsafeDestinationError,
    check_destination,
    system_resolver,
)
from scheduled_posts.settings import Settings

#: The transport of the network adapters: the webhooks' (``method=`` is ``GET`` or ``POST``).
MethodTransport = Transport
#: Largest request body sent, in bytes: Mastodon's default video limit (99 MiB) and room for
#: the multipart framing (the per-network rules refuse bigger media before any request).
MAX_REQUEST_BODY_BYTES = 100 * 1024 * 1024
FormField = str | tuple[str, bytes, str]  # multipart: text, or (file name, bytes, type)


class RequestBodyTooLargeError(ValueError):
    """A request body over :data:`MAX_REQUEST_BODY_BYTES`; nothing was sent."""


class OutboundError(Exception):
    """No answer from the network. ``str(exc)`` is safe to show (never a credential).

    ``maybe_sent`` is False when no byte of the request left this host (refused destination,
    name that does not resolve, connection that failed), True when the request may have reached
    the network and its answer was lost (a timeout or a dropped connection after sending).
    ``kind`` is the attempt-error word (:class:`AttemptError` or ``http_<status>``); by default
    ``connection_lost`` when ``maybe_sent``, else ``connect_failed``.
    """

    def __init__(self, message: str, *, maybe_sent: bool, kind: str | None = None) -> None:
        super().__init__(message)
        self.maybe_sent = maybe_sent
        if kind is None:
            kind = AttemptError.CONNECTION_LOST if maybe_sent else AttemptError.CONNECT_FAILED
        self.kind = str(kind)


class CredentialsRefusedError(Exception):
    """The network refused the credentials (or the URL policy refused its URL) at a credential
    check; ``str(exc)`` quotes the network's reason and never contains a credential. ``kind``
    is the attempt-error word (``http_<status>`` or ``destination_refused``)."""

    def __init__(self, message: str, *, kind: str = AttemptError.DESTINATION_REFUSED) -> None:
        super().__init__(message)
        self.kind = str(kind)


class DestinationRefusedError(OutboundError):
    """The URL policy refuses the URL (not retryable: the URL will not change by itself)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, maybe_sent=False, kind=AttemptError.DESTINATION_REFUSED)


@dataclass(frozen=True)
class HttpAnswer:
    """An HTTP answer: ``status``, ``headers`` (:meth:`header`), ``body``, ``sent_secrets``."""

    status: int
    headers: Mapping[str, str]
    body: bytes
    sent_secrets: tuple[str, ...] = field(default=(), repr=False)

    def header(self, name: str) -> str | None:
        """Case-insensitive header lookup."""
        return header(self.headers, name)

    def json(self) -> Any:
        """The body parsed as JSON; ``None`` when it is not JSON."""
        try:
            return json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            return None

    def json_object(self) -> dict[str, Any]:
        """The body when it is a JSON object, else ``{}``."""
        data = self.json()
        return data if isinstance(data, dict) else {}


class OutboundHttp:
    """JSON requests to one network under the URL policy.

    Parameters
    ----------
    allowed_origins
        ``Settings.allowed_origins`` (``OUTBOUND_ALLOWED_ORIGINS``, formerly
        ``WEBHOOK_ALLOWED_ORIGINS``).
    allowed_ports, refused_ports
        ``Settings.allowed_ports`` and ``Settings.refused_ports``: the port rules of
        :func:`~scheduled_posts.platforms.url_policy.check_destination`.
    timeout_seconds
        Bound of one whole exchange (``DELIVERY_TIMEOUT_SECONDS``).
    transport, resolver
        Injectable for tests (defaults: :class:`Urllib3Transport`, :func:`system_resolver`).
    user_agent
        The ``User-Agent`` header.
    """

    def __init__(
        self,
        *,
        allowed_origins: Sequence[str],
        timeout_seconds: float,
        allowed_ports: Sequence[int] = (),
        refused_ports: Sequence[int] = (),
        transport: MethodTransport | None = None,
        resolver: Resolver | None = None,
        user_agent: str = "scheduled-posts/1",
    ) -> None:
        self.allowed_origins = tuple(allowed_origins)
        self.allowed_ports = tuple(allowed_ports)
        self.refused_ports = tuple(refused_ports)
        self.timeout_seconds = timeout_seconds
        self.transport: MethodTransport = transport or Urllib3Transport()
        self.resolver: Resolver = resolver or system_resolver
        self.user_agent = user_agent
        self.deadline: AttemptDeadline | None = None

    def within(self, deadline: AttemptDeadline) -> OutboundHttp:
        """This outbound HTTP (same policy, transport and resolver) with every request ending
        by ``deadline``: each gets what is left of it as its timeout (at most
        ``timeout_seconds``), and none starts once it has passed."""
        bounded = copy.copy(self)
        bounded.deadline = deadline
        return bounded

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        transport: MethodTransport | None = None,
        resolver: Resolver | None = None,
    ) -> OutboundHttp:
        """The outbound HTTP of the adapters and the credential check: the URL policy of
        ``settings`` (origins and ports, as for webhooks) and ``DELIVERY_TIMEOUT_SECONDS``."""
        return cls(
            allowed_origins=settings.allowed_origins,
            allowed_ports=settings.allowed_ports,
            refused_ports=settings.refused_ports,
            timeout_seconds=settings.DELIVERY_TIMEOUT_SECONDS,
            transport=transport,
            resolver=resolver,
        )

    def _timeout(self) -> float:
        """This request's timeout: ``timeout_seconds`` cut to what is left of the deadline."""
        if self.deadline is None:
            return self.timeout_seconds
        try:
            return self.deadline.bound(self.timeout_seconds)
        except DeadlinePassedError as exc:
            raise OutboundError(str(exc), maybe_sent=False, kind=AttemptError.TIMEOUT) from exc

    def request(
        self,
        method: str,
        url: str,
        *,
        json_body: Any = None,
        form: Mapping[str, FormField] | None = None,
        data: bytes | None = None,
        query: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        secrets: Sequence[str] = (),
    ) -> HttpAnswer:
        """Send one request; ``json_body`` (any JSON value, ``None`` for no body) is sent as
        compact UTF-8 JSON, or ``form`` as ``multipart/form-data`` (RFC 7578, urllib3's
        encoder; a file field is ``(name, bytes, content type)``), or ``data`` (bytes, e.g. a
        Bluesky blob) as is, with the ``Content-Type`` the caller gives in ``headers``;
        ``secrets`` (in the body) and ``Authorization`` are ``sent_secrets``.

        Raises
        ------
        RequestBodyTooLargeError
            When the body is over :data:`MAX_REQUEST_BODY_BYTES` (nothing is sent).
        DestinationRefusedError
            When the URL policy refuses ``url``.
        OutboundError
            When the host does not resolve, the connection fails, the exchange times out or
            the attempt's deadline has passed (``timeout``, nothing sent).
        """
        body, content_type = _encode_body(json_body, form, data)
        timeout = self._timeout()
        if query:
            url = f"{url}{'&' if '?' in url else '?'}{urlencode(query)}"
        try:
            destination = check_destination(
                url,
                allowed_origins=self.allowed_origins,
                resolver=self.resolver,
                allowed_ports=self.allowed_ports,
                refused_ports=self.refused_ports,
            )
        except UnresolvableDestinationError as exc:
            raise OutboundError(str(exc), maybe_sent=False, kind=AttemptError.DNS_ERROR) from exc
        except UnsafeDestinationError as exc:
            raise DestinationRefusedError(str(exc)) from exc
        sent_headers = {
            "Host": destination.host_header,
            "Accept": "application/json",
            "User-Agent": self.user_agent,
        }
        if content_type is not None:
            sent_headers["Content-Type"] = content_type
        sent_headers.update(headers or {})
        try:
            answer = send_to_addresses(
                destination,
                timeout,
                lambda address, remaining: self.transport.send(
                    destination, address, body, sent_headers, remaining, method=method
                ),
            )
        except TransportError as exc:
            raise OutboundError(
                f"{destination.host}: {exc}", maybe_sent=not exc.connect_failed, kind=exc.kind
            ) from exc
        sent = (*secrets, *authorization_secrets(headers))
        return HttpAnswer(answer.status, answer.headers, answer.body, sent_secrets=sent)


def _encode_body(
    json_body: Any, form: Mapping[str, FormField] | None, data: bytes | None = None
) -> tuple[bytes, str | None]:
    """``(body, Content-Type)`` of a request: JSON, multipart, raw bytes (the caller's type)
    or none."""
    content_type: str | None
    if data is not None:
        body, content_type = data, None
    elif form is not None:
        body, content_type = encode_multipart_formdata(dict(form))
    elif json_body is not None:
        body = json.dumps(json_body, ensure_ascii=False, separators=(",", ":")).encode()
        content_type = "application/json"
    else:
        return b"", None
    if len(body) > MAX_REQUEST_BODY_BYTES:
        raise RequestBodyTooLargeError(f"{len(body)} bytes, over {MAX_REQUEST_BODY_BYTES}")
    return body, content_type
