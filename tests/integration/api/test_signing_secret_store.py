"""The stored rotation of a signing secret, shared by channels and notification endpoints
(``data/signing_secrets.py``): one of two concurrent rotations wins, a vanished item is a 404."""

from __future__ import annotations

from datetime import timedelta

import pytest

from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.data.notification_endpoints import NotificationEndpointRepository
from scheduled_posts.errors import (
    ChannelNotFoundError,
    NotificationEndpointNotFoundError,
    StateConflictError,
)
from scheduled_posts.models.notifications import NotificationEndpoint
from scheduled_posts.models.post import PreviousSecret
from tests.support.clock import SimClock
from tests.support.factories import create_channel
from tests.support.fixtures import AwsResources


def _endpoints(aws: AwsResources) -> NotificationEndpointRepository:
    return NotificationEndpointRepository(posts_table_name=aws.settings.POSTS_TABLE_NAME)


def _endpoint(aws: AwsResources, clock: SimClock) -> NotificationEndpoint:
    endpoint = NotificationEndpoint(
        endpoint_id="e-1",
        owner="alice",
        url="https://hooks.example.com/events",
        event_types=("post.published",),
        signing_secret="old",
        created_at=clock.now(),
    )
    _endpoints(aws).put_new(endpoint, max_endpoints=10)
    return endpoint


def test_channel_rotation_keeps_previous_and_drops_the_legacy_fields(
    aws: AwsResources, clock: SimClock
) -> None:
    # Given a channel whose item still has the single-previous-secret fields of old
    channel = create_channel(aws.settings, channel_id="ch-1", now=clock.now(), signing_secret="old")
    repo = ChannelRepository(posts_table_name=aws.settings.POSTS_TABLE_NAME)
    aws.dynamodb.update_item(
        TableName=aws.settings.POSTS_TABLE_NAME,
        Key={"pk": {"S": "OWNER#alice"}, "sk": {"S": "CHANNEL#ch-1"}},
        UpdateExpression="SET previous_signing_secret = :s",
        ExpressionAttributeValues={":s": {"S": "older"}},
    )
    kept = PreviousSecret(secret="old", expires_at=clock.now() + timedelta(hours=24))
    # When its secret is rotated
    rotated = repo.rotate_secret(
        "alice", "ch-1", current_secret="old", new_secret="new", previous_secrets=[kept]
    )
    # Then the new secret is current, the old one kept with its expiry, the legacy field gone
    item = aws.dynamodb.get_item(
        TableName=aws.settings.POSTS_TABLE_NAME,
        Key={"pk": {"S": "OWNER#alice"}, "sk": {"S": "CHANNEL#ch-1"}},
    )["Item"]
    assert (rotated.signing_secret, rotated.previous_secrets) == ("new", (kept,))
    assert rotated.channel_id == channel.channel_id and "previous_signing_secret" not in item


def test_channel_rotation_from_a_stale_secret_conflicts_and_changes_nothing(
    aws: AwsResources, clock: SimClock
) -> None:
    create_channel(aws.settings, channel_id="ch-1", now=clock.now(), signing_secret="current")
    repo = ChannelRepository(posts_table_name=aws.settings.POSTS_TABLE_NAME)
    with pytest.raises(StateConflictError):
        repo.rotate_secret(
            "alice", "ch-1", current_secret="stale", new_secret="new", previous_secrets=[]
        )
    stored = repo.get("alice", "ch-1")
    assert stored is not None and stored.signing_secret == "current"


def test_channel_rotation_of_a_missing_channel_is_not_found(aws: AwsResources) -> None:
    repo = ChannelRepository(posts_table_name=aws.settings.POSTS_TABLE_NAME)
    with pytest.raises(ChannelNotFoundError):
        repo.rotate_secret("alice", "nope", current_secret="x", new_secret="y", previous_secrets=[])


def test_endpoint_rotation_keeps_previous(aws: AwsResources, clock: SimClock) -> None:
    _endpoint(aws, clock)
    kept = PreviousSecret(secret="old", expires_at=clock.now() + timedelta(hours=24))
    rotated = _endpoints(aws).rotate_secret(
        "alice", "e-1", current_secret="old", new_secret="new", previous_secrets=[kept]
    )
    assert (rotated.signing_secret, rotated.previous_secrets) == ("new", (kept,))
    assert _endpoints(aws).get("alice", "e-1") == rotated


def test_endpoint_rotation_from_a_stale_secret_conflicts_and_changes_nothing(
    aws: AwsResources, clock: SimClock
) -> None:
    endpoint = _endpoint(aws, clock)
    with pytest.raises(StateConflictError):
        _endpoints(aws).rotate_secret(
            "alice", "e-1", current_secret="stale", new_secret="new", previous_secrets=[]
        )
    assert _endpoints(aws).get("alice", "e-1") == endpoint


def test_endpoint_rotation_of_a_missing_endpoint_is_not_found(aws: AwsResources) -> None:
    with pytest.raises(NotificationEndpointNotFoundError):
        _endpoints(aws).rotate_secret(
            "alice", "nope", current_secret="x", new_secret="y", previous_secrets=[]
        )
