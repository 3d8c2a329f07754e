"""The networks' rules applied to a post's (or a recurring schedule's) text and media when it is
created or edited (and again by the worker or the adapters at publish time): a 422 problem names
the channel, the rule, the count and the limit (length rules: ``platforms/text_length.py``).

Media: only webhooks receive ``media_ids`` today (decision "Media refused for network channels
until they can be published"): a Mastodon or Bluesky channel would publish the text alone, so
media for one is refused rather than dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from scheduled_posts.data.channels import NETWORK_PLATFORMS
from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.text_length import check_length


def length_errors(content: str, channels: Iterable[Channel]) -> list[dict[str, Any]]:
    """One ``{"loc": ["body", "content"], "msg", "type": "too_long"}`` per broken rule of each
    channel (webhooks have none)."""
    errors = []
    for channel in channels:
        for violation in check_length(channel.platform, content, channel.limits):
            errors.append(
                {
                    "loc": ["body", "content"],
                    "msg": f"{violation.message(channel.name)} (channel_id {channel.channel_id})",
                    "type": "too_long",
                }
            )
    return errors


def refuses_media(platform: str) -> bool:
    """True for a platform whose adapter cannot publish media yet (Mastodon, Bluesky)."""
    return platform in NETWORK_PLATFORMS


def media_errors(media_ids: Sequence[str], channels: Iterable[Channel]) -> list[dict[str, Any]]:
    """One ``{"loc": ["body", "media_ids"], "msg", "type": "media_unsupported"}`` per Mastodon
    or Bluesky channel when ``media_ids`` is not empty (none for webhooks, or without media)."""
    if not media_ids:
        return []
    return [
        {
            "loc": ["body", "media_ids"],
            "msg": (
                f"channel {channel.name} (channel_id {channel.channel_id}) is a "
                f"{channel.platform} channel, which cannot publish media yet: "
                f"the post has {len(media_ids)} media_ids, the limit is 0"
            ),
            "type": "media_unsupported",
        }
        for channel in channels
        if refuses_media(channel.platform)
    ]


def channel_rule_errors(
    content: str, media_ids: Sequence[str], channels: Iterable[Channel]
) -> list[dict[str, Any]]:
    """:func:`length_errors` then :func:`media_errors` of the same channels."""
    found = list(channels)
    return length_errors(content, found) + media_errors(media_ids, found)
