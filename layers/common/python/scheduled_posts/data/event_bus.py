"""The stack's EventBridge custom bus: ``PutEvents`` of outcome events (``docs/events.md``)."""

from __future__ import annotations

import json
from typing import Any

from scheduled_posts.data.aws import events_client
from scheduled_posts.models.events import BaseEvent, event_body

#: ``source`` of every event the service puts on its bus.
EVENT_SOURCE = "scheduled-posts"
#: Entries per ``PutEvents`` call (Amazon EventBridge API Reference, ``PutEvents``: 1-10).
PUT_EVENTS_MAX_ENTRIES = 10


class EventBusError(Exception):
    """EventBridge refused some entries (``failed``: their error codes); the caller retries."""

    def __init__(self, failed: list[str]) -> None:
        super().__init__(f"PutEvents refused {len(failed)} entries: {sorted(set(failed))}")
        self.failed = failed


class EventBus:
    """Puts events on the bus ``bus_name`` (``Settings.EVENT_BUS_NAME``) with an injectable
    ``client`` (boto3 ``events``)."""

    def __init__(self, bus_name: str, *, client: Any | None = None) -> None:
        self.bus_name = bus_name
        self._client = client

    @property
    def client(self) -> Any:
        return self._client if self._client is not None else events_client()

    def put(self, events: list[BaseEvent]) -> None:
        """Put ``events`` in order, 10 per call: ``source`` ``scheduled-posts``, ``detail-type``
        the event's type, ``detail`` its JSON, ``time`` its ``occurred_at``.

        Raises
        ------
        EventBusError
            When EventBridge refused an entry (``FailedEntryCount`` > 0); entries of the same
            call that were accepted are put again on the retry (consumers dedupe by
            ``event_id``).
        """
        for start in range(0, len(events), PUT_EVENTS_MAX_ENTRIES):
            chunk = events[start : start + PUT_EVENTS_MAX_ENTRIES]
            entries = [
                {
                    "Source": EVENT_SOURCE,
                    "DetailType": str(getattr(e, "type", "")),
                    "Detail": json.dumps(event_body(e), separators=(",", ":")),
                    "EventBusName": self.bus_name,
                    "Time": e.occurred_at,
                    "Resources": [],
                }
                for e in chunk
            ]
            response = self.client.put_events(Entries=entries)
            if response.get("FailedEntryCount", 0):
                raise EventBusError(
                    [r.get("ErrorCode", "?") for r in response["Entries"] if "ErrorCode" in r]
                )
