"""The event feed: outcome events stored in ``PostsTable`` for ``GET /v1/events`` and
``GET /v1/scheduled-posts/{id}/events`` (``docs/events.md``, ``docs/data-model.md``).

Two items per event, written by the relay (never by the API or the worker), the trail item
first:

* the post's **trail**: ``pk = POST#<schedule_id>`` (``SERIES#<series_id>`` for series
  events, ``OWNER#<sub>`` for an upload's: ``BaseEvent.trail_pk``),
  ``sk = EVENT#<stream sequence number, 40 digits>#<index in the record, 2 digits>``: one Query
  of the post's partition in commit order; its key is fixed by the stream record, so a
  repeated record finds it (the relay's duplicate check);
* the owner's **feed**: ``pk = FEED#<owner>``, ``sk = <position, 20 digits>`` (a per-owner
  counter, ``data/feed_sequence.py``): one consistent Query in the order the relay stored
  them (``feed_order.py`` says which items a reader may hand out).

Both carry ``event`` (the JSON body), ``event_id``, ``type``, ``trace_id`` (the stream record's
``eventID``), ``position``, ``taken_at_ms`` (when the relay took the position) and
``expires_at`` (TTL, ``RETENTION_DAYS``); the feed item also ``first`` (the first position of
its counter). No index copy.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from boto3.dynamodb.conditions import Key

from scheduled_posts import keys
from scheduled_posts.clock import Clock, SystemClock
from scheduled_posts.data.aws import TableStore
from scheduled_posts.feed_order import Placed, position_key
from scheduled_posts.models.events import BaseEvent, event_body

EVENT_PREFIX = "EVENT#"
FEED_PREFIX = "FEED#"
#: DynamoDB stream sequence numbers have 21 to 40 digits (DynamoDB Streams API Reference,
#: ``StreamRecord.SequenceNumber``); padded to 40 they sort as numbers.
SEQUENCE_DIGITS = 40


def feed_pk(owner: str) -> str:
    """The partition of ``owner``'s feed."""
    return f"{FEED_PREFIX}{owner}"


def trail_key(event: BaseEvent, sequence_number: str, index: int) -> dict[str, str]:
    """The trail item's key of the ``index``-th event of stream record ``sequence_number``."""
    pk = event.trail_pk()
    return {"pk": pk, "sk": f"{EVENT_PREFIX}{int(sequence_number):0{SEQUENCE_DIGITS}d}#{index:02d}"}


@dataclass(frozen=True)
class StoredEvent:
    """An event as the feed returns it: the JSON ``event``, the stream record's ``trace_id``,
    its feed ``position`` (0 for items stored before feed positions), when the relay took it
    (``taken_at``, epoch seconds) and whether it is the ``first`` of its counter."""

    event: dict[str, Any]
    trace_id: str
    position: int = 0
    taken_at: float = 0.0
    first: bool = False

    @property
    def placed(self) -> Placed:
        return Placed(position=self.position, taken_at=self.taken_at, first=self.first)


@dataclass(frozen=True)
class TrailEntry:
    """What a trail item says about its feed item."""

    position: int
    taken_at: float


@dataclass(frozen=True)
class EventPage:
    """Items of the caller's feed above a position, ascending (``more``: the Query had more)."""

    events: list[StoredEvent]
    more: bool


def _stored(item: dict[str, Any]) -> StoredEvent:
    return StoredEvent(
        event=json.loads(item["event"]),
        trace_id=item.get("trace_id", ""),
        position=int(item.get("position", 0)),
        taken_at=int(item.get("taken_at_ms", 0)) / 1000,
        first=bool(item.get("first", False)),
    )


class EventFeed(TableStore):
    """Writes and reads the feed items of ``PostsTable`` (``Settings.POSTS_TABLE_NAME``);
    ``clock`` is the readers' (``logic/event_feed.py`` judges settled items by it)."""

    def __init__(
        self, table_name: str, *, table: Any | None = None, clock: Clock | None = None
    ) -> None:
        super().__init__(table_name, table=table)
        self.clock = clock or SystemClock()

    def trail_entry(self, event: BaseEvent, sequence_number: str, index: int) -> TrailEntry | None:
        """The trail item of that event, if stored (consistent read)."""
        item = self.table.get_item(
            Key=trail_key(event, sequence_number, index),
            ConsistentRead=True,
            ProjectionExpression="#p, taken_at_ms",
            ExpressionAttributeNames={"#p": "position"},
        ).get("Item")
        if item is None or "position" not in item:
            return None
        return TrailEntry(position=int(item["position"]), taken_at=int(item["taken_at_ms"]) / 1000)

    def in_feed(self, owner: str, position: int) -> bool:
        """Whether ``owner``'s feed holds an item at ``position`` (consistent read)."""
        key = {"pk": feed_pk(owner), "sk": position_key(position)}
        return "Item" in self.table.get_item(
            Key=key, ConsistentRead=True, ProjectionExpression="pk"
        )

    def put(
        self,
        event: BaseEvent,
        *,
        sequence_number: str,
        index: int,
        position: int,
        taken_at: float,
        first: bool,
        trace_id: str,
        expires_at: int,
    ) -> None:
        """Store ``event`` (the ``index``-th of stream record ``sequence_number``) at feed
        ``position`` (taken at ``taken_at``, epoch seconds): its trail item, then its feed item.
        Repeating it writes the same two items."""
        body = {
            "event_id": event.event_id,
            "type": str(getattr(event, "type", "")),
            "event": json.dumps(event_body(event), separators=(",", ":")),
            "trace_id": trace_id,
            "position": position,
            "taken_at_ms": int(taken_at * 1000),
            "expires_at": expires_at,
        }
        self.table.put_item(Item={**trail_key(event, sequence_number, index), **body})
        key = {"pk": feed_pk(event.owner), "sk": position_key(position)}
        self.table.put_item(Item={**key, **body, "first": first})

    def remove(self, event: BaseEvent, *, sequence_number: str, index: int) -> None:
        """Delete that event's feed item (at the position its trail item names) and trail item."""
        entry = self.trail_entry(event, sequence_number, index)
        if entry is not None:
            key = {"pk": feed_pk(event.owner), "sk": position_key(entry.position)}
            self.table.delete_item(Key=key)
        self.table.delete_item(Key=trail_key(event, sequence_number, index))

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

    def owner_events(self, owner: str, *, after: int | None, limit: int) -> EventPage:
        """Up to ``limit`` of ``owner``'s feed items above position ``after``, ascending (one
        strongly consistent Query of the owner's partition)."""
        condition = Key("pk").eq(feed_pk(owner))
        if after is not None:
            condition = condition & Key("sk").gt(position_key(after))
        page = self.table.query(KeyConditionExpression=condition, Limit=limit, ConsistentRead=True)
        return EventPage(
            events=[_stored(i) for i in page.get("Items", [])],
            more="LastEvaluatedKey" in page,
        )
