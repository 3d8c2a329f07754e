"""A hostile network cannot wedge a post: what an instance answers is bounded and checked
before it is stored (decision "Network answers are bounded before they are stored"), so a
post to 8 channels of an instance answering 60,000-character URLs still ends ``published``."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import timedelta
from typing import Any

import pytest
from moto import mock_aws
from pydantic import SecretStr

from scheduled_posts.logic.publish import Publisher
from scheduled_posts.models.post import Channel, DeliveryStatus, PostStatus
from scheduled_posts.platforms.mastodon import MastodonAccess
from scheduled_posts.platforms.mastodon_adapter import MastodonAdapter
from scheduled_posts.platforms.transport import TransportResponse
from tests.integration.dispatch.conftest import FirePath, build_fire_path
from tests.support.clock import SimClock
from tests.support.factories import create_channel
from tests.support.transport import ScriptedTransport, SentRequest

INSTANCE = "https://hostile.example"
CHANNELS = [f"m{i}" for i in range(8)]


class HostileInstance(ScriptedTransport):
    """A Mastodon transport that publishes every status and answers it with ``status`` (a
    JSON object: the id and url it claims); ``requests`` holds the statuses it published."""

    def __init__(self, status: Mapping[str, Any]) -> None:
        super().__init__()
        self.status = dict(status)

    def answer(self, request: SentRequest) -> TransportResponse:
        assert request.method == "POST" and request.destination.target == "/api/v1/statuses"
        return TransportResponse(
            200, {"Content-Type": "application/json"}, json.dumps(self.status).encode()
        )


class HostileFirePath(FirePath):
    instance: HostileInstance

    def build_publisher(self) -> Publisher:
        adapter = MastodonAdapter(
            self.settings,
            access=lambda channel: MastodonAccess(
                instance_url=INSTANCE, access_token=SecretStr("t0ken"), account_id="1"
            ),
            transport=self.instance,
            resolver=lambda host: ["93.184.216.34"],
        )
        return Publisher(
            self.settings,
            store=self.store,
            queue=self.queue,
            adapters={"mastodon": adapter},
            clock=self.clock,
        )


def _hostile_path(clock: SimClock, **overrides: Any) -> HostileFirePath:
    base = build_fire_path(clock, WRITE_SHARD_COUNT=2, **overrides)
    return HostileFirePath(
        aws=base.aws,
        clock=clock,
        receiver=base.receiver,
        adapter=base.adapter,
        store=base.store,
        queue=base.queue,
        due_index=base.due_index,
    )


@pytest.fixture
def hostile(clock: SimClock) -> Iterator[HostileFirePath]:
    with mock_aws():
        yield _hostile_path(clock)


def _channels(fire: FirePath) -> list[Channel]:
    return [
        create_channel(
            fire.settings, channel_id=cid, url=INSTANCE, platform="mastodon", now=fire.clock.now()
        )
        for cid in CHANNELS
    ]


@pytest.mark.parametrize(
    "status",
    [
        {"id": "9" * 3000, "url": "https://hostile.example/@a/" + "x" * 60_000},
        {"id": "1 2", "url": "javascript:alert(document.cookie)"},
        {"id": 110, "url": "http://hostile.example/@a/110"},  # http: not an allowed origin
    ],
    ids=["oversized", "malformed", "plain-http"],
)
def test_hostile_instance_post_published_with_bad_fields_dropped(
    hostile: HostileFirePath, status: dict[str, Any]
) -> None:
    # Given 8 channels on an instance that answers every status with hostile fields
    hostile.instance = HostileInstance(status)
    _channels(hostile)
    post = hostile.post(hostile.clock.now() + timedelta(seconds=30), CHANNELS)

    # When the post falls due
    hostile.driver.run_for(120)

    # Then the network published it once per channel, and the post says so, without the
    # values it could not trust
    assert len(hostile.instance.requests) == len(CHANNELS)
    got = hostile.read(post)
    assert got.status == PostStatus.PUBLISHED
    for cid in CHANNELS:
        delivery = got.deliveries[cid]
        assert delivery.status == DeliveryStatus.PUBLISHED
        assert delivery.remote_url is None
        assert delivery.remote_id == (None if isinstance(status["id"], str) else "110")


def test_hostile_instance_allowed_local_origin_url_kept(clock: SimClock) -> None:
    # An origin of OUTBOUND_ALLOWED_ORIGINS (the local stand-ins) may be plain http
    with mock_aws():
        fire = _hostile_path(clock, OUTBOUND_ALLOWED_ORIGINS="http://hostile.example")
        fire.instance = HostileInstance({"id": "7", "url": "http://hostile.example/@a/7"})
        _channels(fire)
        post = fire.post(fire.clock.now() + timedelta(seconds=30), CHANNELS[:1])
        fire.driver.run_for(120)
        delivery = fire.read(post).deliveries[CHANNELS[0]]
    assert (delivery.remote_id, delivery.remote_url) == ("7", "http://hostile.example/@a/7")
