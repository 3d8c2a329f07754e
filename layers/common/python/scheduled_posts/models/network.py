"""What a network channel (``mastodon``, ``bluesky``) keeps besides a webhook's fields: the
account the credential check found, the length limits clients should count with, and whether
the network still accepts the credentials (issue 12)."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class ChannelStatus(StrEnum):
    """``active``, or ``needs_reauthorization`` after the network refused the credentials
    (401/403) until they are replaced with ``PATCH /v1/channels/{id}``."""

    ACTIVE = "active"
    NEEDS_REAUTHORIZATION = "needs_reauthorization"


class ChannelAccount(BaseModel):
    """The network account of a channel, in each network's terms: Mastodon ``id`` and ``acct``;
    Bluesky ``did`` and ``handle``. Fields of the other network are ``None``."""

    model_config = ConfigDict(frozen=True)

    id: str | None = None
    acct: str | None = None
    did: str | None = None
    handle: str | None = None


class ChannelLimits(BaseModel):
    """A channel's length limits, as ``GET /v1/channels`` shows them so clients count as the
    server does (rules: ``platforms/text_length.py``).

    Mastodon: ``max_characters`` and ``characters_reserved_per_url``. Bluesky: ``max_graphemes``
    and ``max_bytes`` (UTF-8). Fields of the other network are ``None``.
    """

    model_config = ConfigDict(frozen=True)

    max_characters: int | None = None
    characters_reserved_per_url: int | None = None
    max_graphemes: int | None = None
    max_bytes: int | None = None
