"""The ``webhook`` platform: a signed JSON POST to the channel's URL (the webhook contract of
``docs/api.md``).

Request::

    POST <channel url>
    Content-Type: application/json
    Idempotency-Key: <schedule_id>:<channel_id>        (the same on every retry)
    webhook-id, webhook-timestamp, webhook-signature, X-Signature  (platforms/signing.py)
    User-Agent: scheduled-posts-webhook/1

    {"schedule_id", "channel_id", "content", "media_ids", "publish_at", "attempt",
     "idempotency_key", "media", "parts"}   ("media" only with resolved media:
     platforms/webhook_media.py; "parts" only for a thread: its replies after "content",
     each {"content", "media_ids", "media"}, "media" again only with resolved media)

Safety at send time: the URL is checked again with
:func:`~scheduled_posts.platforms.url_policy.check_destination` (a fresh DNS answer), and the
transport connects to the checked address itself (no second lookup, so a DNS answer that
changes between check and connect cannot reach a private address), sending the original
``Host`` header and verifying TLS against the host name (SNI + certificate hostname). No
redirect is followed, the whole exchange is bounded by ``DELIVERY_TIMEOUT_SECONDS`` and at
most :data:`~scheduled_posts.platforms.transport.MAX_RESPONSE_BYTES` of the response are read
(the transport: ``platforms/transport.py``).

The body's ``idempotency_key`` and ``webhook-id`` equal the header's, under the signature.

Outcomes by status: :func:`~scheduled_posts.platforms.transport.outcome_for_status` (the table
is in ``docs/dispatch.md``). Attempt errors start with one word of a stable vocabulary
(:class:`AttemptError`): ``connect_failed``, ``timeout``, ``tls_error``, ``dns_error``,
``connection_lost``, ``destination_refused`` or ``http_<status>``, never an HTTP library's
exception name.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from scheduled_posts.clock import format_instant
from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.answers import receipt_from
from scheduled_posts.platforms.base import DeliveryRequest, DeliveryResult, MediaObjects
from scheduled_posts.platforms.retry_after import bounded_retry_after
from scheduled_posts.platforms.signing import signature_headers
from scheduled_posts.platforms.transport import (
    AttemptError,
    StatusOutcome,
    Transport,
    TransportError,
    TransportResponse,
    Urllib3Transport,
    header,
    http_word,
    outcome_for_status,
    send_to_addresses,
)
from scheduled_posts.platforms.url_policy import (
    Destination,
    Resolver,
    UnresolvableDestinationError,
    UnsafeDestinationError,
    check_destination,
    system_resolver,
)
from scheduled_posts.platforms.webhook_media import (
    MediaStoreMissingError,
    media_entries,
    part_media_entries,
)
from scheduled_posts.settings import Settings

#: ``User-Agent`` of every delivery.
USER_AGENT = "scheduled-posts-webhook/1"
#: Longest ``remote_id`` kept, in characters.
MAX_REMOTE_ID_CHARS = 256
#: Longest excerpt of a response body kept in ``DeliveryResult.error``, in characters.
MAX_ERROR_EXCERPT_CHARS = 200


def build_body(
    request: DeliveryRequest,
    media: list[dict[str, Any]] | None = None,
    part_media: Sequence[list[dict[str, Any]] | None] = (),
) -> bytes:
    """The JSON body, UTF-8, compact: ``schedule_id``, ``channel_id``, ``content``,
    ``media_ids`` (list), ``publish_at`` (``YYYY-MM-DDTHH:MM:SS.mmmZ``), ``attempt`` (int),
    ``idempotency_key`` (the header's value, here under the signature), and ``media`` when
    given (``webhook_media.media_entries``); a thread's ``parts`` (``[{content, media_ids}]``,
    the replies after ``content``) when it has any, each with its ``media`` when
    ``part_media`` gives it (``webhook_media.part_media_entries``, by part)."""
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
        for entry, entries in zip(payload["parts"], part_media, strict=False):
            if entries:
                entry["media"] = entries
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
            body = build_body(
                request,
                media_entries(request, self.media, now=now),
                part_media_entries(request, self.media, now=now),
            )
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
        endpoints' sender (decision "The notifier reuses the webhook adapter's sender"): the URL
        policy checked again, the same headers (``Idempotency-Key`` = ``webhook-id``, one ``v1`` per
        secret), the same transport bounds. Returns the answer whatever its status.

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
