"""Network channel credentials: the check with the network on create and edit, and sealing.

The check is each platform's (:attr:`~scheduled_posts.platforms.spec.PlatformSpec.check`:
Mastodon ``verify_credentials`` then ``/api/v2/instance``; Bluesky ``createSession``, whose
session is cached sealed on the channel so the first delivery need not log in again).

A refusal is a 422 problem quoting the network's reason (never the credential); an unreachable
network, a timeout, a 429 or a 5xx is a 502 problem, and nothing is stored. Credentials are
sealed with :class:`~scheduled_posts.data.credentials.CredentialCipher` under an encryption
context naming the owner, the channel and the purpose.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import SecretStr

from scheduled_posts.data.credentials import CredentialCipher, CredentialsUnavailableError
from scheduled_posts.errors import NetworkUnavailableError
from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.bluesky import BlueskySession
from scheduled_posts.platforms.http import MethodTransport, OutboundHttp
from scheduled_posts.platforms.registry import spec_of
from scheduled_posts.platforms.spec import CheckedCredentials
from scheduled_posts.platforms.url_policy import Resolver
from scheduled_posts.settings import Settings


def sealing_context(channel_id: str, owner: str, platform: str, purpose: str) -> dict[str, str]:
    """The KMS encryption context (and AES-GCM associated data) of a channel's sealed values."""
    return {"owner": owner, "channel_id": channel_id, "platform": platform, "purpose": purpose}


class CredentialChecker:
    """Checks credentials with the networks under the outbound URL policy.

    Parameters
    ----------
    settings
        ``OUTBOUND_ALLOWED_ORIGINS`` and ``DELIVERY_TIMEOUT_SECONDS``.
    transport, resolver
        Injectable for tests (defaults: the production transport and DNS).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        transport: MethodTransport | None = None,
        resolver: Resolver | None = None,
    ) -> None:
        self.http = OutboundHttp.from_settings(settings, transport=transport, resolver=resolver)

    def check(
        self, platform: str, given: Mapping[str, Any], current: Channel | None = None
    ) -> CheckedCredentials:
        """Check the credential fields ``given`` (a create, or a ``PATCH`` of ``current``) with
        ``platform``'s check.

        Raises
        ------
        ValidationFailedError
            (422) Credentials missing or refused by the network, or a URL the URL policy
            refuses.
        NetworkUnavailableError
            (502) The network could not answer now.
        UnknownPlatformError
            ``platform`` is not registered.
        TypeError
            ``platform`` has no credentials.
        """
        check = spec_of(platform).check
        if check is None:
            raise TypeError(f"{platform} channels have no credentials to check")
        return check(self.http, given, current)


class ChannelSecrets:
    """Seals and opens a network channel's credentials and Bluesky session.

    Raises :class:`~scheduled_posts.data.credentials.CredentialsUnavailableError` (from
    ``open_*``) when a sealed value cannot be opened.
    """

    def __init__(self, cipher: CredentialCipher) -> None:
        self.cipher = cipher

    def seal_credentials(self, channel: Channel, secret: dict[str, str]) -> str:
        """Seal ``secret`` for ``channel``.

        Raises
        ------
        NetworkUnavailableError
            (502) KMS could not give a data key (nothing is stored).
        """
        context = sealing_context(
            channel.channel_id, channel.owner, channel.platform, "credentials"
        )
        try:
            return self.cipher.seal(secret, context=context)
        except CredentialsUnavailableError as exc:
            raise NetworkUnavailableError(f"credentials could not be sealed: {exc}") from exc

    def seal_session(self, channel: Channel, session: BlueskySession) -> str:
        """Seal a Bluesky session for ``channel`` (raises ``CredentialsUnavailableError``)."""
        context = sealing_context(channel.channel_id, channel.owner, channel.platform, "session")
        return self.cipher.seal(
            {
                "did": session.did,
                "handle": session.handle,
                "access_jwt": session.access_jwt.get_secret_value(),
                "refresh_jwt": session.refresh_jwt.get_secret_value(),
            },
            context=context,
        )

    def open_session(self, channel: Channel) -> BlueskySession | None:
        """The channel's cached session, or ``None`` (none cached, or it does not open)."""
        if not channel.session:
            return None
        context = sealing_context(channel.channel_id, channel.owner, channel.platform, "session")
        try:
            opened = self.cipher.open(channel.session, context=context)
        except CredentialsUnavailableError:
            return None
        return BlueskySession(
            did=opened["did"],
            handle=opened["handle"],
            access_jwt=SecretStr(opened["access_jwt"]),
            refresh_jwt=SecretStr(opened["refresh_jwt"]),
        )

    def _open(self, channel: Channel) -> dict[str, str]:
        if not channel.credentials:
            raise CredentialsUnavailableError("the channel has no credentials")
        context = sealing_context(
            channel.channel_id, channel.owner, channel.platform, "credentials"
        )
        return self.cipher.open(channel.credentials, context=context)

    def access(self, channel: Channel) -> Any:
        """What a delivery to ``channel`` needs, from its opened credentials (its platform's
        :attr:`~scheduled_posts.platforms.spec.PlatformSpec.access`: ``MastodonAccess``,
        ``BlueskyAccess``...).

        Raises
        ------
        CredentialsUnavailableError
            The channel has no credentials, or they do not open.
        """
        build = spec_of(channel.platform).access
        if build is None:
            raise CredentialsUnavailableError(f"{channel.platform} channels have no credentials")
        return build(channel, self._open(channel))
