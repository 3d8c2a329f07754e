"""The worker's side of network channels: adapters wired to the sealed credentials, Bluesky
sessions cached sealed on the channel, and what a refusal of the credentials does to the
channel.

- :func:`network_collaborators` gives the registry's ``access=`` (every platform's, through
  its spec's access loader) and ``sessions=`` collaborators: credentials are opened (KMS
  ``Decrypt``) per delivery and live only in memory as ``SecretStr``.
- :class:`ChannelSessionCache` keeps a Bluesky session per channel: in this process's memory,
  and sealed on the channel item (``session``) so another worker reuses it instead of logging
  in again (``createSession`` is rate-limited by the PDS far more tightly than writes).
- :func:`record_refusal`: a delivery that ended ``reauthorization_required`` marks its channel
  ``needs_reauthorization`` (only while it still holds the refused credentials), so later
  deliveries fail at once until a ``PATCH`` replaces them.
"""

from __future__ import annotations

from typing import Any

from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.data.credentials import CredentialCipher, CredentialsUnavailableError
from scheduled_posts.data.media_objects import S3MediaObjects
from scheduled_posts.data.network_media import NetworkMediaLog
from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.logic.network_accounts import ChannelSecrets
from scheduled_posts.models.network import ChannelStatus
from scheduled_posts.models.post import Channel
from scheduled_posts.observability import logger
from scheduled_posts.platforms.base import DeliveryResult, PlatformAdapter
from scheduled_posts.platforms.bluesky import BlueskySession
from scheduled_posts.platforms.registry import get_adapter, platform_names
from scheduled_posts.settings import Settings


class ChannelSessionCache:
    """A Bluesky :class:`~scheduled_posts.platforms.bluesky.SessionCache` backed by the channel
    item (sealed) and this process's memory."""

    def __init__(self, channels: ChannelRepository, secrets: ChannelSecrets) -> None:
        self.channels = channels
        self.secrets = secrets
        self._memory: dict[str, BlueskySession | None] = {}

    def get(self, channel: Channel) -> BlueskySession | None:
        if channel.channel_id in self._memory:
            return self._memory[channel.channel_id]
        session = self.secrets.open_session(channel)
        self._memory[channel.channel_id] = session
        return session

    def put(self, channel: Channel, session: BlueskySession | None) -> None:
        self._memory[channel.channel_id] = session
        try:
            sealed = self.secrets.seal_session(channel, session) if session else None
            self.channels.put_session(channel.owner, channel.channel_id, sealed)
        except Exception:  # the cache is an optimisation: a failure costs one more login
            logger.warning("session not cached", extra={"channel_id": channel.channel_id})


def network_collaborators(
    settings: Settings,
    *,
    channels: ChannelRepository,
    secrets: ChannelSecrets | None = None,
) -> dict[str, Any]:
    """The registry collaborators of the network adapters (see the module docstring)."""
    secrets = secrets or ChannelSecrets(CredentialCipher(settings.CREDENTIALS_KEY_ID))

    def access(channel: Channel) -> Any:
        try:
            return secrets.access(channel)
        except CredentialsUnavailableError as exc:
            # KMS throttling or an outage is the usual cause: retry with the backoff.
            raise RetryableDeliveryError(f"credentials could not be opened: {exc}") from exc

    return {
        "access": access,
        "sessions": ChannelSessionCache(channels, secrets),
        # the network's ids of uploaded media, stored before the post uses them
        "network_media": NetworkMediaLog(settings.POSTS_TABLE_NAME),
        # the media bucket's bytes and short-lived links (webhook bodies)
        "media": S3MediaObjects(settings.MEDIA_BUCKET_NAME),
    }


def record_refusal(
    channel: Channel, result: DeliveryResult, *, channels: ChannelRepository
) -> bool:
    """Mark ``channel`` ``needs_reauthorization`` when ``result`` says the network refused its
    credentials; True when the channel was marked (False: another outcome, or the channel's
    credentials were replaced or it was deleted meanwhile)."""
    if result.reason != "reauthorization_required" or channel.credentials is None:
        return False
    if channel.status == ChannelStatus.NEEDS_REAUTHORIZATION:
        return False
    marked = channels.set_status(
        channel.owner,
        channel.channel_id,
        ChannelStatus.NEEDS_REAUTHORIZATION,
        reason=(result.error or "the network refused the credentials")[:300],
        credentials=channel.credentials,
    )
    if marked:
        logger.warning(
            "channel needs reauthorization",
            extra={"channel_id": channel.channel_id, "platform": channel.platform},
        )
    return marked


def default_adapters(settings: Settings) -> dict[str, PlatformAdapter]:
    """``platform -> adapter`` for every registered platform, the network ones wired to the
    channels table and the credentials key of ``settings`` (the worker's default)."""
    channels = ChannelRepository(posts_table_name=settings.POSTS_TABLE_NAME)
    collaborators = network_collaborators(settings, channels=channels)
    return {
        name: get_adapter(name, settings=settings, **collaborators) for name in platform_names()
    }
