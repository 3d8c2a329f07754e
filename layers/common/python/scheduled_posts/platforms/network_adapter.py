"""What the network adapters (Mastodon, Bluesky) share above the HTTP client
(``platforms/http.py``): the adapter base with its rate-limit gate and length check, and the
attempt-error messages in the words of webhook attempt errors (docs/dispatch.md).
"""

from __future__ import annotations

import time
from datetime import datetime

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.models.network import ChannelLimits, ChannelStatus
from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.base import DeliveryRequest, DeliveryResult
from scheduled_posts.platforms.deadline import AttemptDeadline, Timer
from scheduled_posts.platforms.http import HttpAnswer, MethodTransport, OutboundError, OutboundHttp
from scheduled_posts.platforms.rate_limits import RateLimitBudget, rate_limit_wait_seconds
from scheduled_posts.platforms.redaction import redact
from scheduled_posts.platforms.registry import check_length
from scheduled_posts.platforms.transport import http_word
from scheduled_posts.platforms.url_policy import Resolver
from scheduled_posts.settings import Settings


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
    timer
        The clock of the attempt deadline, float seconds (default :func:`time.monotonic`).
    """

    platform: str

    def __init__(
        self,
        settings: Settings,
        *,
        transport: MethodTransport | None = None,
        resolver: Resolver | None = None,
        budget: RateLimitBudget | None = None,
        timer: Timer = time.monotonic,
    ) -> None:
        self.http = OutboundHttp.from_settings(settings, transport=transport, resolver=resolver)
        self.budget = budget or RateLimitBudget()
        self.timer: Timer = timer

    def attempt_http(self) -> OutboundHttp:
        """The outbound HTTP of one delivery attempt: all its requests within one deadline of
        ``DELIVERY_TIMEOUT_SECONDS`` (decision "One deadline per network delivery attempt")."""
        return self.http.within(AttemptDeadline(self.http.timeout_seconds, timer=self.timer))

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
