"""A platform is one spec: a fake network registered here (and nowhere else) is accepted by the
API, its credential check and length rule are applied, its credentials are sealed, and the
worker delivers a post to it through the real fire path (sweeper -> SQS -> worker), with the
opened credentials (one spec per platform)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta
from typing import Any

import pytest

from scheduled_posts.clock import format_instant
from scheduled_posts.models.network import ChannelAccount, ChannelLimits
from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.base import DeliveryRequest, DeliveryResult
from scheduled_posts.platforms.registry import registered
from scheduled_posts.platforms.spec import CheckedCredentials, PlatformSpec, refused, required
from scheduled_posts.platforms.text_length import LengthViolation
from tests.integration.networks.conftest import NetworkFirePath
from tests.support.api import ApiClient

GOOD_TOKEN = "fake-good-token-0001"


class FakeNetwork:
    """The fake platform's network: what its adapter delivered, with the token it was given."""

    def __init__(self) -> None:
        self.delivered: list[tuple[str, str, str]] = []

    def adapter(self, settings: Any, access: Any = None, **_: Any) -> FakeAdapter:
        return FakeAdapter(self, required("access", access))


class FakeAdapter:
    platform = "fakenet"

    def __init__(self, network: FakeNetwork, access: Any) -> None:
        self.network = network
        self.access = access

    def deliver(
        self, channel: Channel, request: DeliveryRequest, *, now: datetime
    ) -> DeliveryResult:
        token = self.access(channel)
        self.network.delivered.append((channel.channel_id, request.content, token))
        n = len(self.network.delivered)
        return DeliveryResult(outcome="published", http_status=200, remote_id=f"fake-{n}")


def fake_check(http: Any, given: Mapping[str, Any], current: Channel | None) -> CheckedCredentials:
    token = given["access_token"].get_secret_value()
    if token != GOOD_TOKEN:
        raise refused("access_token", ValueError("fakenet refused the token"))
    return CheckedCredentials(
        url=given["instance_url"],
        account=ChannelAccount(id="fake-account-7", acct="fake"),
        limits=ChannelLimits(max_characters=20),
        secret={"access_token": token},
    )


def fake_rule(text: str, limits: ChannelLimits | None) -> list[LengthViolation]:
    if len(text) <= 20:
        return []
    return [LengthViolation(rule="characters", description="fakenet allows 20 characters",
                            count=len(text), limit=20)]  # fmt: skip


@pytest.fixture
def fakenet() -> Iterator[FakeNetwork]:
    network = FakeNetwork()
    spec = PlatformSpec(
        name="fakenet",
        adapter=network.adapter,
        required_fields=("instance_url", "access_token"),
        patch_fields=frozenset({"access_token"}),
        check=fake_check,
        access=lambda channel, opened: opened["access_token"],
        length_rule=fake_rule,
    )
    with registered(spec):
        yield network


def test_fake_platform_spec_is_accepted_checked_and_delivered_with_no_other_change(
    world: tuple[NetworkFirePath, ApiClient], fakenet: FakeNetwork
) -> None:
    fire, api = world
    body = {"platform": "fakenet", "name": "fake", "instance_url": "https://fake.example"}
    # Given the fake platform's credential check: a refused token is a 422 quoting it
    bad = api.post("/v1/channels", {**body, "access_token": "wrong"})
    assert bad.status == 422, bad.json
    assert bad.json["errors"][0]["loc"] == ["body", "access_token"]
    assert "fakenet refused the token" in bad.json["errors"][0]["msg"]
    # and its fields: another platform's field is a 422
    foreign = api.post("/v1/channels", {**body, "access_token": GOOD_TOKEN, "handle": "a.b"})
    assert foreign.status == 422, foreign.json
    # When a channel is created with a good token
    created = api.post("/v1/channels", {**body, "access_token": GOOD_TOKEN})
    assert created.status == 201, created.json
    channel_id = created.json["channel_id"]
    assert created.json["account"]["id"] == "fake-account-7"
    assert created.json["signing_secret"] is None
    # Then a PATCH of a field its spec does not let change is refused
    patched = api.patch(f"/v1/channels/{channel_id}", {"instance_url": "https://other.example"})
    assert patched.status == 422, patched.json
    # and its length rule applies to posts
    publish_at = format_instant(fire.clock.now() + timedelta(seconds=125))
    too_long = api.post(
        "/v1/scheduled-posts",
        {"content": "x" * 21, "publish_at": publish_at, "channel_ids": [channel_id]},
    )
    assert too_long.status == 422, too_long.json
    assert "fakenet allows 20 characters" in too_long.json["errors"][0]["msg"]
    # When a post to it comes due
    post = api.schedule(publish_at, [channel_id], content="hello fakenet")
    fire.driver.run_for(300)
    # Then the worker delivered it once, with the credentials it sealed
    assert fakenet.delivered == [(channel_id, "hello fakenet", GOOD_TOKEN)]
    got = api.get(f"/v1/scheduled-posts/{post['schedule_id']}").json
    assert got["status"] == "published", got
    assert got["deliveries"][0]["remote_id"] == "fake-1"
