"""Outcome events end to end on moto: the fire path writes posts, the relay reads the posts
table's stream (polled as Lambda's event source mapping would) and puts the events on the
EventBridge bus (tapped with a rule into an SQS queue) and into the feed."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import boto3
import pytest

from scheduled_posts.data.event_bus import EventBus
from tests.integration.dispatch.conftest import FirePath
from tests.support.factories import cancel_post
from tests.support.outbox import build_relay


class FlakyBus(EventBus):
    """The real bus, failing the first ``failures`` puts (a relay crash mid-batch)."""

    def __init__(self, bus_name: str, failures: int) -> None:
        super().__init__(bus_name)
        self.failures = failures

    def put(self, events: list[Any]) -> None:
        if self.failures > 0:
            self.failures -= 1
            raise ConnectionError("bus unreachable")
        super().put(events)


class Outbox:
    """The relay over the fire path's posts table, and a tap on the bus."""

    def __init__(
        self, fire: FirePath, bus: EventBus | None = None, bus_event_types: str | None = "*"
    ) -> None:
        """``bus_event_types``: the relay's ``BUS_EVENT_TYPES`` (None: the default)."""
        settings = fire.settings
        if bus_event_types is not None:
            settings = settings.model_copy(update={"BUS_EVENT_TYPES": bus_event_types})
        sqs = fire.aws.sqs
        self.tap = sqs.create_queue(QueueName="bus-tap")["QueueUrl"]
        tap_arn = sqs.get_queue_attributes(QueueUrl=self.tap, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
        events = boto3.client("events", region_name="us-east-1")
        events.put_rule(
            Name="tap",
            EventBusName=settings.EVENT_BUS_NAME,
            EventPattern=json.dumps({"source": ["scheduled-posts"]}),
        )
        events.put_targets(
            Rule="tap", EventBusName=settings.EVENT_BUS_NAME, Targets=[{"Id": "q", "Arn": tap_arn}]
        )
        rig = build_relay(settings, fire.clock, bus=bus)
        self.feed, self.relay, self.poller = rig.feed, rig.relay, rig.poller
        self.sqs = sqs
        self.fire = fire

    def bus_events(self) -> list[dict[str, Any]]:
        """Every event the bus delivered to the tap, in arrival order."""
        got: list[dict[str, Any]] = []
        while True:
            messages = self.sqs.receive_message(QueueUrl=self.tap, MaxNumberOfMessages=10).get(
                "Messages", []
            )
            if not messages:
                return got
            for message in messages:
                got.append(json.loads(message["Body"]))
                self.sqs.delete_message(QueueUrl=self.tap, ReceiptHandle=message["ReceiptHandle"])

    def trail(self, schedule_id: str) -> list[dict[str, Any]]:
        now = self.fire.clock.now().timestamp()
        return [s.event for s in self.feed.post_events(schedule_id, now_epoch=now)]


@pytest.fixture
def outbox(fire: FirePath) -> Outbox:
    return Outbox(fire)


def test_outbox_published_post_events_reach_bus_and_feed_in_order(
    fire: FirePath, outbox: Outbox
) -> None:
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(seconds=30), ["c1"])
    fire.driver.run_for(120)
    outbox.poller.drain()
    trail = outbox.trail(post.schedule_id)
    assert [e["type"] for e in trail] == [
        "post.scheduled",
        "post.claimed",
        "delivery.published",
        "post.published",
    ]
    assert trail[-1]["publish_lag_seconds"] >= 0
    on_bus = outbox.bus_events()
    assert [(e["detail-type"], e["detail"]["event_id"]) for e in on_bus] == [
        (e["type"], e["event_id"]) for e in trail
    ]
    assert {e["source"] for e in on_bus} == {"scheduled-posts"}


def test_outbox_bus_carries_only_the_default_outcome_types_feed_and_notify_all(
    fire: FirePath,
) -> None:
    # Given the relay with the default BUS_EVENT_TYPES, notifications recorded
    outbox = Outbox(fire, bus_event_types=None)
    notified: list[str] = []
    outbox.relay.notify = lambda events: notified.extend(str(e.type) for e in events)  # type: ignore[attr-defined]
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(seconds=30), ["c1"])
    # When it is published and relayed
    fire.driver.run_for(120)
    outbox.poller.drain()
    # Then the bus has only the outcome, the feed and the notifications every event
    everything = ["post.scheduled", "post.claimed", "delivery.published", "post.published"]
    assert [e["detail-type"] for e in outbox.bus_events()] == ["post.published"]
    assert [e["type"] for e in outbox.trail(post.schedule_id)] == everything
    assert notified == everything


def test_outbox_cancelled_post_yields_scheduled_then_cancelled_only(
    fire: FirePath, outbox: Outbox
) -> None:
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(hours=2), ["c1"])
    cancel_post(fire.settings, post, now=fire.clock.now())
    fire.driver.run_for(60)
    outbox.poller.drain()
    assert [e["type"] for e in outbox.trail(post.schedule_id)] == [
        "post.scheduled",
        "post.cancelled",
    ]


def test_outbox_relay_failure_retries_the_record_and_keeps_order(fire: FirePath) -> None:
    outbox = Outbox(fire, bus=FlakyBus(fire.settings.EVENT_BUS_NAME, failures=2))
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(seconds=30), ["c1"])
    fire.driver.run_for(120)
    outbox.poller.poll()
    outbox.poller.poll()
    assert outbox.bus_events() == []
    # The feed comes first (decisions, "Erasure erases the feed"): the failed record's event
    # is stored once, and the retries store nothing twice.
    assert [e["type"] for e in outbox.trail(post.schedule_id)] == ["post.scheduled"]
    outbox.poller.drain()
    on_bus = [e["detail"] for e in outbox.bus_events()]
    assert [e["type"] for e in on_bus] == [
        "post.scheduled",
        "post.claimed",
        "delivery.published",
        "post.published",
    ]
    assert [e["event_id"] for e in on_bus] == [
        e["event_id"] for e in outbox.trail(post.schedule_id)
    ]


def test_outbox_same_batch_relayed_twice_stores_each_event_once(
    fire: FirePath, outbox: Outbox
) -> None:
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(hours=2), ["c1"])
    outbox.poller.drain()
    outbox.poller.checkpoints.clear()
    outbox.poller.drain()
    trail = outbox.trail(post.schedule_id)
    assert [e["type"] for e in trail] == ["post.scheduled"]
    assert [e["detail"]["event_id"] for e in outbox.bus_events()] == [trail[0]["event_id"]] * 2
