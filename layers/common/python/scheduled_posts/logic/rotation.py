"""Signing-secret rotation: ``POST /v1/channels/{channel_id}/rotate-secret`` (issue 7).

The new secret is returned once. The old one stays valid for ``SECRET_OVERLAP_SECONDS``
(default 86 400 s): during that overlap every delivery carries both signatures,
``X-Signature: t=<unix s>,v1=<new>,v1=<old>`` (``platforms/signing.py``), so a receiver can
switch to the new secret at any moment of the overlap. After it only ``v1=<new>`` is sent.
Rotating again within the overlap drops the oldest secret at once (only two are ever valid).

How old a ``t`` a receiver should accept: within 300 s of its own clock, either side
(``signing.DEFAULT_TOLERANCE_SECONDS``; see the ``platforms/signing.py`` docstring). Every retry
is signed afresh, so this tolerance does not depend on retry delays.
"""

from __future__ import annotations

from datetime import timedelta

from scheduled_posts.clock import Clock
from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.errors import ChannelNotFoundError
from scheduled_posts.logic.channels import new_signing_secret
from scheduled_posts.models.post import Channel
from scheduled_posts.observability import logger
from scheduled_posts.settings import Settings


def rotate_signing_secret(
    owner: str,
    channel_id: str,
    *,
    channels: ChannelRepository,
    settings: Settings,
    clock: Clock,
) -> Channel:
    """Give the owner's channel a new signing secret; the result carries it (shown only here).

    Raises
    ------
    ChannelNotFoundError
        Missing or another user's channel (404).
    StateConflictError
        A concurrent rotation won (409).
    """
    channel = channels.get(owner, channel_id)
    if channel is None:
        raise ChannelNotFoundError("channel not found")
    now = clock.now()
    rotated = channels.rotate_secret(
        owner,
        channel_id,
        current_secret=channel.signing_secret,
        new_secret=new_signing_secret(),
        previous_expires_at=now + timedelta(seconds=settings.SECRET_OVERLAP_SECONDS),
    )
    logger.info("signing secret rotated", extra={"channel_id": channel_id})
    return rotated
