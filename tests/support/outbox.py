"""The outbox relay over a test's moto posts table: the real relay handler, fed by the stream
poller the local stack uses (``local/emulation/streams.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import boto3

from functions.relay.handler import make_lambda_handler
from local.emulation.lambda_runtime import LambdaContext
from local.emulation.streams import StreamPoller, stream_arn, streams_client
from scheduled_posts.data.event_bus import EventBus
from scheduled_posts.data.event_feed import EventFeed
from scheduled_posts.logic.relay import Relay
from scheduled_posts.settings import Settings
from tests.support.clock import SimClock


@dataclass
class RelayRig:
    """``relay`` (replace its ``bus``/``feed``/``notify`` to inject faults), ``poller`` (call
    ``drain()`` to relay what was committed) and the ``feed`` it writes."""

    relay: Relay
    poller: StreamPoller
    feed: EventFeed


def build_relay(settings: Settings, clock: SimClock, *, bus: Any | None = None) -> RelayRig:
    """A relay on ``settings``' posts table and bus (call inside ``mock_aws``)."""
    feed = EventFeed(settings.POSTS_TABLE_NAME)
    relay = Relay(settings, feed=feed, bus=bus or EventBus(settings.EVENT_BUS_NAME), clock=clock)
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    poller = StreamPoller(
        streams_client(),
        stream_arn(dynamodb, settings.POSTS_TABLE_NAME),
        make_lambda_handler(lambda: relay),
        lambda: LambdaContext("relay", 60, clock=clock.seconds),
    )
    return RelayRig(relay=relay, poller=poller, feed=feed)
