"""Each network's length rule for a post's text, counted as the network counts.

- **Bluesky**: ``app.bsky.feed.post`` ``text`` has ``maxGraphemes: 300`` and ``maxLength: 3000``
  (UTF-8 bytes) in the lexicon
  (https://github.com/bluesky-social/atproto/blob/main/lexicons/app/bsky/feed/post.json;
  https://atproto.com/specs/lexicon#string-formats). Graphemes are Unicode extended grapheme
  clusters (UAX #29), counted with the ``regex`` module's ``\\X``.
- **Mastodon**: at most the instance's ``configuration.statuses.max_characters`` (500 when
  absent), counted as Mastodon's ``StatusLengthValidator`` does: grapheme clusters, where every
  ``http(s)://`` URL counts as ``characters_reserved_per_url`` (23 when absent) and a mention
  ``@user@domain`` counts as ``@user``
  (https://docs.joinmastodon.org/entities/Instance/#statuses;
  https://docs.joinmastodon.org/user/posting/#links, #mentions).

A post that does not fit is refused (never truncated): the API names the channel, the rule,
the count and the limit; the worker checks again at publish time. Each rule is a platform's
``length_rule`` (applied by :func:`scheduled_posts.platforms.registry.check_length`).
"""

from __future__ import annotations

from typing import Literal

import regex
from pydantic import BaseModel, ConfigDict

from scheduled_posts.models.network import ChannelLimits

#: Bluesky's limits on ``app.bsky.feed.post`` text (lexicon ``maxGraphemes`` / ``maxLength``).
BLUESKY_MAX_GRAPHEMES = 300
BLUESKY_MAX_BYTES = 3000
#: Mastodon's defaults when ``/api/v2/instance`` does not give them.
MASTODON_DEFAULT_MAX_CHARACTERS = 500
MASTODON_DEFAULT_CHARACTERS_RESERVED_PER_URL = 23

_GRAPHEME = regex.compile(r"\X")
# Mastodon (twitter-text) URLs: a scheme, then anything up to whitespace; trailing punctuation
# is not part of the URL.
_URL = regex.compile(r"(?<![\w/])https?://[^\s<>\"]+", regex.IGNORECASE)
_URL_TRAILING = ".,:;!?'\")]}"
# Mastodon's Account::MENTION_RE: @username(@domain)?, not preceded by a word character, = or /.
_MENTION = regex.compile(
    r"(?<![=/\w])@([a-z0-9_]+(?:[.-]+[a-z0-9_]+)*)(?:@[\w.-]+\w+)?", regex.IGNORECASE
)


def bluesky_limits() -> ChannelLimits:
    """Bluesky's fixed limits (300 graphemes, 3,000 bytes)."""
    return ChannelLimits(max_graphemes=BLUESKY_MAX_GRAPHEMES, max_bytes=BLUESKY_MAX_BYTES)


def _positive(value: object, default: int) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return default


def mastodon_limits(
    max_characters: object = None, characters_reserved_per_url: object = None
) -> ChannelLimits:
    """An instance's limits from ``/api/v2/instance``; a missing or non-positive value takes
    Mastodon's default (500, 23)."""
    return ChannelLimits(
        max_characters=_positive(max_characters, MASTODON_DEFAULT_MAX_CHARACTERS),
        characters_reserved_per_url=_positive(
            characters_reserved_per_url, MASTODON_DEFAULT_CHARACTERS_RESERVED_PER_URL
        ),
    )


class LengthViolation(BaseModel):
    """One broken rule: ``rule`` (``graphemes``, ``bytes`` or ``characters``), a human
    ``description`` of it, the ``count`` of the text and the ``limit``."""

    model_config = ConfigDict(frozen=True)

    rule: Literal["graphemes", "bytes", "characters"]
    description: str
    count: int
    limit: int

    def message(self, channel_name: str) -> str:
        """``channel <name>: <description>: <count> > <limit>`` (safe to show)."""
        return (
            f"channel {channel_name}: {self.description}:"
            f" the text has {self.count}, the limit is {self.limit}"
        )


def grapheme_count(text: str) -> int:
    """Extended grapheme clusters in ``text`` (UAX #29, the ``regex`` module's ``\\X``)."""
    return sum(1 for _ in _GRAPHEME.finditer(text))


def mastodon_countable_text(text: str, characters_reserved_per_url: int) -> str:
    """``text`` with every URL replaced by ``characters_reserved_per_url`` placeholder
    characters and every ``@user@domain`` by ``@user``, as Mastodon counts it."""

    def url(match: regex.Match[str]) -> str:
        found = match.group(0)
        stripped = found.rstrip(_URL_TRAILING)
        return "x" * characters_reserved_per_url + found[len(stripped) :]

    return _MENTION.sub(r"@\1", _URL.sub(url, text))


def mastodon_length(text: str, characters_reserved_per_url: int) -> int:
    """The length Mastodon gives ``text`` (see :func:`mastodon_countable_text`)."""
    return grapheme_count(mastodon_countable_text(text, characters_reserved_per_url))


def bluesky_rule(text: str, limits: ChannelLimits | None) -> list[LengthViolation]:
    """The Bluesky rules ``text`` breaks (graphemes, then UTF-8 bytes; default
    :func:`bluesky_limits`); empty when it fits."""
    limits = limits or bluesky_limits()
    broken = []
    graphemes, max_graphemes = grapheme_count(text), limits.max_graphemes
    if max_graphemes is not None and graphemes > max_graphemes:
        broken.append(
            LengthViolation(
                rule="graphemes",
                description=f"Bluesky allows at most {max_graphemes} graphemes (UAX #29)",
                count=graphemes,
                limit=max_graphemes,
            )
        )
    size, max_bytes = len(text.encode("utf-8")), limits.max_bytes
    if max_bytes is not None and size > max_bytes:
        broken.append(
            LengthViolation(
                rule="bytes",
                description=f"Bluesky allows at most {max_bytes:,} UTF-8 bytes",
                count=size,
                limit=max_bytes,
            )
        )
    return broken


def mastodon_rule(text: str, limits: ChannelLimits | None) -> list[LengthViolation]:
    """The Mastodon rule ``text`` breaks on an instance with ``limits`` (default
    :func:`mastodon_limits`); empty when it fits."""
    limits = limits or mastodon_limits()
    reserved = limits.characters_reserved_per_url or MASTODON_DEFAULT_CHARACTERS_RESERVED_PER_URL
    maximum = limits.max_characters or MASTODON_DEFAULT_MAX_CHARACTERS
    length = mastodon_length(text, reserved)
    if length <= maximum:
        return []
    return [
        LengthViolation(
            rule="characters",
            description=(
                f"this Mastodon instance allows at most {maximum} characters"
                f" (a URL counts as {reserved}, @user@domain as @user)"
            ),
            count=length,
            limit=maximum,
        )
    ]
