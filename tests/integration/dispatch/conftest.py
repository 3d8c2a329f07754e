"""A wired fire path for dispatch tests: fake receiver -> webhook adapter -> publisher -> the real
worker, sweeper and watchdog handlers, played by the driver on the simulated clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import pytest
from moto import mock_aws

from functions.sweeper.handler import make_lambda_handler as make_sweeper_handler
from functions.watchdog.handler import make_lambda_handler as make_watchdog_handler
from functions.worker.handler import make_lambda_handler as make_worker_handler
from local.emulation.lambda_runtime import LambdaContext
from scheduled_posts.data.due_index import DueIndex
from scheduled_posts.data.post_store import PostStore
from scheduled_posts.data.posts import PostRepository
from scheduled_posts.data.queue import DispatchQueue
from scheduled_posts.lifecycle import outcomes
from scheduled_posts.logic.publish import Publisher
from scheduled_posts.logic.sweep import Sweeper
from scheduled_posts.logic.watchdog import rescue_expired_leases
from scheduled_posts.models.post import Channel, Post
from scheduled_posts.platforms.webhook import WebhookAdapter
from tests.support.clock import SimClock
from tests.support.driver import Driver
from tests.support.factories import create_channel, create_post
from tests.support.fixtures import AwsResources, create_resources
from tests.support.receiver import FakeReceiver


@dataclass
class FirePath:
    """Everything a dispatch test touches. Replace ``store``/``queue``/``adapter``/``uniform``
    (before the first poll) to inject faults; ``publisher()`` builds from the current ones."""

    aws: AwsResources
    clock: SimClock
    receiver: FakeReceiver
    adapter: Any
    store: Any
    queue: Any
    due_index: Any
    uniform: Any = None
    driver: Driver = field(init=False)
    _publisher: Publisher | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.driver = Driver(
            self.aws,
            self.clock,
            worker=make_worker_handler(self.publisher),
            sweeper=self.sweep,
            watchdog=self.watchdog,
        )

    @property
    def settings(self) -> Any:
        return self.aws.settings

    def publisher(self) -> Publisher:
        if self._publisher is None:
            self._publisher = self.build_publisher()
        return self._publisher

    def build_publisher(self) -> Publisher:
        kwargs: dict[str, Any] = {}
        if self.uniform is not None:
            kwargs["uniform"] = self.uniform
        return Publisher(
            self.settings,
            store=self.store,
            queue=self.queue,
            adapters={"webhook": self.adapter},
            clock=self.clock,
            **kwargs,
        )

    def sweep(self) -> Any:
        sweeper = Sweeper(
            self.settings, due_index=self.due_index, queue=self.queue, clock=self.clock
        )
        handler = make_sweeper_handler(lambda: sweeper)
        return handler({}, LambdaContext("sweeper", 60, clock=self.clock.seconds))

    def watchdog(self) -> Any:
        handler = make_watchdog_handler(
            lambda: rescue_expired_leases(
                self.settings, store=self.store, queue=self.queue, clock=self.clock
            )
        )
        return handler({}, LambdaContext("watchdog", 60, clock=self.clock.seconds))

    def channel(self, channel_id: str, owner: str = "alice") -> Channel:
        channel = create_channel(
            self.settings,
            owner=owner,
            channel_id=channel_id,
            url=f"https://hooks.example.com/{channel_id}",
            now=self.clock.now(),
        )
        self.receiver.add_secret(channel.url, channel.signing_secret)
        return channel

    def post(self, publish_at: datetime, channel_ids: list[str], owner: str = "alice") -> Post:
        return create_post(
            self.settings,
            now=self.clock.now(),
            publish_at=publish_at,
            channel_ids=channel_ids,
            owner=owner,
        )

    def attempts(self, post: Post) -> list[dict[str, Any]]:
        """The post's attempts, in start order, as ``GET .../attempts`` answers them: the
        attempt rows merged with the attempts kept on the post item."""
        repo = PostRepository(
            posts_table_name=self.settings.POSTS_TABLE_NAME,
            due_table_name=self.settings.DUE_INDEX_TABLE_NAME,
        )
        rows = repo.list_attempts(post.schedule_id, now=self.clock.now())
        merged = outcomes.merge_attempts(rows, self.read(post))
        return [a.model_dump(mode="json", exclude_none=True) for a in merged]

    def read(self, post: Post) -> Post:
        found = PostStore(self.settings.POSTS_TABLE_NAME).get_post(post.schedule_id)
        assert found is not None
        return found


F = TypeVar("F", bound=FirePath)


def build_fire_path(clock: SimClock, kind: type[F] = FirePath, **overrides: Any) -> F:  # type: ignore[assignment]
    """A fire path (of ``kind``: ``FirePath`` or a subclass) over fresh moto resources (call
    inside ``mock_aws``)."""
    aws = create_resources(**overrides)
    receiver = FakeReceiver(clock)
    return kind(
        aws=aws,
        clock=clock,
        receiver=receiver,
        adapter=WebhookAdapter(aws.settings, transport=receiver, resolver=receiver.resolver),
        store=PostStore(aws.settings.POSTS_TABLE_NAME),
        queue=DispatchQueue(aws.settings.DISPATCH_QUEUE_URL),
        due_index=DueIndex(aws.settings.DUE_INDEX_TABLE_NAME),
    )


@pytest.fixture
def make_fire(clock: SimClock) -> Iterator[Callable[..., FirePath]]:
    """``make_fire(**settings_overrides)``: a fire path with other settings."""
    with mock_aws():
        yield lambda **overrides: build_fire_path(clock, **{"WRITE_SHARD_COUNT": 2, **overrides})


@pytest.fixture
def fire(clock: SimClock) -> Iterator[FirePath]:
    """The fire path with default settings, except short retry waits and 2 write shards (fewer
    moto queries per sweep and watchdog run; the sweep tests use the default 8)."""
    with mock_aws():
        yield build_fire_path(
            clock, RETRY_BASE_SECONDS=2.0, RETRY_CAP_SECONDS=60.0, WRITE_SHARD_COUNT=2
        )
