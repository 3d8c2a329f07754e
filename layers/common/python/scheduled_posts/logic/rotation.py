"""Signing-secret rotation: ``POST /v1/channels/{channel_id}/rotate-secret``.

The new secret is returned once. The old one stays valid for ``SECRET_OVERLAP_SECONDS``
(default 86 400 s): during that overlap every delivery carries both signatures,
``webhook-signature: v1,<new> v1,<old>`` and ``X-Signature: t=<unix s>,v1=<new>,v1=<old>``
(``platforms/signing.py``), so a receiver can
switch to the new secret at any moment of the overlap. After it only ``v1=<new>`` is sent.
Every secret stays valid for ``SECRET_OVERLAP_SECONDS`` after it was replaced, however often
the channel is rotated meanwhile (decision "Every replaced secret keeps its own overlap"), up to
:data:`MAX_VALID_SECRETS` at once (a rotation beyond that is 409). To cut off a leaked secret at
once, rotate with ``{"revoke_previous": true}``: only the new secret is then valid.

How old a ``t`` a receiver should accept: within 300 s of its own clock, either side
(``signing.DEFAULT_TOLERANCE_SECONDS``; see the ``platforms/signing.py`` docstring). Every retry
is signed afresh, so this tolerance does not depend on retry delays.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial
from typing import Protocol, TypeVar

from scheduled_posts.clock import Clock
from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.errors import ChannelNotFoundError, StateConflictError
from scheduled_posts.logic.channels import new_signing_secret
from scheduled_posts.models.post import Channel, PreviousSecret
from scheduled_posts.observability import logger
from scheduled_posts.platforms.registry import spec_of
from scheduled_posts.settings import Settings

#: Most secrets valid at once (the current one included): each is one ``v1=`` of 64 hex
#: characters in ``X-Signature`` and one ``v1,`` of 44 in ``webhook-signature``, and a
#: receiver's header limit is usually 8 KiB.
MAX_VALID_SECRETS = 5


class SecretHolder(Protocol):
    """What holds a signing secret: a webhook channel or a notification endpoint."""

    @property
    def signing_secret(self) -> str: ...

    def valid_previous_secrets(self, now: datetime) -> list[PreviousSecret]: ...


Held = TypeVar("Held", bound=SecretHolder)


def secrets_kept_on_rotation(
    current_secret: str,
    valid_previous: list[PreviousSecret],
    *,
    now: datetime,
    overlap_seconds: int,
    revoke_previous: bool,
) -> list[PreviousSecret]:
    """The replaced secrets to keep when ``current_secret`` is replaced at ``now``, newest
    first: ``current_secret`` valid ``overlap_seconds`` more, then ``valid_previous`` (those
    still in their overlap); none with ``revoke_previous`` or a zero overlap. Shared by
    channels and notification endpoints. Pure.

    Raises
    ------
    StateConflictError
        When :data:`MAX_VALID_SECRETS` secrets would be valid at once (409).
    """
    if revoke_previous or overlap_seconds == 0:
        return []
    replaced = PreviousSecret(
        secret=current_secret, expires_at=now + timedelta(seconds=overlap_seconds)
    )
    previous = [replaced, *valid_previous]
    if len(previous) + 1 > MAX_VALID_SECRETS:
        raise StateConflictError(
            f"{MAX_VALID_SECRETS} secrets are already valid; wait for the oldest overlap "
            'to end, or rotate with {"revoke_previous": true}'
        )
    return previous


def rotate_held_secret(
    held: Held,
    write: Callable[..., Held],
    *,
    settings: Settings,
    clock: Clock,
    revoke_previous: bool,
) -> Held:
    """Replace ``held``'s signing secret by a new one through ``write`` (the store's
    ``rotate_secret`` bound to the item), keeping :func:`secrets_kept_on_rotation`; returns
    what ``write`` stored. Shared by channels and notification endpoints.

    Raises
    ------
    StateConflictError
        Too many secrets would be valid at once, or ``write`` lost to a concurrent rotation.
    """
    now = clock.now()
    previous = secrets_kept_on_rotation(
        held.signing_secret,
        held.valid_previous_secrets(now),
        now=now,
        overlap_seconds=settings.SECRET_OVERLAP_SECONDS,
        revoke_previous=revoke_previous,
    )
    return write(
        current_secret=held.signing_secret,
        new_secret=new_signing_secret(),
        previous_secrets=previous,
    )


def rotate_signing_secret(
    owner: str,
    channel_id: str,
    *,
    channels: ChannelRepository,
    settings: Settings,
    clock: Clock,
    revoke_previous: bool = False,
) -> Channel:
    """Give the owner's channel a new signing secret; the result carries it (shown only here).

    The replaced secret stays valid until ``now + SECRET_OVERLAP_SECONDS``, and so does every
    earlier one until its own end of overlap; ``revoke_previous`` ends them all now.

    Raises
    ------
    ChannelNotFoundError
        Missing or another user's channel (404).
    StateConflictError
        A concurrent rotation won, :data:`MAX_VALID_SECRETS` would be valid at once, or the
        channel is a network channel (``mastodon``, ``bluesky``), which has no signing secret
        (409; decision "Rotating the signing secret of a network channel is 409").
    """
    channel = channels.get(owner, channel_id)
    if channel is None:
        raise ChannelNotFoundError("channel not found")
    if not spec_of(channel.platform).signed:
        raise StateConflictError(
            f"{channel.platform} channels have no signing secret to rotate: only webhook "
            "deliveries are signed. To replace this channel's credentials, PATCH the channel."
        )
    rotated = rotate_held_secret(
        channel,
        partial(channels.rotate_secret, owner, channel_id),
        settings=settings,
        clock=clock,
        revoke_previous=revoke_previous,
    )
    logger.info("signing secret rotated", extra={"channel_id": channel_id})
    return rotated
