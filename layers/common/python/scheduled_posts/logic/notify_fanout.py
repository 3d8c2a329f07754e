"""The relay's notification fan-out: each event of a committed change, once per
endpoint of its owner that names the event's type, onto the notify queue.

Called by :class:`scheduled_posts.logic.relay.Relay` after the bus and the feed have the
events. Only SQS sends happen here, never an HTTP request to an endpoint, so a slow or failing
endpoint cannot hold up the relay (nor the publishing that wrote the change): the notifier
Lambda sends them (``logic/notifier.py``). A refused send raises, and the stream gives the
record to the relay again; events keep their ids, so a notification sent twice carries the
same ``Idempotency-Key``.
"""

from __future__ import annotations

from collections.abc import Sequence

from scheduled_posts.data.notification_endpoints import NotificationEndpointRepository
from scheduled_posts.data.notify_queue import NotifyQueue
from scheduled_posts.lifecycle.metric_names import Metric
from scheduled_posts.models.events import BaseEvent, event_body
from scheduled_posts.models.notifications import NotifyMessage
from scheduled_posts.observability import logger, metrics


class NotificationFanout:
    """``fanout(events)`` queues one :class:`NotifyMessage` per (event, matching endpoint).

    Parameters
    ----------
    endpoints
        The owners' endpoints (one Query per owner per call).
    queue
        The notify queue.
    """

    def __init__(self, *, endpoints: NotificationEndpointRepository, queue: NotifyQueue) -> None:
        self.endpoints = endpoints
        self.queue = queue

    def messages(self, events: Sequence[BaseEvent]) -> list[NotifyMessage]:
        """The messages for ``events``, in event order then endpoint id order."""
        by_owner: dict[str, list] = {}
        messages: list[NotifyMessage] = []
        for event in events:
            if event.owner not in by_owner:
                by_owner[event.owner] = self.endpoints.list(event.owner)
            body = event_body(event)
            kind = str(body.get("type", ""))
            messages.extend(
                NotifyMessage(endpoint_id=e.endpoint_id, owner=event.owner, event=body)
                for e in by_owner[event.owner]
                if e.wants(kind)
            )
        return messages

    def __call__(self, events: list[BaseEvent]) -> None:
        """Queue the notifications of ``events``.

        Raises
        ------
        QueueSendError
            When SQS refused one (the relay's record is then retried whole).
        """
        messages = self.messages(events)
        if not messages:
            return
        self.queue.send(messages)
        metrics.add_metric(
            name=Metric.NOTIFICATIONS_ENQUEUED,
            unit=Metric.NOTIFICATIONS_ENQUEUED.unit,
            value=len(messages),
        )
        logger.info(
            "notifications queued",
            event_ids=sorted({m.event_id for m in messages}),
            endpoints=len({m.endpoint_id for m in messages}),
        )
