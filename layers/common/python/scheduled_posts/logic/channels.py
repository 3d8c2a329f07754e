"""Channels: where a post is delivered (``webhook`` first).

The signing secret (``whsec_`` + 64 hex characters, 256 bits from :mod:`secrets`) is created
here, returned by :func:`create_channel` once, and never logged.
"""

from __future__ import annotations

import secrets
import uuid

from scheduled_posts.clock import Clock
from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.errors import ChannelNotFoundError, ValidationFailedError
from scheduled_posts.logic.cursor import CHANNELS_QUERY, CursorCodec
from scheduled_posts.models.api import ChannelCreate, Platform
from scheduled_posts.models.post import Channel
from scheduled_posts.observability import logger
from scheduled_posts.platforms.url_policy import (
    Resolver,
    UnsafeDestinationError,
    check_destination,
)
from scheduled_posts.settings import Settings

SIGNING_SECRET_PREFIX = "whsec_"  # noqa: S105 - a prefix, not a secret


def new_signing_secret() -> str:
    """``whsec_`` + ``secrets.token_hex(32)`` (256 random bits)."""
    return SIGNING_SECRET_PREFIX + secrets.token_hex(32)


def create_channel(
    request: ChannelCreate,
    *,
    owner: str,
    channels: ChannelRepository,
    settings: Settings,
    clock: Clock,
    resolver: Resolver,
) -> Channel:
    """Create a channel of ``owner``; the result carries the new signing secret.

    Raises
    ------
    ValidationFailedError
        (422 on ``url``) when the URL breaks the destination policy
        (:func:`scheduled_posts.platforms.url_policy.check_destination`).
    """
    if request.platform == Platform.WEBHOOK:
        try:
            check_destination(
                request.url,
                allowed_origins=settings.allowed_origins,
                resolver=resolver,
                allowed_ports=settings.allowed_ports,
                refused_ports=settings.refused_ports,
            )
        except UnsafeDestinationError as exc:
            raise ValidationFailedError(
                "the channel URL is not allowed",
                [{"loc": ["body", "url"], "msg": str(exc), "type": "unsafe_destination"}],
            ) from exc
    channel = Channel(
        channel_id=str(uuid.uuid4()),
        owner=owner,
        platform=request.platform.value,
        name=request.name,
        url=request.url,
        rate_limit_per_minute=request.rate_limit_per_minute,
        signing_secret=new_signing_secret(),
        created_at=clock.now(),
    )
    channels.put_new(channel, max_channels=settings.MAX_CHANNELS_PER_USER)
    logger.info(
        "channel created", extra={"channel_id": channel.channel_id, "platform": channel.platform}
    )
    return channel


def get_channel(owner: str, channel_id: str, *, channels: ChannelRepository) -> Channel:
    """The owner's channel.

    Raises
    ------
    ChannelNotFoundError
        When missing or another user's.
    """
    channel = channels.get(owner, channel_id)
    if channel is None:
        raise ChannelNotFoundError("channel not found")
    return channel


def list_channels(owner: str, *, channels: ChannelRepository) -> list[Channel]:
    """Every channel of the owner (at most ``MAX_CHANNELS_PER_USER``, plus any made before the
    limit existed)."""
    return channels.list(owner)


def list_channel_page(
    owner: str,
    *,
    limit: int,
    cursor: str | None,
    codec: CursorCodec,
    channels: ChannelRepository,
) -> tuple[list[Channel], str | None]:
    """A page of the owner's channels by ``channel_id``: at most ``limit`` (1-100), and the
    cursor of the next page (``None`` at the end), like ``GET /v1/scheduled-posts``.

    Raises
    ------
    InvalidCursorError
        The cursor was forged, altered, issued to another user or for another list.
    """
    after = codec.decode(cursor, owner=owner, query=CHANNELS_QUERY) if cursor else None
    page, last = channels.list_page(owner, after=after, limit=limit)
    next_cursor = codec.encode(owner=owner, last_key=last, query=CHANNELS_QUERY) if last else None
    return page, next_cursor


def delete_channel(owner: str, channel_id: str, *, channels: ChannelRepository) -> None:
    """Delete the owner's channel; pending deliveries to it become ``skipped`` (the worker).

    Raises
    ------
    ChannelNotFoundError
        When missing or another user's.
    """
    channels.delete(owner, channel_id)
    logger.info("channel deleted", extra={"channel_id": channel_id})
