"""The notifier: one notify-queue message -> one signed POST of the event to one
notification endpoint.

Request: ``POST <endpoint url>`` with the event's JSON as the body (compact UTF-8, the same
members as on the bus and in the feed), ``Content-Type: application/json``,
``Idempotency-Key: <event_id>`` (the same on every try and on a duplicate from the relay), the
Standard Webhooks headers with ``webhook-id: <event_id>`` and the deprecated ``X-Signature``
(``platforms/signing.py``), signed exactly as a webhook channel's
delivery (``platforms/signing.py``, :meth:`WebhookAdapter.post_signed`; the URL policy is
checked again at every send). The body's ``event_id`` is under the signature.

Outcomes:

* 2xx: delivered (the message is deleted).
* 429, 408, 425, 5xx, a timeout, a connection error, a name that does not resolve: tried again
  after a backoff, by hiding the message (``ChangeMessageVisibility``) for
  :func:`notify_retry_wait_seconds` and reporting it failed; the queue's ``maxReceiveCount`` is
  ``NOTIFY_MAX_ATTEMPTS``, so after that many tries SQS moves it to the notify DLQ (the last
  try hides it for 0 s so the move happens at once).
* any other status, or a URL the policy now refuses: no retry can help, the message goes to the
  DLQ at once (``make redrive NOTIFY=1`` sends DLQ messages back after the receiver is fixed).
* the endpoint was deleted: dropped.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import datetime
from enum import StrEnum
from typing import NoReturn

from scheduled_posts.clock import Clock, SystemClock, parse_instant
from scheduled_posts.data.notification_endpoints import NotificationEndpointRepository
from scheduled_posts.data.notify_queue import NotifyQueue
from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.lifecycle.backoff import Uniform, full_jitter
from scheduled_posts.lifecycle.metric_names import Metric
from scheduled_posts.models.notifications import NotifyMessage
from scheduled_posts.observability import logger, metrics
from scheduled_posts.platforms.retry_after import bounded_retry_after
from scheduled_posts.platforms.transport import StatusOutcome, Transport, header, outcome_for_status
from scheduled_posts.platforms.url_policy import Resolver, UnsafeDestinationError
from scheduled_posts.platforms.webhook import WebhookAdapter
from scheduled_posts.settings import Settings

#: ``User-Agent`` of every notification.
NOTIFY_USER_AGENT = "scheduled-posts-notify/1"


class NotifyOutcome(StrEnum):
    """What became of one notify message."""

    DELIVERED = "delivered"
    DEAD_LETTERED = "dead_lettered"
    DROPPED = "dropped"


class NotificationRetryError(Exception):
    """The notification will be tried again (the message is already hidden for its backoff):
    raised so the batch reports the record failed and SQS keeps it."""


def notification_body(message: NotifyMessage) -> bytes:
    """The request body: the event's JSON, compact UTF-8 (what the signature covers)."""
    return json.dumps(message.event, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def notify_retry_wait_seconds(
    attempt: int,
    *,
    max_attempts: int,
    base_seconds: float,
    cap_seconds: float,
    retry_after_seconds: float | None,
    uniform: Uniform = random.uniform,
) -> float:
    """Seconds to hide a message after failed try number ``attempt`` (1-based, the message's
    ``ApproximateReceiveCount``): full jitter (``lifecycle/backoff.py``) raised to the endpoint's
    ``Retry-After`` and at least 1 s, at most ``cap_seconds``; 0 after the last of
    ``max_attempts`` tries, so SQS moves the message to the DLQ at its next receive. Pure."""
    if attempt >= max_attempts:
        return 0.0
    wait = full_jitter(attempt, base_seconds=base_seconds, cap_seconds=cap_seconds, uniform=uniform)
    return min(cap_seconds, max(1.0, wait, retry_after_seconds or 0.0))


class Notifier:
    """Sends notify messages (see the module docstring).

    Parameters
    ----------
    settings
        ``NOTIFY_*`` settings, the URL policy's settings, ``RETRY_AFTER_*`` bounds.
    endpoints, queue
        The endpoints (read per message: a deleted endpoint or a rotated secret takes effect at
        once) and the notify queue (backoff, DLQ).
    transport, resolver
        The webhook adapter's (defaults: the production transport and DNS); the sender is a
        :class:`WebhookAdapter` bounded by ``NOTIFY_TIMEOUT_SECONDS``.
    clock, uniform
        Injectable time and jitter source.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        endpoints: NotificationEndpointRepository,
        queue: NotifyQueue,
        transport: Transport | None = None,
        resolver: Resolver | None = None,
        clock: Clock | None = None,
        uniform: Callable[[float, float], float] = random.uniform,
    ) -> None:
        self.settings = settings
        self.endpoints = endpoints
        self.queue = queue
        self.sender = WebhookAdapter(
            settings.model_copy(
                update={"DELIVERY_TIMEOUT_SECONDS": settings.NOTIFY_TIMEOUT_SECONDS}
            ),
            transport=transport,
            resolver=resolver,
            user_agent=NOTIFY_USER_AGENT,
        )
        self.clock = clock or SystemClock()
        self.uniform = uniform

    def process(
        self, message: NotifyMessage, *, receive_count: int, receipt_handle: str
    ) -> NotifyOutcome:
        """Send ``message`` (try number ``receive_count``).

        Raises
        ------
        NotificationRetryError
            After hiding the message for its backoff, when the try is worth repeating.
        """
        endpoint = self.endpoints.get(message.owner, message.endpoint_id)
        if endpoint is None or not endpoint.wants(message.event_type):
            logger.info("notification dropped: no such endpoint", endpoint_id=message.endpoint_id)
            return NotifyOutcome.DROPPED
        now = self.clock.now()
        try:
            answer = self.sender.post_signed(
                endpoint.url,
                notification_body(message),
                secrets=endpoint.signing_secrets(now),
                idempotency_key=message.event_id,
                now=now,
            )
        except UnsafeDestinationError as exc:
            return self._dead_letter(message, f"destination_refused: {exc}")
        except RetryableDeliveryError as exc:
            self._retry(message, receive_count, receipt_handle, str(exc), exc.retry_after_seconds)
        outcome = outcome_for_status(answer.status)
        if outcome is StatusOutcome.PUBLISHED:
            self._delivered(message, now)
            return NotifyOutcome.DELIVERED
        if outcome is StatusOutcome.FAILED:
            return self._dead_letter(message, f"http_{answer.status}")
        retry_after = bounded_retry_after(
            header(answer.headers, "Retry-After"),
            now=now,
            floor_seconds=self.settings.RETRY_AFTER_FLOOR_SECONDS,
            cap_seconds=self.settings.RETRY_AFTER_CAP_SECONDS,
        )
        self._retry(message, receive_count, receipt_handle, f"http_{answer.status}", retry_after)

    def _delivered(self, message: NotifyMessage, now: datetime) -> None:
        metrics.add_metric(
            name=Metric.NOTIFICATIONS_DELIVERED, unit=Metric.NOTIFICATIONS_DELIVERED.unit, value=1
        )
        occurred = message.event.get("occurred_at")
        if isinstance(occurred, str):
            lag = max(0.0, (now - parse_instant(occurred)).total_seconds())
            metrics.add_metric(
                name=Metric.NOTIFICATION_LAG_SECONDS,
                unit=Metric.NOTIFICATION_LAG_SECONDS.unit,
                value=lag,
            )
        logger.info(
            "notification delivered", event_id=message.event_id, endpoint_id=message.endpoint_id
        )

    def _retry(
        self,
        message: NotifyMessage,
        attempt: int,
        receipt_handle: str,
        error: str,
        retry_after_seconds: float | None,
    ) -> NoReturn:
        settings = self.settings
        wait = notify_retry_wait_seconds(
            attempt,
            max_attempts=settings.NOTIFY_MAX_ATTEMPTS,
            base_seconds=settings.NOTIFY_RETRY_BASE_SECONDS,
            cap_seconds=settings.NOTIFY_RETRY_CAP_SECONDS,
            retry_after_seconds=retry_after_seconds,
            uniform=self.uniform,
        )
        self.queue.postpone(receipt_handle, wait)
        last = attempt >= settings.NOTIFY_MAX_ATTEMPTS
        metric = Metric.NOTIFICATIONS_DEAD_LETTERED if last else Metric.NOTIFICATIONS_RETRIED
        metrics.add_metric(name=metric, unit=metric.unit, value=1)
        logger.warning(
            "notification failed",
            event_id=message.event_id,
            endpoint_id=message.endpoint_id,
            attempt=attempt,
            error=error[:300],
            next_try_seconds=None if last else wait,
        )
        raise NotificationRetryError(f"{error[:300]} (try {attempt})")

    def _dead_letter(self, message: NotifyMessage, error: str) -> NotifyOutcome:
        self.queue.dead_letter(message)
        metrics.add_metric(
            name=Metric.NOTIFICATIONS_DEAD_LETTERED,
            unit=Metric.NOTIFICATIONS_DEAD_LETTERED.unit,
            value=1,
        )
        logger.warning(
            "notification dead-lettered",
            event_id=message.event_id,
            endpoint_id=message.endpoint_id,
            error=error[:300],
        )
        return NotifyOutcome.DEAD_LETTERED
