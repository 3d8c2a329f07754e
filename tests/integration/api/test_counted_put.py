"""A new channel or notification endpoint is put and counted in one transaction
(``data/counted.py``): an id collision is a conflict and counts nothing."""

from __future__ import annotations

import pytest

from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.data.notification_endpoints import NotificationEndpointRepository
from scheduled_posts.errors import LimitExceededError, StateConflictError
from scheduled_posts.models.notifications import NotificationEndpoint
from scheduled_posts.models.post import Channel
from tests.support.clock import SimClock
from tests.support.fixtures import AwsResources


def _channel(clock: SimClock, channel_id: str) -> Channel:
    return Channel(
        channel_id=channel_id,
        owner="alice",
        platform="webhook",
        name="main",
        url="https://hooks.example.com/in",
        signing_secret="s",
        created_at=clock.now(),
    )


def _endpoint(clock: SimClock, endpoint_id: str) -> NotificationEndpoint:
    return NotificationEndpoint(
        endpoint_id=endpoint_id,
        owner="alice",
        url="https://hooks.example.com/events",
        event_types=("post.published",),
        signing_secret="s",
        created_at=clock.now(),
    )


def test_channel_id_collision_conflicts_and_counts_nothing(
    aws: AwsResources, clock: SimClock
) -> None:
    repo = ChannelRepository(posts_table_name=aws.settings.POSTS_TABLE_NAME)
    repo.put_new(_channel(clock, "ch-1"), max_channels=2)
    with pytest.raises(StateConflictError, match="already exists"):
        repo.put_new(_channel(clock, "ch-1"), max_channels=2)
    # the collision took no slot: a second channel still fits under a limit of 2
    repo.put_new(_channel(clock, "ch-2"), max_channels=2)
    with pytest.raises(LimitExceededError, match="MAX_CHANNELS_PER_USER"):
        repo.put_new(_channel(clock, "ch-3"), max_channels=2)


def test_endpoint_id_collision_conflicts_and_counts_nothing(
    aws: AwsResources, clock: SimClock
) -> None:
    repo = NotificationEndpointRepository(posts_table_name=aws.settings.POSTS_TABLE_NAME)
    repo.put_new(_endpoint(clock, "e-1"), max_endpoints=2)
    with pytest.raises(StateConflictError, match="already exists"):
        repo.put_new(_endpoint(clock, "e-1"), max_endpoints=2)
    repo.put_new(_endpoint(clock, "e-2"), max_endpoints=2)
    with pytest.raises(LimitExceededError, match="MAX_NOTIFICATION_ENDPOINTS_PER_USER"):
        repo.put_new(_endpoint(clock, "e-3"), max_endpoints=2)
