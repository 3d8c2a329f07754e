"""A stored post with media for a channel of a platform that cannot publish them (here
``textonly``, a registered copy of Mastodon's spec without media: Mastodon and Bluesky publish
media now) is never published as text alone: the worker fails that delivery with
``DeliveryError.MEDIA_UNSUPPORTED`` without calling the network, and a webhook of the same post
is still sent (decisions "Media refused for network channels until they can be published",
"Media are checked again before publishing")."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest
from moto import mock_aws

from scheduled_posts.lifecycle.reasons import DeliveryError
from scheduled_posts.logic.publish import Publisher
from scheduled_posts.models.post import Channel, DeliveryStatus, PostStatus
from scheduled_posts.platforms.base import DeliveryRequest, DeliveryResult
from scheduled_posts.platforms.registry import registered, spec_of
from tests.integration.dispatch.conftest import FirePath, build_fire_path
from tests.support.clock import SimClock
from tests.support.factories import create_channel, create_post


class RecordingNetwork:
    """A network adapter that records what it was asked to publish and accepts it."""

    def __init__(self, platform: str) -> None:
        self.platform = platform
        self.requests: list[DeliveryRequest] = []

    def deliver(self, channel: Channel, request: DeliveryRequest, *, now: datetime) -> Any:
        self.requests.append(request)
        return DeliveryResult(outcome="published", remote_id="1")


class WithNetworks(FirePath):
    networks: dict[str, RecordingNetwork]

    def build_publisher(self) -> Publisher:
        adapters: dict[str, Any] = {"webhook": self.adapter, **self.networks}
        return Publisher(
            self.settings, store=self.store, queue=self.queue, adapters=adapters, clock=self.clock
        )


@pytest.fixture
def fire(clock: SimClock) -> Iterator[WithNetworks]:
    with mock_aws():
        world = build_fire_path(clock, WithNetworks, WRITE_SHARD_COUNT=2)
        world.networks = {p: RecordingNetwork(p) for p in ("mastodon", "textonly")}
        spec = replace(spec_of("mastodon"), name="textonly", publishes_media=False)
        with registered(spec):
            yield world


@pytest.mark.parametrize("platform", ["textonly"])
def test_stored_post_with_media_for_a_network_channel_fails_that_channel_unsent(
    fire: WithNetworks, platform: str
) -> None:
    fire.channel("hook")
    create_channel(fire.settings, channel_id="net", platform=platform, now=fire.clock.now())
    publish_at = fire.clock.now() + timedelta(seconds=60)
    post = create_post(
        fire.settings,
        now=fire.clock.now(),
        publish_at=publish_at,
        channel_ids=["hook", "net"],
        media_ids=["m1"],
    )
    fire.driver.run_for(300)
    assert fire.networks[platform].requests == []  # never text alone
    got = fire.read(post)
    assert got.deliveries["net"].status == DeliveryStatus.FAILED
    assert got.deliveries["net"].last_error == DeliveryError.MEDIA_UNSUPPORTED.value
    assert got.deliveries["hook"].status == DeliveryStatus.PUBLISHED
    assert got.status == PostStatus.PARTIALLY_PUBLISHED
    [request] = fire.receiver.requests_for(f"{post.schedule_id}:hook")
    assert request.payload is not None and request.payload["media_ids"] == ["m1"]


def test_stored_post_without_media_for_a_network_channel_is_published(fire: WithNetworks) -> None:
    create_channel(fire.settings, channel_id="net", platform="mastodon", now=fire.clock.now())
    post = fire.post(fire.clock.now() + timedelta(seconds=60), ["net"])
    fire.driver.run_for(300)
    assert len(fire.networks["mastodon"].requests) == 1
    assert fire.read(post).status == PostStatus.PUBLISHED
