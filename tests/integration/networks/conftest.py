"""The network fire path's world: the production adapters of every platform behind the API,
the Mastodon stand-in and the reference PDS (``local_pds``), shared by this folder's tests."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from moto import mock_aws

from local.bluesky import LocalPds
from local.mastodon import MastodonStandIn
from scheduled_posts.clock import format_instant
from scheduled_posts.logic.network_delivery import default_adapters
from scheduled_posts.logic.publish import Publisher
from scheduled_posts.platforms.bluesky import BlueskyClient
from scheduled_posts.platforms.http import OutboundHttp
from tests.integration.dispatch.conftest import FirePath, build_fire_path, fire  # noqa: F401
from tests.support.api import ApiClient, install_api, uninstall_api
from tests.support.clock import SimClock


class NetworkFirePath(FirePath):
    """The fire path with the production adapters of every platform."""

    def build_publisher(self) -> Publisher:
        return Publisher(
            self.settings,
            store=self.store,
            queue=self.queue,
            adapters=default_adapters(self.settings),
            clock=self.clock,
        )


@pytest.fixture
def stand_in() -> Iterator[tuple[MastodonStandIn, str]]:
    state = MastodonStandIn()
    with state.serving() as base:
        yield state, base


@pytest.fixture
def world(clock: SimClock) -> Iterator[tuple[NetworkFirePath, ApiClient]]:
    with mock_aws():
        base = build_fire_path(
            clock,
            OUTBOUND_ALLOWED_ORIGINS="http://127.0.0.1",
            WRITE_SHARD_COUNT=2,
            RETRY_BASE_SECONDS=2.0,
            RETRY_CAP_SECONDS=60.0,
        )
        fire = NetworkFirePath(
            aws=base.aws,
            clock=clock,
            receiver=base.receiver,
            adapter=base.adapter,
            store=base.store,
            queue=base.queue,
            due_index=base.due_index,
        )
        install_api(fire.settings, clock)
        yield fire, ApiClient("alice")
        uninstall_api()


def bluesky_posts(pds: LocalPds, did: str) -> list[dict[str, Any]]:
    http = OutboundHttp(allowed_origins=["http://127.0.0.1"], timeout_seconds=20)
    answer = BlueskyClient(http).http.request(
        "GET",
        f"{pds.url}/xrpc/com.atproto.repo.listRecords",
        query={"repo": did, "collection": "app.bsky.feed.post"},
    )
    return list(answer.json_object()["records"])


def make_channels(
    api: ApiClient, stand_in: tuple[MastodonStandIn, str], pds: LocalPds, name: str
) -> tuple[str, str, str, Any]:
    mastodon_account = stand_in[0].add_account(name)
    bluesky_account = pds.create_account(name)
    mastodon = api.post(
        "/v1/channels",
        {
            "platform": "mastodon",
            "name": "toots",
            "instance_url": stand_in[1],
            "access_token": mastodon_account.token,
        },
    )
    bluesky = api.post(
        "/v1/channels",
        {
            "platform": "bluesky",
            "name": "sky",
            "service_url": pds.url,
            "handle": bluesky_account.handle,
            "app_password": bluesky_account.app_password,
        },
    )
    assert mastodon.status == bluesky.status == 201, (mastodon.json, bluesky.json)
    return (
        mastodon.json["channel_id"],
        bluesky.json["channel_id"],
        mastodon_account.token,
        bluesky_account,
    )


def published_post(
    world: tuple[NetworkFirePath, ApiClient],
    stand_in: tuple[MastodonStandIn, str],
    pds: LocalPds,
    name: str,
) -> tuple[str, str, str, Any]:
    """A post to a new Mastodon and Bluesky channel of ``name``, published through the fire
    path: ``(schedule_id, mastodon_id, bluesky_id, bluesky_account)``."""
    path, api = world
    mastodon_id, bluesky_id, _, sky = make_channels(api, stand_in, pds, name)
    created = api.post(
        "/v1/scheduled-posts",
        {
            "content": "Still there?",
            "publish_at": format_instant(path.clock.now() + timedelta(seconds=65)),
            "channel_ids": [mastodon_id, bluesky_id],
        },
    )
    assert created.status == 201, created.json
    path.driver.run_for(200)
    return created.json["schedule_id"], mastodon_id, bluesky_id, sky
