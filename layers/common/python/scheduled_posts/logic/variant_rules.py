"""The rules of a post's ``variants`` that need its channels (decision "A text per channel:
variants"): each variant is for a channel of ``channel_ids``, and sets only the network options
its channel's platform takes (``PlatformSpec.variant_options``). The values themselves (a
``visibility`` of Mastodon's four, at most 3 ``langs`` and 8 ``tags``) are checked by the
request model (``models/variants.py``); the length and media rules on each channel's effective
post by ``logic/network_rules.py``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scheduled_posts.models.post import Channel
from scheduled_posts.models.thread import Part
from scheduled_posts.models.variants import Effective, Variant
from scheduled_posts.platforms.registry import UnknownPlatformError, spec_of


@dataclass(frozen=True)
class Draft:
    """A post's text fields as a request leaves them (for ``effective_for``): the post's
    ``content``, ``media_ids``, ``variants`` and a thread's ``parts``."""

    content: str
    media_ids: list[str]
    variants: dict[str, Variant] = field(default_factory=dict)
    parts: list[Part] = field(default_factory=list)


def field_loc(effective: Effective | None, channel_id: str, name: str) -> list[Any]:
    """Where an error about ``name`` of a channel's effective post points: its variant's field
    when the variant sets it (``["body", "variants", <channel_id>, name]``), else the post's
    (``["body", name]``)."""
    if effective is not None and name in effective.overrides:
        return ["body", "variants", channel_id, name]
    return ["body", name]


def _takes(channel: Channel) -> frozenset[str]:
    try:
        return spec_of(channel.platform).variant_options
    except UnknownPlatformError:  # a platform no longer registered: it takes nothing
        return frozenset()


def variant_errors(
    variants: Mapping[str, Variant],
    channel_ids: Sequence[str],
    channels: Mapping[str, Channel],
) -> list[dict[str, Any]]:
    """One 422 error per variant for a channel the post does not target (``loc ["body",
    "variants", <channel_id>]``, type ``variant_channel_not_targeted``) and per network option
    a variant sets that its channel's platform does not take (``loc [..., <option>]``, type
    ``option_unsupported``, naming the options it takes). ``channels``: the caller's channels
    by id (a missing one is reported as ``channel_not_found`` already)."""
    errors: list[dict[str, Any]] = []
    for channel_id, variant in variants.items():
        loc: list[Any] = ["body", "variants", channel_id]
        if channel_id not in channel_ids:
            errors.append(
                {
                    "loc": loc,
                    "msg": f"the post does not target channel {channel_id}: a variant must be"
                    " for one of channel_ids (add the channel, or remove its variant)",
                    "type": "variant_channel_not_targeted",
                }
            )
            continue
        channel = channels.get(channel_id)
        if channel is None:
            continue
        takes = _takes(channel)
        for name in variant.options().given():
            if name in takes:
                continue
            accepted = ", ".join(sorted(takes)) or "none"
            errors.append(
                {
                    "loc": [*loc, name],
                    "msg": f"is not an option of a {channel.platform} channel (channel"
                    f" {channel.name}, channel_id {channel_id}); it takes: {accepted}",
                    "type": "option_unsupported",
                }
            )
    return errors
