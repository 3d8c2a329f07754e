"""Which deliveries the read-back reads (``logic/verify.plan_reads``, decision "Verification on
the network"): published network deliveries with a remote id only; never a webhook, a channel
whose credentials were refused, or a private Mastodon status."""

from __future__ import annotations

from datetime import UTC, datetime

from scheduled_posts.lifecycle.states import DeliveryStatus, PostStatus
from scheduled_posts.logic.verify import plan_reads
from scheduled_posts.models.network import ChannelStatus
from scheduled_posts.models.post import Channel, Delivery, Post
from scheduled_posts.models.receipt import Receipt
from scheduled_posts.models.variants import Variant

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def _channel(channel_id: str, platform: str, **kw: object) -> Channel:
    return Channel.model_validate(
        {
            "channel_id": channel_id,
            "owner": "alice",
            "platform": platform,
            "name": channel_id,
            "url": f"https://{platform}.example",
            "signing_secret": "whsec_x",
            "created_at": NOW,
            **kw,
        }
    )


def _post(**variants: Variant) -> Post:
    ids = ["sky", "toot", "hook", "off", "late"]
    published = {
        cid: Delivery(
            channel_id=cid,
            status=DeliveryStatus.PUBLISHED,
            remote_id=f"at://did:plc:a/app.bsky.feed.post/{cid}" if cid == "sky" else "1",
            receipt=Receipt(cid="bafy") if cid == "sky" else None,
        )
        for cid in ids[:4]
    }
    published["late"] = Delivery(channel_id="late", status=DeliveryStatus.RETRY_SCHEDULED)
    return Post(
        schedule_id="s1",
        owner="alice",
        status=PostStatus.PARTIALLY_PUBLISHED,
        content="hi",
        publish_at=NOW,
        channel_ids=ids,
        deliveries=published,
        variants=variants,
        version=2,
        created_at=NOW,
        updated_at=NOW,
        shard=0,
    )


CHANNELS = {
    "sky": _channel("sky", "bluesky"),
    "toot": _channel("toot", "mastodon"),
    "hook": _channel("hook", "webhook"),
    "off": _channel("off", "mastodon", status=ChannelStatus.NEEDS_REAUTHORIZATION),
    "late": _channel("late", "bluesky"),
}


def test_plan_reads_reads_published_network_deliveries_only() -> None:
    planned = plan_reads(_post(), CHANNELS)
    assert [(p.channel_id, p.platform, p.cid) for p in planned] == [
        ("sky", "bluesky", "bafy"),
        ("toot", "mastodon", None),
    ]


def test_plan_reads_skips_a_private_mastodon_status() -> None:
    post = _post(toot=Variant.model_validate({"visibility": "private"}))
    assert [p.channel_id for p in plan_reads(post, CHANNELS)] == ["sky"]
