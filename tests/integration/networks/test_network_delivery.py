"""The worker's side of network channels on moto: sessions cached sealed on the channel item,
a refusal marking the channel, and deliveries to such a channel failing at once (issue 12)."""

from __future__ import annotations

from datetime import UTC, datetime

import boto3
import pytest
from pydantic import SecretStr

from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.data.credentials import CredentialCipher
from scheduled_posts.logic.network_accounts import ChannelSecrets
from scheduled_posts.logic.network_delivery import (
    ChannelSessionCache,
    default_adapters,
    record_refusal,
)
from scheduled_posts.models.network import ChannelAccount, ChannelStatus
from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.base import DeliveryRequest, DeliveryResult
from scheduled_posts.platforms.bluesky import BlueskySession
from tests.support.fixtures import AwsResources
from tests.support.transport import ScriptedTransport

NOW = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


@pytest.fixture
def secrets(aws: AwsResources) -> ChannelSecrets:
    kms = boto3.client("kms", region_name="us-east-1")
    return ChannelSecrets(CredentialCipher(kms.create_key()["KeyMetadata"]["KeyId"], kms=kms))


@pytest.fixture
def channels(aws: AwsResources) -> ChannelRepository:
    return ChannelRepository(posts_table_name=aws.settings.POSTS_TABLE_NAME)


def stored_channel(channels: ChannelRepository, secrets: ChannelSecrets, platform: str) -> Channel:
    channel = Channel(
        channel_id=f"ch-{platform}",
        owner="alice",
        platform=platform,
        name=platform,
        url="https://pds.example",
        signing_secret="unused",
        created_at=NOW,
        account=ChannelAccount(did="did:plc:alice", handle="alice.test"),
    )
    sealed = secrets.seal_credentials(channel, {"handle": "alice.test", "app_password": "pw-1"})
    channel = channel.model_copy(update={"credentials": sealed})
    channels.put_new(channel, max_channels=50)
    return channel


def session(token: str) -> BlueskySession:
    return BlueskySession(
        did="did:plc:alice",
        handle="alice.test",
        access_jwt=SecretStr(token),
        refresh_jwt=SecretStr("refresh-" + token),
    )


def test_session_cache_seals_on_the_item_and_another_worker_reuses_it(
    channels: ChannelRepository, secrets: ChannelSecrets
) -> None:
    channel = stored_channel(channels, secrets, "bluesky")
    ChannelSessionCache(channels, secrets).put(channel, session("access-1"))
    reread = channels.get("alice", channel.channel_id)
    assert reread is not None and reread.session and "access-1" not in reread.session
    other_worker = ChannelSessionCache(channels, secrets)
    found = other_worker.get(reread)
    assert found is not None and found.access_jwt.get_secret_value() == "access-1"


def test_session_cache_forgetting_removes_it_from_the_item(
    channels: ChannelRepository, secrets: ChannelSecrets
) -> None:
    channel = stored_channel(channels, secrets, "bluesky")
    cache = ChannelSessionCache(channels, secrets)
    cache.put(channel, session("access-1"))
    cache.put(channel, None)
    reread = channels.get("alice", channel.channel_id)
    assert reread is not None and reread.session is None


def test_refusal_marks_the_channel_needs_reauthorization(
    channels: ChannelRepository, secrets: ChannelSecrets
) -> None:
    channel = stored_channel(channels, secrets, "bluesky")
    refused = DeliveryResult(
        outcome="failed", reason="reauthorization_required", error="Bluesky refused: 401"
    )
    assert record_refusal(channel, refused, channels=channels)
    reread = channels.get("alice", channel.channel_id)
    assert reread is not None
    assert (reread.status, reread.status_reason) == (
        ChannelStatus.NEEDS_REAUTHORIZATION,
        "Bluesky refused: 401",
    )


def test_refusal_of_replaced_credentials_leaves_the_channel_active(
    channels: ChannelRepository, secrets: ChannelSecrets
) -> None:
    channel = stored_channel(channels, secrets, "bluesky")
    replaced = channel.model_copy(
        update={
            "credentials": secrets.seal_credentials(channel, {"handle": "a", "app_password": "new"})
        }
    )
    channels.replace(replaced)
    refused = DeliveryResult(outcome="failed", reason="reauthorization_required", error="401")
    assert not record_refusal(channel, refused, channels=channels)
    reread = channels.get("alice", channel.channel_id)
    assert reread is not None and reread.status == ChannelStatus.ACTIVE


def test_other_failures_do_not_mark_the_channel(
    channels: ChannelRepository, secrets: ChannelSecrets
) -> None:
    channel = stored_channel(channels, secrets, "bluesky")
    refused = DeliveryResult(outcome="failed", reason="refused", error="InvalidSwap")
    assert not record_refusal(channel, refused, channels=channels)


@pytest.mark.parametrize("platform", ["mastodon", "bluesky"])
def test_delivery_to_a_channel_needing_reauthorization_fails_without_a_request(
    aws: AwsResources, platform: str
) -> None:
    no_network = ScriptedTransport()  # no answer scripted: every request is kept, then fails
    adapters = default_adapters(aws.settings)
    adapter = adapters[platform]
    adapter.client.http.transport = no_network  # type: ignore[union-attr]
    channel = Channel(
        channel_id="ch",
        owner="alice",
        platform=platform,
        name="main",
        url="https://x.example",
        signing_secret="-",
        created_at=NOW,
        status=ChannelStatus.NEEDS_REAUTHORIZATION,
        status_reason="HTTP 401",
    )
    request = DeliveryRequest(
        schedule_id="s",
        channel_id="ch",
        content="hi",
        publish_at=NOW,
        attempt=1,
        idempotency_key="s:ch",
    )
    result = adapter.deliver(channel, request, now=NOW)
    assert (result.outcome, result.reason) == ("failed", "reauthorization_required")
    assert "HTTP 401" in (result.error or "")
    assert no_network.requests == []
