"""The fault suite's outbox check (issue 14): after a seeded world has played, relay its posts
table's stream through the real relay handler while relay crashes are injected (before the bus
put, after it, and in the feed write), then check the relay's outputs against the commit log.

Promises checked, per world:

* every committed change's events (``derive_events`` over every stream record: moto appends a
  record only for a committed write, never for a failed condition or a cancelled transaction)
  reached the bus and the feed, each under exactly one event id; a duplicate only repeats an id
  with the same body;
* per post, the bus saw the events of the types ``BUS_EVENT_TYPES`` names in commit order
  (first occurrences), and no other type;
* nothing else reached the bus (no event for a change that was not committed);
* each post's last post event carries the status the API answers now;
* each user's poller, following ``GET /v1/events`` by its cursor after every relay poll (and
  once more when the last positions settled), sees each of the user's events exactly once and
  no one else's (decisions, "Feed positions");
* notifications (issue 14): every user of the world has an endpoint for every type, which
  answers 5xx, 429 or times out on some tries (at most :data:`MAX_ENDPOINT_FAILURES` per
  event); every expected event reaches its owner's endpoint, accepted once under its own
  ``event_id``, signed; a repeat carries the same id and body; none reaches the notify DLQ.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

from scheduled_posts.data.event_bus import EventBus
from scheduled_posts.feed_order import SETTLE_SECONDS
from scheduled_posts.lifecycle.events import derive_events
from scheduled_posts.models.events import BaseEvent, EventType, PostEvent, event_body
from scheduled_posts.models.notifications import NotificationEndpoint
from tests.support.notify import NotifyRig
from tests.support.outbox import build_relay
from tests.support.receiver import Answer, FakeReceiver

#: Chance that the relay crashes at each of its three points, per record try.
CRASH_RATE = 0.05
#: A record crashes at most this many times (so the relay always catches up).
MAX_CRASHES_PER_RECORD = 2
MAX_POLLS = 5_000
#: Polls without progress after which the relay counts as stuck (a record failing for good).
MAX_IDLE_POLLS = 20
#: Chance that a notification try fails (5xx, 429 or a timeout), and the most failures per
#: event (below ``NOTIFY_MAX_ATTEMPTS``, so every notification is delivered in the end).
ENDPOINT_FAILURE_RATE = 0.3
MAX_ENDPOINT_FAILURES = 3
_ENDPOINT_FAILURES = (
    Answer.error(503),
    Answer.error(500),
    Answer.rate_limited("2"),
    Answer.timeout(),
)


def _endpoint_url(user: str) -> str:
    return f"https://notify.example.com/{user}"


def _notifications(world: Any, rng: random.Random) -> tuple[NotifyRig, FakeReceiver]:
    """An endpoint per user of ``world`` for every event type, a flaky receiver behind them,
    and the rig that fans out to them and sends."""
    receiver = FakeReceiver(world.clock)
    failures: Counter[str] = Counter()

    def flaky(url: str, key: str | None, payload: dict[str, Any] | None) -> Answer | None:
        if key is None or failures[key] >= MAX_ENDPOINT_FAILURES:
            return None
        if rng.random() < ENDPOINT_FAILURE_RATE:
            failures[key] += 1
            return rng.choice(_ENDPOINT_FAILURES)
        return None

    receiver.responder = flaky
    rig = NotifyRig(
        world.settings,
        world.aws.sqs,
        world.clock,
        transport=receiver,
        resolver=receiver.resolver,
        uniform=lambda low, high: low,  # the shortest backoff (1 s): the world's time is spent
    )
    for user in sorted({p.user for p in world.posts}):
        endpoint = NotificationEndpoint(
            endpoint_id=f"notify-{user}",
            owner=user,
            url=_endpoint_url(user),
            event_types=tuple(sorted(e.value for e in EventType)),
            signing_secret=f"whsec_{user}",
            created_at=world.clock.now(),
        )
        rig.endpoints.put_new(endpoint, max_endpoints=100)
        receiver.add_secret(endpoint.url, endpoint.signing_secret)
    return rig, receiver


def _check_notifications(
    world: Any,
    rig: NotifyRig,
    receiver: FakeReceiver,
    expected: dict[str, BaseEvent],
    totals: Counter[str],
) -> list[str]:
    """Drain the notifier (1 s steps, so retries become visible), then compare what the
    endpoints accepted with the expected events."""
    totals["notifications_received"] = rig.drain(step_seconds=2, rounds=2_000)
    problems: list[str] = []
    users = {p.user for p in world.posts}
    want = {i for i, e in expected.items() if e.owner in users}
    accepted = receiver.accepted_keys()
    totals["notifications_expected"] = len(want)
    totals["notifications_accepted"] = len(accepted)
    totals["notification_failures_injected"] = sum(
        1 for r in receiver.requests if not r.answer.succeeds
    )
    totals["notification_duplicates"] = receiver.raw_resends()
    if accepted != want:
        problems.append(
            f"notify: {len(want - accepted)} event(s) never delivered "
            f"({sorted(want - accepted)[:3]}), {len(accepted - want)} never committed"
        )
    for key in accepted:
        request = receiver.accepted_request(key)
        assert request is not None
        owner = expected[key].owner if key in expected else None
        if request.url != _endpoint_url(str(owner)):
            problems.append(f"notify: event {key} reached {request.url}, owner {owner}")
        bodies = {r.body for r in receiver.requests_for(key)}
        if len(bodies) != 1:
            problems.append(f"notify: event {key} sent with {len(bodies)} bodies")
    if receiver.bad_signatures():
        problems.append(f"notify: {len(receiver.bad_signatures())} request(s) badly signed")
    if rig.dead_letters():
        problems.append("notify: notifications reached the notify DLQ")
    return problems


class RelayCrash(Exception):
    """An injected relay crash."""


class CrashingBus(EventBus):
    """The real bus, recording what it accepted; crashes before or after the put."""

    def __init__(
        self,
        bus_name: str,
        rng: random.Random,
        crashes: Counter[str],
        tamper: Callable[[list[BaseEvent]], list[BaseEvent]] | None = None,
    ) -> None:
        super().__init__(bus_name)
        self.rng = rng
        self.crashes = crashes
        self.sent: list[BaseEvent] = []
        self.tamper = tamper

    def _maybe(self, point: str, events: list[BaseEvent]) -> None:
        key = f"{events[0].event_id}"
        if self.crashes[key] < MAX_CRASHES_PER_RECORD and self.rng.random() < CRASH_RATE:
            self.crashes[key] += 1
            self.crashes[f"point_{point}"] += 1
            raise RelayCrash(point)

    def put(self, events: list[BaseEvent]) -> None:
        self._maybe("before_bus", events)
        given = self.tamper(events) if self.tamper is not None else events  # a broken relay
        super().put(given)
        self.sent.extend(given)
        self._maybe("after_bus", events)


def _committed(rig: Any) -> list[tuple[str, list[BaseEvent]]]:
    """(sequence number, events) of every stream record, read directly from the stream."""
    poller = rig.poller
    records: list[tuple[str, list[BaseEvent]]] = []
    shards = poller.streams.describe_stream(StreamArn=poller.arn)["StreamDescription"]["Shards"]
    from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import (
        DynamoDBRecord,
    )

    for shard in shards:
        iterator = poller.streams.get_shard_iterator(
            StreamArn=poller.arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        while iterator:
            page = poller.streams.get_records(ShardIterator=iterator, Limit=1000)
            if not page.get("Records"):
                break
            for raw in page["Records"]:
                body = DynamoDBRecord(raw).dynamodb
                assert body is not None
                derived = derive_events(body.old_image or None, body.new_image or None)
                records.append((str(body.sequence_number), derived))
            iterator = page.get("NextShardIterator")
    return records


def expected_events(
    committed: list[tuple[str, list[BaseEvent]]], problems: list[str]
) -> tuple[dict[str, BaseEvent], dict[str, list[str]]]:
    """(events by id, event ids per post or series in commit order) of the ``committed``
    (sequence number, derived events) records; an id derived by two committed changes (or twice
    by one) is added to ``problems``: ids name facts, so two changes never share one."""
    expected: dict[str, BaseEvent] = {}
    order: dict[str, list[str]] = {}
    for sequence, events in committed:
        for event in events:
            if event.event_id in expected:
                problems.append(
                    f"outbox: two committed changes derive event {event.event_id} "
                    f"(again at {sequence}: {json.dumps(event_body(event))[:200]})"
                )
            expected[event.event_id] = event
            order.setdefault(str(event.schedule_id or event.series_id), []).append(event.event_id)
    return expected, order


class FeedFollower:
    """Every user of ``world`` polling its event feed by the cursor, as a client would."""

    def __init__(self, world: Any) -> None:
        self.world = world
        self.cursors: dict[str, str | None] = dict.fromkeys(world.users)
        self.seen: dict[str, list[str]] = {user: [] for user in world.users}
        self.errors: list[str] = []

    def poll(self) -> None:
        for user in self.world.users:
            for _ in range(50):
                cursor = self.cursors[user]
                query = {"limit": "100", **({"after": cursor} if cursor else {})}
                answer = self.world._call(user, "GET", "/v1/events", query=query)
                if answer.status != 200:
                    self.errors.append(f"outbox: {user}'s feed poller got {answer.status}")
                    break
                items = answer.json["items"]
                self.seen[user] += [i["event"]["event_id"] for i in items]
                self.cursors[user] = answer.json["next_cursor"]
                if not items:
                    break

    def problems(self, expected: dict[str, BaseEvent]) -> list[str]:
        """After the last positions settled: each user saw its events once, nothing else."""
        self.world.clock.advance(SETTLE_SECONDS)
        self.poll()
        found: list[str] = self.errors[:3]
        for user, seen in self.seen.items():
            owner = self.world.users[user].sub
            want = {i for i, e in expected.items() if e.owner == owner}
            counts = Counter(seen)
            if set(counts) != want or max(counts.values(), default=1) > 1:
                missing, extra = len(want - set(counts)), len(set(counts) - want)
                repeated = sum(1 for n in counts.values() if n > 1)
                found.append(
                    f"outbox: {user}'s feed poller: {missing} events missing, {extra} foreign, "
                    f"{repeated} seen twice"
                )
        return found


def check_outbox(
    world: Any,
    *,
    tamper: Callable[[list[BaseEvent]], list[BaseEvent]] | None = None,
    notify_tamper: Callable[[list[BaseEvent]], list[BaseEvent]] | None = None,
    bus_event_types: str | None = None,
    keep: dict[str, BaseEvent] | None = None,
) -> tuple[Counter[str], list[str]]:
    """Relay ``world``'s stream with crashes injected; (totals, problems). ``tamper`` rewrites
    what the bus is given, ``notify_tamper`` what the notification fan-out is given (to show
    that the check catches a relay that loses or reorders); ``bus_event_types`` replaces the
    world's ``BUS_EVENT_TYPES``; ``keep`` gains the committed events by id."""
    totals: Counter[str] = Counter()
    problems: list[str] = []
    crashes: Counter[str] = Counter()
    rng = random.Random(f"outbox-{world.seed}")
    bus = CrashingBus(world.settings.EVENT_BUS_NAME, rng, crashes, tamper)
    settings = world.settings
    if bus_event_types is not None:
        settings = settings.model_copy(update={"BUS_EVENT_TYPES": bus_event_types})
    rig = build_relay(settings, world.clock, bus=bus)
    wanted = settings.bus_event_types
    notify, receiver = _notifications(world, random.Random(f"notify-{world.seed}"))
    fanout = notify.fanout
    rig.relay.notify = (
        fanout if notify_tamper is None else (lambda events: fanout(notify_tamper(events)))
    )
    feed_put = rig.feed.put

    def crashing_feed_put(event: BaseEvent, **kwargs: Any) -> None:
        key = f"feed-{event.event_id}"
        if crashes[key] < MAX_CRASHES_PER_RECORD and rng.random() < CRASH_RATE:
            crashes[key] += 1
            crashes["point_feed"] += 1
            raise RelayCrash("feed")
        feed_put(event, **kwargs)

    rig.feed.put = crashing_feed_put  # type: ignore[method-assign]
    follower = FeedFollower(world)
    idle = 0
    for _ in range(MAX_POLLS):
        idle = 0 if rig.poller.poll() else idle + 1
        follower.poll()
        if rig.poller.caught_up():
            break
        if idle >= MAX_IDLE_POLLS:
            problems.append(f"outbox: the relay is stuck at {rig.poller.checkpoints}")
            break
    else:
        problems.append(f"outbox: the relay did not catch up in {MAX_POLLS} polls")
    for point in ("before_bus", "after_bus", "feed"):
        totals[f"relay_crash_{point}"] = crashes[f"point_{point}"]

    expected, order = expected_events(_committed(rig), problems)
    if keep is not None:
        keep.update(expected)
    totals["events_expected"] = len(expected)
    totals["events_sent"] = len(bus.sent)
    seen: dict[str, list[str]] = {}
    for event in bus.sent:
        want = expected.get(event.event_id)
        if want is None:
            problems.append(
                f"outbox: event {event.event_id} ({event_body(event)}) was committed by no change"
            )
            continue
        if event_body(event) != event_body(want):
            problems.append(f"outbox: event {event.event_id} sent with two bodies")
        if wanted is not None and str(event.type) not in wanted:  # type: ignore[attr-defined]
            problems.append(f"outbox: event {event.event_id} of a type the bus does not carry")
        ids = seen.setdefault(str(event.schedule_id or event.series_id), [])
        if event.event_id not in ids:
            ids.append(event.event_id)
    totals["events_duplicated"] = len(bus.sent) - sum(len(v) for v in seen.values())
    for key, ids in order.items():
        on_bus = [i for i in ids if wanted is None or str(expected[i].type) in wanted]  # type: ignore[attr-defined]
        if seen.get(key, []) != on_bus:
            problems.append(f"outbox: post {key}: sent {seen.get(key)} but committed {on_bus}")
    now = world.clock.now().timestamp()
    for post in world.posts:
        if post.schedule_id is None:
            continue
        stored = [s.event for s in rig.feed.post_events(post.schedule_id, now_epoch=now)]
        want_ids = order.get(post.schedule_id, [])
        if [e["event_id"] for e in stored] != want_ids:
            problems.append(f"outbox: post {post.schedule_id}: feed order differs from commits")
        post_events = [expected[i] for i in want_ids if isinstance(expected[i], PostEvent)]
        got = world._call(post.user, "GET", f"/v1/scheduled-posts/{post.schedule_id}")
        if post_events and got.status == 200 and post_events[-1].status != got.json["status"]:  # type: ignore[attr-defined]
            last = json.dumps(event_body(post_events[-1]))[:200]
            problems.append(
                f"outbox: post {post.schedule_id}: last event {last}, status {got.json['status']}"
            )
    problems += _check_notifications(world, notify, receiver, expected, totals)
    problems += follower.problems(expected)
    return totals, problems
