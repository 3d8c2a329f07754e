"""Outbound JSON over HTTP for the network adapters (Mastodon, Bluesky) and their credential
checks, under the same URL policy and transport as webhooks.

Every request URL is checked with
:func:`~scheduled_posts.platforms.url_policy.check_destination` under the webhooks' policy (a
fresh DNS answer, public addresses only unless the origin is in ``OUTBOUND_ALLOWED_ORIGINS``, the
port rules ``WEBHOOK_ALLOWED_PORTS``/``WEBHOOK_REFUSED_PORTS``), and the transport connects
to a checked address itself (no second lookup), never follows redirects, is bounded by
``DELIVERY_TIMEOUT_SECONDS`` and reads at most
:data:`~scheduled_posts.platforms.webhook.MAX_RESPONSE_BYTES` of an answer.

Errors say what happened in the words of webhook attempt errors (docs/dispatch.md):
:attr:`OutboundError.kind` is an :class:`~scheduled_posts.platforms.webhook.AttemptError` word or
``http_<status>``, and :func:`answer_error` starts with ``http_<status>``.

Rate-limit headers are read here once for both networks (:func:`rate_limit_wait_seconds`):

- Mastodon: ``X-RateLimit-Limit/-Remaining/-Reset``, the reset an ISO 8601 instant
  (https://docs.joinmastodon.org/api/rate-limits/).
- Bluesky (and the IETF draft "RateLimit header fields for HTTP"): ``RateLimit-Limit/-Remaining/
  -Reset``; the PDS sends the reset as an absolute Unix time in seconds
  (https://docs.bsky.app/docs/advanced-guides/rate-limits), the draft as delta-seconds: a value
  below 10^9 is read as delta-seconds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.models.network import ChannelLimits, ChannelStatus
from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.base import DeliveryRequest, DeliveryResult
from scheduled_posts.platforms.redaction import authorization_secrets, redact
from scheduled_posts.platforms.registry import check_length
from scheduled_posts.platforms.url_policy import (
    Resolver,
    UnresolvableDestinationError,
    UnsafeDestinationError,
    check_destination,
    system_resolver,
)
from scheduled_posts.platforms.webhook import (
    AttemptError,
    Transport,
    TransportError,
    Urllib3Transport,
    header,
    http_word,
    parse_retry_after,
    send_to_addresses,
)
from scheduled_posts.settings import Settings

#: A reset value at or above this (seconds) is an absolute Unix time, below it delta-seconds.
_EPOCH_THRESHOLD = 1_000_000_000

#: The transport of the network adapters: the webhooks' (``method=`` is ``GET`` or ``POST``).
MethodTransport = Transport


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

    def request(
        self,
        method: str,
        url: str,
        *,
        json_body: Any = None,
        query: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        secrets: Sequence[str] = (),
    ) -> HttpAnswer:
        """Send one request; ``json_body`` (any JSON value, ``None`` for no body) is sent as
        compact UTF-8 JSON; ``secrets`` (in the body) and ``Authorization`` are ``sent_secrets``.

        Raises
        ------
        DestinationRefusedError
            When the URL policy refuses ``url``.
        OutboundError
            When the host does not resolve, the connection fails or the exchange times out.
        """
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
        body = b""
        sent_headers = {
            "Host": destination.host_header,
            "Accept": "application/json",
            "User-Agent": self.user_agent,
        }
        if json_body is not None:
            body = json.dumps(json_body, ensure_ascii=False, separators=(",", ":")).encode()
            sent_headers["Content-Type"] = "application/json"
        sent_headers.update(headers or {})
        try:
            answer = send_to_addresses(
                destination,
                self.timeout_seconds,
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


def _reset_seconds(value: str | None, *, now: datetime) -> float | None:
    if value is None:
        return None
    text = value.strip()
    try:
        number = float(text)
    except ValueError:
        try:
            when = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return None
        if when.tzinfo is None:
            return None
        return max(0.0, (when - now).total_seconds())
    if number >= _EPOCH_THRESHOLD:
        return max(0.0, number - now.timestamp())
    return max(0.0, number)


def _remaining(answer: HttpAnswer) -> int | None:
    value = answer.header("X-RateLimit-Remaining") or answer.header("RateLimit-Remaining")
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def reset_seconds(answer: HttpAnswer, *, now: datetime) -> float | None:
    """Seconds from ``now`` until the rate-limit window resets (``X-RateLimit-Reset`` or
    ``RateLimit-Reset``), ``None`` when absent or malformed; never negative."""
    value = answer.header("X-RateLimit-Reset") or answer.header("RateLimit-Reset")
    return _reset_seconds(value, now=now)


def rate_limit_wait_seconds(answer: HttpAnswer, *, now: datetime) -> float | None:
    """How long the channel must wait before its next request, or ``None`` when it need not.

    A 429 waits ``Retry-After`` (seconds or an HTTP date, RFC 9110 section 10.2.3), else the
    reset header, else ``None`` (the caller's backoff decides). Any other answer waits until the
    reset only when the remaining budget is 0.
    """
    if answer.status == 429:
        retry_after = parse_retry_after(answer.header("Retry-After"), now=now)
        return retry_after if retry_after is not None else reset_seconds(answer, now=now)
    if _remaining(answer) == 0:
        wait = reset_seconds(answer, now=now)
        return wait if wait else None
    return None


class RateLimitBudget:
    """Per-channel "budget spent until <instant>", noted from each answer's rate-limit headers.

    Kept in the worker's memory (one Lambda container): a delivery of a channel whose budget is
    spent waits until the reset (``RetryableDeliveryError(rate_limited=True)``, which uses no
    attempt) without calling the network. Another container learns it from its own first answer
    (a 429 with ``Retry-After`` or the reset headers), so at most one request per container is
    spent on finding out.
    """

    def __init__(self) -> None:
        self._until: dict[str, datetime] = {}

    def note(self, channel_id: str, answer: HttpAnswer, *, now: datetime) -> float | None:
        """Record ``answer``'s headers; returns the wait in seconds when the budget is spent."""
        wait = rate_limit_wait_seconds(answer, now=now)
        if wait:
            self._until[channel_id] = now + timedelta(seconds=wait)
        else:
            self._until.pop(channel_id, None)
        return wait

    def check(self, channel_id: str, *, network: str, now: datetime) -> None:
        """Raise when ``channel_id``'s budget is spent at ``now``.

        Raises
        ------
        RetryableDeliveryError
            ``rate_limited=True`` with ``retry_after_seconds`` until the reset.
        """
        until = self._until.get(channel_id)
        if until is None:
            return
        if now >= until:
            del self._until[channel_id]
            return
        raise RetryableDeliveryError(
            f"rate_limited: {network} rate limit spent until {until.isoformat()}",
            rate_limited=True,
            retry_after_seconds=(until - now).total_seconds(),
        )


def retryable(network: str, exc: OutboundError) -> RetryableDeliveryError:
    """The retryable delivery error for a transport failure (no answer):
    ``<kind>: <network>: <detail>``."""
    return RetryableDeliveryError(f"{exc.kind}: {network}: {exc}")


def answer_error(answer: HttpAnswer, what: str) -> str:
    """``http_<status>: <what>: <the network's message>`` (an attempt error, docs/dispatch.md)."""
    return f"{http_word(answer.status)}: {what}: {error_message(answer)}"


def error_message(answer: HttpAnswer, *, limit: int = 300) -> str:
    """The network's own message (``error``/``message`` of a JSON body, or an excerpt of the
    body), credentials :func:`redact`-ed (quoted only here), at most ``limit`` characters."""
    data = answer.json_object()
    parts = [str(data[k]) for k in ("error", "message") if isinstance(data.get(k), str)]
    text = ": ".join(dict.fromkeys(parts)) or answer.body[: 4 * limit].decode("utf-8", "replace")
    return redact(" ".join(text.split()), answer.sent_secrets)[:limit] or "(no message)"


def rate_limited_error(
    network: str, answer: HttpAnswer, *, now: datetime, wait: float | None
) -> RetryableDeliveryError:
    """The error of a 429: ``rate_limited``, waiting ``Retry-After`` or the reset header (else
    ``wait``, what :meth:`RateLimitBudget.note` found), so no attempt is used up."""
    return RetryableDeliveryError(
        answer_error(answer, f"{network} rate limit"),
        http_status=429,
        rate_limited=True,
        retry_after_seconds=rate_limit_wait_seconds(answer, now=now) or wait,
    )


class NetworkAdapter:
    """What the network adapters share: outbound HTTP under the URL policy of ``settings``
    (:meth:`OutboundHttp.from_settings`), the channel's rate-limit budget, and the checks made
    before any request (:meth:`before_request`). Subclasses set ``platform``.

    Parameters
    ----------
    settings
        ``OUTBOUND_ALLOWED_ORIGINS``, the port rules and ``DELIVERY_TIMEOUT_SECONDS``.
    transport, resolver
        Injectable for tests.
    budget
        The rate-limit budget memory (default: a fresh :class:`RateLimitBudget`).
    """

    platform: str

    def __init__(
        self,
        settings: Settings,
        *,
        transport: MethodTransport | None = None,
        resolver: Resolver | None = None,
        budget: RateLimitBudget | None = None,
    ) -> None:
        self.http = OutboundHttp.from_settings(settings, transport=transport, resolver=resolver)
        self.budget = budget or RateLimitBudget()

    def gate(self, channel: Channel, *, now: datetime) -> DeliveryResult | None:
        """The final result when the channel needs new credentials
        (:func:`needs_reauthorization`), else ``None`` to go on.

        Raises
        ------
        RetryableDeliveryError
            ``rate_limited=True`` while the channel's budget is spent.
        """
        refused = needs_reauthorization(channel)
        if refused is None:
            self.budget.check(channel.channel_id, network=self.platform, now=now)
        return refused

    def too_long(
        self, channel: Channel, request: DeliveryRequest, limits: ChannelLimits | None
    ) -> DeliveryResult | None:
        """The ``failed`` result (reason ``too_long``, never truncated) when the text breaks
        ``limits``, else ``None``."""
        broken = check_length(self.platform, request.content, limits)
        if broken:
            return DeliveryResult(
                outcome="failed", reason="too_long", error=broken[0].message(channel.name)
            )
        return None


def needs_reauthorization(channel: Channel) -> DeliveryResult | None:
    """The failed result of a delivery to a channel whose credentials the network refused
    earlier (``needs_reauthorization`` until a ``PATCH`` replaces them), else ``None``: such a
    delivery fails at once, without calling the network, instead of being retried."""
    if channel.status != ChannelStatus.NEEDS_REAUTHORIZATION:
        return None
    return DeliveryResult(
        outcome="failed",
        reason="reauthorization_required",
        error=(
            f"channel {channel.name} needs new credentials"
            f" ({channel.status_reason or 'the network refused them'})"
        ),
    )
