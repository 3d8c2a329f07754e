"""The networks' length rules applied to a post's text when it is created or edited (and again
by the adapters at publish time): a 422 problem names the channel, the rule, the count and the
limit (each platform's ``length_rule``: ``platforms/registry.py``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.registry import check_length


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
