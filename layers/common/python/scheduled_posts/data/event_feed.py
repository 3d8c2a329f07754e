"""The event feed: outcome events stored in ``PostsTable`` for ``GET /v1/events`` and
``GET /v1/scheduled-posts/{id}/events`` (``docs/events.md``).

Items (one per event, written by the relay, never by the API or the worker):

* ``pk = POST#<schedule_id>`` (``SERIES#<series_id>`` for series events),
  ``sk = EVENT#<stream sequence number, 40 digits>#<position in the record, 2 digits>``: the
  post's trail in commit order (one Query of the post's partition, like its attempt rows);
* ``gsi1pk = OWNER#<owner>#EVENT``, ``gsi1sk = <occurred_at>#<sequence><position>`` on the
  existing ``by_owner`` index: the caller's feed in ``occurred_at`` order;
* ``event`` (the JSON body), ``event_id``, ``type``, ``trace_id`` (the stream record's
  ``eventID``), ``expires_at`` (TTL, ``RETENTION_DAYS``).

A put of the same event again writes the same item (same key, same body): the relay may repeat.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from boto3.dynamodb.conditions import Key

from scheduled_posts import keys
from scheduled_posts.clock import format_instant
from scheduled_posts.data.aws import TableStore
from scheduled_posts.models.events import BaseEvent, event_body
from scheduled_posts.tables import BY_OWNER_INDEX

EVENT_PREFIX = "EVENT#"
#: DynamoDB stream sequence numbers have 21 to 40 digits (DynamoDB Streams API Reference,
#: ``StreamRecord.SequenceNumber``); padded to 40 they sort as numbers.
SEQUENCE_DIGITS = 40


def owner_events_gsi_pk(owner: str) -> str:
    return f"OWNER#{owner}#EVENT"


def feed_position(event: BaseEvent, sequence_number: str, position: int) -> str:
    """``<occurred_at>#<sequence, 40 digits><position, 2 digits>``: the feed's sort key (it also
    satisfies the cursor's key format, ``logic/cursor.py``)."""
    sequence = f"{int(sequence_number):0{SEQUENCE_DIGITS}d}"
    return f"{format_instant(event.occurred_at)}#{sequence}{position:02d}"


@dataclass(frozen=True)
class StoredEvent:
    """An event as the feed returns it: the JSON ``event`` and the stream record's ``trace_id``."""

    event: dict[str, Any]
    trace_id: str
    position: str


@dataclass(frozen=True)
class EventPage:
    """A page of the caller's feed; ``last_key`` is None at the end."""

    events: list[StoredEvent]
    last_key: str | None


def _partition(event: BaseEvent) -> str:
    if event.schedule_id is not None:
        return keys.post_pk(event.schedule_id)
    return f"SERIES#{event.series_id}"


def _stored(item: dict[str, Any]) -> StoredEvent:
    return StoredEvent(
        event=json.loads(item["event"]), trace_id=item.get("trace_id", ""), position=item["gsi1sk"]
    )


class EventFeed(TableStore):
    """Writes and reads the feed items of ``PostsTable`` (``Settings.POSTS_TABLE_NAME``)."""

    def put(
        self,
        event: BaseEvent,
        *,
        sequence_number: str,
        position: int,
        trace_id: str,
        expires_at: int,
    ) -> None:
        """Store ``event``, the ``position``-th event of the stream record ``sequence_number``
        (``trace_id`` its ``eventID``); ``expires_at`` epoch seconds. Repeating it is harmless."""
        seq = f"{int(sequence_number):0{SEQUENCE_DIGITS}d}#{position:02d}"
        self.table.put_item(
            Item={
                "pk": _partition(event),
                "sk": f"{EVENT_PREFIX}{seq}",
                "gsi1pk": owner_events_gsi_pk(event.owner),
                "gsi1sk": feed_position(event, sequence_number, position),
                "event_id": event.event_id,
                "type": str(getattr(event, "type", "")),
                "event": json.dumps(event_body(event), separators=(",", ":")),
                "trace_id": trace_id,
                "expires_at": expires_at,
            }
        )

    def post_events(self, schedule_id: str, *, now_epoch: float) -> list[StoredEvent]:
        """Every unexpired event of one post in commit order (consistent, paginated Query)."""
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": Key("pk").eq(keys.post_pk(schedule_id))
            & Key("sk").begins_with(EVENT_PREFIX),
            "ConsistentRead": True,
        }
        events: list[StoredEvent] = []
        while True:
            page = self.table.query(**kwargs)
            events.extend(
                _stored(i) for i in page.get("Items", []) if int(i["expires_at"]) > now_epoch
            )
            if "LastEvaluatedKey" not in page:
                return events
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def owner_events(self, owner: str, *, after: str | None, limit: int) -> EventPage:
        """Up to ``limit`` of ``owner``'s events after feed position ``after`` (GSI ``by_owner``,
        eventually consistent), oldest first."""
        condition = Key("gsi1pk").eq(owner_events_gsi_pk(owner))
        if after is not None:
            condition = condition & Key("gsi1sk").gt(after)
        page = self.table.query(
            IndexName=BY_OWNER_INDEX.name, KeyConditionExpression=condition, Limit=limit
        )
        items = page.get("Items", [])
        last = page.get("LastEvaluatedKey")
        return EventPage(
            events=[_stored(i) for i in items], last_key=last["gsi1sk"] if last else None
        )
