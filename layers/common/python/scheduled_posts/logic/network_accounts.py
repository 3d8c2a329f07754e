"""Network channel credentials: the check with the network on create and edit, and sealing
(issue 12).

- Mastodon: ``GET /api/v1/accounts/verify_credentials`` then ``GET /api/v2/instance``
  (:meth:`~scheduled_posts.platforms.mastodon.MastodonClient.verify`).
- Bluesky: ``com.atproto.server.createSession``
  (:meth:`~scheduled_posts.platforms.bluesky.BlueskyClient.create_session`); the session it
  opens is cached (sealed) on the channel, so the first delivery need not log in again.

A refusal is a 422 problem quoting the network's reason (never the credential); an unreachable
network, a timeout, a 429 or a 5xx is a 502 problem, and nothing is stored. Credentials are
sealed with :class:`~scheduled_posts.data.credentials.CredentialCipher` under an encryption
context naming the owner, the channel and the purpose.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import SecretStr

from scheduled_posts.data.credentials import CredentialCipher, CredentialsUnavailableError
from scheduled_posts.errors import NetworkUnavailableError, ValidationFailedError
from scheduled_posts.models.network import ChannelAccount, ChannelLimits
from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.bluesky import (
    DEFAULT_SERVICE_URL,
    BlueskyAccess,
    BlueskyClient,
    BlueskySession,
)
from scheduled_posts.platforms.http import (
    CredentialsRefusedError,
    MethodTransport,
    OutboundError,
    OutboundHttp,
)
from scheduled_posts.platforms.mastodon import MastodonAccess, MastodonClient
from scheduled_posts.platforms.text_length import bluesky_limits
from scheduled_posts.platforms.url_policy import Resolver
from scheduled_posts.settings import Settings


@dataclass(frozen=True)
class CheckedCredentials:
    """What a successful check found: the network ``url`` (instance or service), the
    ``account``, the ``limits``, the ``secret`` to seal and (Bluesky) the opened ``session``."""

    url: str
    account: ChannelAccount
    limits: ChannelLimits
    secret: dict[str, str] = field(repr=False)
    session: BlueskySession | None = field(default=None, repr=False)


def sealing_context(channel_id: str, owner: str, platform: str, purpose: str) -> dict[str, str]:
    """The KMS encryption context (and AES-GCM associated data) of a channel's sealed values."""
    return {"owner": owner, "channel_id": channel_id, "platform": platform, "purpose": purpose}


def _refused(field_name: str, exc: Exception) -> ValidationFailedError:
    return ValidationFailedError(
        "the network refused the credentials",
        [{"loc": ["body", field_name], "msg": str(exc), "type": "credentials_refused"}],
    )


def _unavailable(network: str, exc: Exception) -> NetworkUnavailableError:
    return NetworkUnavailableError(f"{network} could not check the credentials now: {exc}")


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

    def check_mastodon(self, instance_url: str, access_token: SecretStr) -> CheckedCredentials:
        """Verify a Mastodon token and read the instance's limits.

        Raises
        ------
        ValidationFailedError
            (422) The instance refused the token, or the URL policy refused ``instance_url``.
        NetworkUnavailableError
            (502) The instance could not answer now.
        """
        try:
            found = MastodonClient(self.http).verify(instance_url, access_token)
        except CredentialsRefusedError as exc:
            where = "instance_url" if "instance_url" in str(exc) else "access_token"
            raise _refused(where, exc) from exc
        except OutboundError as exc:
            raise _unavailable("the Mastodon instance", exc) from exc
        return CheckedCredentials(
            url=instance_url.rstrip("/"),
            account=ChannelAccount(id=found.account_id, acct=found.acct),
            limits=found.limits,
            secret={"access_token": access_token.get_secret_value()},
        )

    def check_bluesky(
        self, service_url: str | None, handle: str, app_password: SecretStr
    ) -> CheckedCredentials:
        """Open a Bluesky session with the handle and app password.

        Raises
        ------
        ValidationFailedError
            (422) The PDS refused them, or the URL policy refused ``service_url``.
        NetworkUnavailableError
            (502) The PDS could not answer now.
        """
        url = (service_url or DEFAULT_SERVICE_URL).rstrip("/")
        access = BlueskyAccess(
            service_url=url, handle=handle.removeprefix("@"), app_password=app_password
        )
        try:
            session = BlueskyClient(self.http).create_session(access)
        except CredentialsRefusedError as exc:
            where = "service_url" if "service_url" in str(exc) else "app_password"
            raise _refused(where, exc) from exc
        except OutboundError as exc:
            raise _unavailable("the Bluesky service", exc) from exc
        return CheckedCredentials(
            url=url,
            account=ChannelAccount(did=session.did, handle=session.handle),
            limits=bluesky_limits(),
            secret={"handle": access.handle, "app_password": app_password.get_secret_value()},
            session=session,
        )


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

    def mastodon_access(self, channel: Channel) -> MastodonAccess:
        """The decrypted access of a Mastodon channel (raises ``CredentialsUnavailableError``)."""
        opened = self._open(channel)
        return MastodonAccess(
            instance_url=channel.url,
            access_token=SecretStr(opened["access_token"]),
            account_id=(channel.account.id if channel.account else None) or "",
            limits=channel.limits or ChannelLimits(),
        )

    def bluesky_access(self, channel: Channel) -> BlueskyAccess:
        """The decrypted access of a Bluesky channel (raises ``CredentialsUnavailableError``)."""
        opened = self._open(channel)
        return BlueskyAccess(
            service_url=channel.url,
            handle=opened["handle"],
            app_password=SecretStr(opened["app_password"]),
        )
