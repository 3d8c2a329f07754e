"""The network fire path's world: the production adapters of every platform behind the API,
the Mastodon stand-in and the reference PDS (``local_pds``), shared by this folder's tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any, TypeVar

import pytest
from moto import mock_aws

from local.bluesky import LocalPds
from local.mastodon import MastodonStandIn
from scheduled_posts.clock import format_instant
from scheduled_posts.lifecycle.metric_names import Metric
from scheduled_posts.logic.network_delivery import default_adapters
from scheduled_posts.logic.publish import Publisher
from scheduled_posts.observability import metrics
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


N = TypeVar("N", bound=NetworkFirePath)


def network_fire_path(clock: SimClock, kind: type[N] = NetworkFirePath) -> N:  # type: ignore[assignment]
    """A fire path of ``kind`` whose outbound requests may reach 127.0.0.1 (the stand-in, the
    PDS), with 2 write shards and short retry waits (call inside ``mock_aws``)."""
    return build_fire_path(
        clock,
        kind,
        OUTBOUND_ALLOWED_ORIGINS="http://127.0.0.1",
        WRITE_SHARD_COUNT=2,
        RETRY_BASE_SECONDS=2.0,
        RETRY_CAP_SECONDS=60.0,
    )


@contextmanager
def serving_api(path: N) -> Iterator[tuple[N, ApiClient]]:
    """``path`` with the API installed over its settings and clock, and alice's client."""
    install_api(path.settings, path.clock)
    try:
        yield path, ApiClient("alice")
    finally:
        uninstall_api()


@pytest.fixture
def verification_findings(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The values of every ``VerificationFindings`` metric emitted during the test (each is
    still emitted)."""
    findings: list[float] = []
    real = metrics.add_metric

    def counted(*, name: str, unit: Any, value: float) -> None:
        if name == Metric.VERIFICATION_FINDINGS:
            findings.append(value)
        real(name=name, unit=unit, value=value)

    monkeypatch.setattr(metrics, "add_metric", counted)
    return findings


@pytest.fixture
def world(clock: SimClock) -> Iterator[tuple[NetworkFirePath, ApiClient]]:
    with mock_aws(), serving_api(network_fire_path(clock)) as world:
        yield world


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
