"""Verification on the network: read each published network delivery back and record what the
network shows (decision "Verification on the network").

A read is planned by :func:`plan_reads` (pure: which deliveries, which read) and applied by
:func:`verify_post` (the reads, then one conditional write per delivery). Outcomes per delivery:

- ``present`` -> ``verified_at`` = now, any open finding cleared (a record that appears late,
  after a lost answer, is verified once it is there: "reported once, then cleared");
- ``missing`` / ``changed`` -> the finding is recorded (``verified_at`` keeps the last time the
  network showed it);
- ``unknown`` (a 5xx, a timeout) -> nothing is written: the next run reads again.

Never read: webhooks (a receiver has no read API), failed or skipped deliveries, deliveries
without a ``remote_id``, channels that are ``needs_reauthorization`` (the brief: stop reading
a channel whose credentials were refused) or deleted, and Mastodon deliveries of
``private``/``direct`` visibility (a public read answers 404 for them: it would be a false
``missing``). Reads never touch the dispatch path: publishing does not wait for them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from scheduled_posts.clock import Clock
from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.data.verifications import VerificationStore
from scheduled_posts.errors import PostNotFoundError
from scheduled_posts.lifecycle.metric_names import Metric
from scheduled_posts.lifecycle.states import DeliveryStatus
from scheduled_posts.logic.posts import PostDeps
from scheduled_posts.models.network import ChannelStatus
from scheduled_posts.models.post import Channel, Delivery, Post
from scheduled_posts.models.variants import effective_for
from scheduled_posts.observability import metrics
from scheduled_posts.platforms.http import OutboundHttp
from scheduled_posts.platforms.readback import Seen, read_bluesky, read_mastodon

#: ``(read, delivery)`` -> what the network shows.
Reader = Callable[["PlannedRead"], Seen]


@dataclass(frozen=True)
class PlannedRead:
    """One read-back: the delivery and where to read it (``platform`` ``bluesky`` or
    ``mastodon``; ``url`` the PDS or instance)."""

    channel_id: str
    platform: str
    url: str
    remote_id: str
    cid: str | None
    #: The channel's ``rate_limit_per_minute`` (None: no limit); the scheduled job counts its
    #: reads against it (``logic/verify_job.py``).
    rate_limit_per_minute: int | None = None


class ReadBack(Protocol):
    """What :func:`verify_loaded` uses (:class:`VerifyDeps` and the scheduled job's deps)."""

    @property
    def channels(self) -> ChannelRepository: ...
    @property
    def store(self) -> VerificationStore: ...
    @property
    def http(self) -> OutboundHttp: ...


@dataclass(frozen=True)
class VerifyDeps:
    """Collaborators: the post logic's (reads), the channels, the write, the clock and the
    outbound HTTP of the reads (``OUTBOUND_ALLOWED_ORIGINS`` and timeouts apply)."""

    posts: PostDeps
    channels: ChannelRepository
    store: VerificationStore
    clock: Clock
    http: OutboundHttp


def plan_reads(post: Post, channels: Mapping[str, Channel]) -> list[PlannedRead]:
    """The reads :func:`verify_post` makes for ``post`` (see the module docstring)."""
    planned: list[PlannedRead] = []
    for channel_id in post.channel_ids:
        delivery = post.deliveries.get(channel_id)
        channel = channels.get(channel_id)
        if not _readable(post, delivery, channel):
            continue
        assert delivery is not None and channel is not None and delivery.remote_id
        cid = delivery.receipt.cid if delivery.receipt else None
        planned.append(
            PlannedRead(
                channel_id,
                channel.platform,
                channel.url,
                delivery.remote_id,
                cid,
                channel.rate_limit_per_minute,
            )
        )
    return planned


def _readable(post: Post, delivery: Delivery | None, channel: Channel | None) -> bool:
    if delivery is None or channel is None or delivery.status != DeliveryStatus.PUBLISHED:
        return False
    if not delivery.remote_id or channel.status == ChannelStatus.NEEDS_REAUTHORIZATION:
        return False
    if channel.platform == "mastodon":
        visibility = effective_for(post, channel.channel_id).options.visibility
        return visibility not in ("private", "direct")
    return channel.platform == "bluesky"


def read_on_network(http: OutboundHttp) -> Reader:
    """The production :data:`Reader` (``platforms/readback.py``)."""

    def read(planned: PlannedRead) -> Seen:
        if planned.platform == "bluesky":
            return read_bluesky(http, planned.url, planned.remote_id, planned.cid)
        return read_mastodon(http, planned.url, planned.remote_id)

    return read


def verify_post(
    owner: str, schedule_id: str, *, deps: VerifyDeps, reader: Reader | None = None
) -> dict[str, Seen]:
    """Read ``owner``'s post back now; ``{channel_id: seen}`` for each read made.

    Raises
    ------
    PostNotFoundError
        Missing, another user's, or past its retention.
    """
    now = deps.clock.now()
    post = deps.posts.posts.get(schedule_id)
    if post is None or post.owner != owner or post.is_expired(now):
        raise PostNotFoundError("scheduled post not found")
    return verify_loaded(post, deps=deps, reader=reader, now=now)


def verify_loaded(
    post: Post, *, deps: ReadBack, reader: Reader | None, now: datetime
) -> dict[str, Seen]:
    """:func:`verify_post` of an already read ``post`` (the scheduled job's entry)."""
    channels = deps.channels.get_many(post.owner, post.channel_ids)
    return apply_reads(post, plan_reads(post, channels), deps=deps, reader=reader, now=now)


def apply_reads(
    post: Post,
    planned_reads: list[PlannedRead],
    *,
    deps: ReadBack,
    reader: Reader | None,
    now: datetime,
) -> dict[str, Seen]:
    """Make ``planned_reads`` (from :func:`plan_reads`) and write what each found."""
    read = reader or read_on_network(deps.http)
    seen: dict[str, Seen] = {}
    for planned in planned_reads:
        seen[planned.channel_id] = outcome = read(planned)
        if outcome == "present":
            deps.store.record(post.schedule_id, planned.channel_id, verified_at=now, finding=None)
        elif outcome in ("missing", "changed"):
            written = deps.store.record(
                post.schedule_id, planned.channel_id, verified_at=None, finding=outcome
            )
            if written and post.deliveries[planned.channel_id].verification != outcome:
                metric = Metric.VERIFICATION_FINDINGS  # once per finding, as the event
                metrics.add_metric(name=metric, unit=metric.unit, value=1)
    return seen
