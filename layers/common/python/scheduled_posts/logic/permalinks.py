"""Permalinks before publishing: the public page a delivery will have, shown while it is
scheduled, where the network lets us know it in advance (decision "Permalinks before
publishing"). Bluesky's record key is deterministic (``atproto_text.tid`` of ``publish_at``
and the delivery), so the adapter's ``remote_url`` after publishing equals the planned one;
Mastodon and webhooks choose their ids themselves, so they have none."""

from __future__ import annotations

from collections.abc import Mapping

from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.lifecycle.states import TERMINAL_DELIVERY_STATUSES
from scheduled_posts.models.post import Channel, Post
from scheduled_posts.platforms.registry import spec_of


def planned_urls(post: Post, channels: Mapping[str, Channel]) -> dict[str, str]:
    """``{channel_id: URL}`` for each delivery of ``post`` not yet final whose platform
    plans its address (``PlatformSpec.planned_url``); a channel missing from ``channels``
    (deleted) or without its account's id has none."""
    planned: dict[str, str] = {}
    for channel_id in post.channel_ids:
        delivery = post.deliveries.get(channel_id)
        if delivery is not None and delivery.status in TERMINAL_DELIVERY_STATUSES:
            continue
        channel = channels.get(channel_id)
        if channel is None:
            continue
        plan = spec_of(channel.platform).planned_url
        url = plan(channel, post.schedule_id, post.publish_at) if plan else None
        if url is not None:
            planned[channel_id] = url
    return planned


def planned_urls_of(owner: str, post: Post, channels: ChannelRepository) -> dict[str, str]:
    """:func:`planned_urls` with the post's channels read (one batch read; none when every
    delivery is final)."""
    open_ids = [
        cid
        for cid in post.channel_ids
        if (d := post.deliveries.get(cid)) is None or d.status not in TERMINAL_DELIVERY_STATUSES
    ]
    if not open_ids:
        return {}
    return planned_urls(post, channels.get_many(owner, open_ids))
