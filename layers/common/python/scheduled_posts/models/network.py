"""What a network channel (``mastodon``, ``bluesky``) keeps besides a webhook's fields: the
account the credential check found, the length limits clients should count with, and whether
the network still accepts the credentials."""

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
    """A channel's length and media limits, as ``GET /v1/channels`` shows them so clients
    count and upload as the server checks (rules: ``platforms/text_length.py``,
    ``platforms/media_rules.py``).

    Mastodon: ``max_characters`` and ``characters_reserved_per_url``. Bluesky: ``max_graphemes``
    and ``max_bytes`` (UTF-8). Fields of the other network are ``None``.

    Media, every platform: ``max_media_attachments`` per post, ``image_size_limit`` and
    ``video_size_limit`` in bytes per item (``None``: no network limit), ``description_limit``
    in characters of alt text (``None``: no cap), ``supported_mime_types`` the upload kinds the
    channel takes. A Mastodon channel holds its instance's (read by the credential check);
    the others' are fixed by their spec.
    """

    model_config = ConfigDict(frozen=True)

    max_characters: int | None = None
    characters_reserved_per_url: int | None = None
    max_graphemes: int | None = None
    max_bytes: int | None = None
    max_media_attachments: int | None = None
    image_size_limit: int | None = None
    video_size_limit: int | None = None
    description_limit: int | None = None
    supported_mime_types: tuple[str, ...] | None = None
