"""The networks' rules on each part of a thread (decision "Threads: content is part 1, parts are
the replies"): every reply of each channel's effective thread (its variant's ``parts``, else
the post's) must fit the channel's length rule and media rules, as part 1 must
(``logic/network_rules.py``). A 422 error names the part (``loc [..., "parts", <i>,
"content"]``, ``i`` counting from 0 for part 2, and "part <n> of <total>" in the message) and
the channel. An empty part or more than 25 parts are refused by the request model
(``models/thread.py``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from scheduled_posts.models.post import Channel
from scheduled_posts.models.thread import FirstComment
from scheduled_posts.models.variants import Effective
from scheduled_posts.platforms.base import PublishedMedia
from scheduled_posts.platforms.media_rules import media_rule_errors
from scheduled_posts.platforms.registry import check_length, media_rules_of, spec_of


def _parts_loc(found: Effective, channel_id: str) -> list[Any]:
    if "parts" in found.overrides:
        return ["body", "variants", channel_id, "parts"]
    return ["body", "parts"]


def _where(channel: Channel, index: int, total: int) -> str:
    return f"part {index + 2} of {total}, channel {channel.name} (channel_id {channel.channel_id})"


def _part_rule(channel: Channel, index: int, total: int, message: str) -> str:
    """A rule's ``message`` (which names the channel) for a part: the part, then the rule,
    then the channel's id (the channel named once)."""
    return f"part {index + 2} of {total}: {message} (channel_id {channel.channel_id})"


def _threads(
    channels: Iterable[Channel], effective: Mapping[str, Effective]
) -> Iterator[tuple[Channel, Effective, list[Any], int]]:
    """Each channel with a thread: ``(channel, its effective post, the parts' loc, parts in
    all)``."""
    for channel in channels:
        found = effective.get(channel.channel_id)
        if found is not None and found.parts:
            yield channel, found, _parts_loc(found, channel.channel_id), 1 + len(found.parts)


def part_length_errors(
    channels: Iterable[Channel], effective: Mapping[str, Effective]
) -> list[dict[str, Any]]:
    """One ``too_long`` error per part of each channel's effective thread that breaks the
    channel's length rule (with the variant's ``spoiler_text`` counted on Mastodon), and one
    ``media_unsupported`` per part with media for a platform that cannot publish them."""
    errors: list[dict[str, Any]] = []
    for channel, found, loc, total in _threads(channels, effective):
        for i, part in enumerate(found.parts):
            for violation in check_length(
                channel.platform, part.content, channel.limits, found.options
            ):
                errors.append(
                    {
                        "loc": [*loc, i, "content"],
                        "msg": _part_rule(channel, i, total, violation.message(channel.name)),
                        "type": "too_long",
                    }
                )
            if part.media_ids and not spec_of(channel.platform).publishes_media:
                errors.append(
                    {
                        "loc": [*loc, i, "media_ids"],
                        "msg": f"{_where(channel, i, total)}: this platform cannot publish "
                        f"media; the part has {len(part.media_ids)}, the limit is 0",
                        "type": "media_unsupported",
                    }
                )
    return errors


def comment_errors(
    comment: FirstComment | None, channels: Iterable[Channel]
) -> list[dict[str, Any]]:
    """One ``too_long`` error per channel whose length rule the first comment breaks
    (``loc ["body", "first_comment", "content"]``)."""
    if comment is None:
        return []
    return [
        {
            "loc": ["body", "first_comment", "content"],
            "msg": f"the first comment, channel {channel.name} (channel_id "
            f"{channel.channel_id}): {violation.message(channel.name)}",
            "type": "too_long",
        }
        for channel in channels
        for violation in check_length(channel.platform, comment.content, channel.limits)
    ]


def part_media_ids(effective: Mapping[str, Effective]) -> list[str]:
    """Every media id the channels' effective threads' replies name (to read them once)."""
    seen: dict[str, None] = {}
    for found in effective.values():
        for part in found.parts:
            seen.update(dict.fromkeys(part.media_ids))
    return list(seen)


def part_media_errors(
    channels: Iterable[Channel],
    effective: Mapping[str, Effective],
    uploads: Mapping[str, PublishedMedia],
) -> list[dict[str, Any]]:
    """One 422 error per network media rule a part's ready uploads break on a channel
    (``platforms/media_rules.py``); a part naming an id not in ``uploads`` is reported as
    ``media_not_ready`` at its index."""
    errors: list[dict[str, Any]] = []
    for channel, found, loc, total in _threads(channels, effective):
        rules = media_rules_of(channel.platform, channel.limits)
        for i, part in enumerate(found.parts):
            errors += _one_part_media(
                channel,
                rules=rules,
                media_ids=part.media_ids,
                uploads=uploads,
                loc=[*loc, i],
                index=i,
                total=total,
            )
    return errors


def _one_part_media(
    channel: Channel,
    *,
    rules: Any,
    media_ids: Sequence[str],
    uploads: Mapping[str, PublishedMedia],
    loc: list[Any],
    index: int,
    total: int,
) -> list[dict[str, Any]]:
    missing = [m for m in media_ids if m not in uploads]
    if missing:
        return [
            {
                "loc": [*loc, "media_ids"],
                "msg": f"{_where(channel, index, total)}: {missing[0]!r} is no ready upload of "
                "yours; media_ids must name your ready uploads (POST /v1/media, then complete)",
                "type": "media_not_ready",
            }
        ]
    if rules is None or not media_ids:
        return []
    return [
        {
            "loc": [*loc, "media_ids"],
            "msg": _part_rule(channel, index, total, violation.message(channel.name)),
            "type": f"media_{violation.rule}",
        }
        for violation in media_rule_errors(rules, [uploads[m] for m in media_ids])
    ]
