"""Channels: where a post is delivered (a platform of ``platforms/registry.py``: ``webhook``,
``mastodon``, ``bluesky``).

The signing secret (``whsec_`` + base64 of 32 bytes from :mod:`secrets`) is created
here, returned by :func:`create_channel` once, and never logged.
"""

from __future__ import annotations

import base64
import secrets
import uuid
from dataclasses import dataclass

from scheduled_posts.clock import Clock
from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.data.credentials import CredentialsUnavailableError
from scheduled_posts.errors import (
    ChannelNotFoundError,
    NetworkUnavailableError,
    ValidationFailedError,
)
from scheduled_posts.logic.cursor import CHANNELS_QUERY, CursorCodec
from scheduled_posts.logic.network_accounts import ChannelSecrets, CredentialChecker
from scheduled_posts.models.channel_api import ChannelCreate, ChannelPatch
from scheduled_posts.models.network import ChannelAccount, ChannelStatus
from scheduled_posts.models.post import Channel
from scheduled_posts.observability import logger
from scheduled_posts.platforms.registry import spec_of
from scheduled_posts.platforms.spec import CheckedCredentials, PlatformSpec
from scheduled_posts.platforms.url_policy import (
    Resolver,
    UnsafeDestinationError,
    check_destination,
)
from scheduled_posts.settings import Settings

SIGNING_SECRET_PREFIX = "whsec_"  # noqa: S105 - a prefix, not a secret


def new_signing_secret() -> str:
    """``whsec_`` + standard base64 (RFC 4648, padded) of 32 random bytes: a Standard Webhooks
    secret (decision "A signing secret is its own whsec_ secret")."""
    return SIGNING_SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


def check_outbound_url(
    url: str, *, settings: Settings, resolver: Resolver, subject: str = "channel"
) -> None:
    """Refuse ``url`` unless the outbound URL policy allows it (``platforms/url_policy.py``:
    ``OUTBOUND_ALLOWED_ORIGINS``, allowed and refused ports, no private addresses); used for
    webhook channels and notification endpoints (``subject`` names which in the message).

    Raises
    ------
    ValidationFailedError
        (422 at ``["body", "url"]``, type ``unsafe_destination``) with the policy's reason.
    """
    try:
        check_destination(
            url,
            allowed_origins=settings.allowed_origins,
            resolver=resolver,
            allowed_ports=settings.allowed_ports,
            refused_ports=settings.refused_ports,
        )
    except UnsafeDestinationError as exc:
        raise ValidationFailedError(
            f"the {subject} URL is not allowed",
            [{"loc": ["body", "url"], "msg": str(exc), "type": "unsafe_destination"}],
        ) from exc


@dataclass(frozen=True)
class _NetworkDeps:
    """What checking and sealing a channel's credentials needs."""

    settings: Settings
    resolver: Resolver
    checker: CredentialChecker | None
    channel_secrets: ChannelSecrets | None


def _with_network_credentials(
    channel: Channel,
    fields: ChannelCreate | ChannelPatch,
    *,
    current: Channel | None,
    deps: _NetworkDeps,
) -> Channel:
    """``channel`` with the credentials of ``fields`` (a create, or a patch over ``current``)
    checked by its platform's check and sealed."""
    if deps.channel_secrets is None:
        raise NetworkUnavailableError("no credentials key is configured")
    checker = deps.checker or CredentialChecker(deps.settings, resolver=deps.resolver)
    checked = checker.check(channel.platform, fields.credential_values(), current)
    if current is not None and isinstance(fields, ChannelPatch) and not fields.switch_account:
        _refuse_another_account(spec_of(channel.platform), current, checked)
    return _with_credentials(channel, checked, channel_secrets=deps.channel_secrets)


def _who(account: ChannelAccount | None) -> str:
    if account is None:
        return "no account"
    return f"{account.acct or account.handle} ({account.id or account.did})"


def _refuse_another_account(
    spec: PlatformSpec, current: Channel, checked: CheckedCredentials
) -> None:
    """A 422 when ``checked`` is another account than ``current``'s (the spec's
    ``account_key``): reconnecting must not move a channel's posts to another account by
    accident (decision: reconnecting with another account needs switch_account)."""
    if current.account is None:
        return
    if spec.account_key(current.url, current.account) == spec.account_key(
        checked.url, checked.account
    ):
        return
    raise ValidationFailedError(
        "the new credentials are for another account",
        [
            {
                "loc": ["body", "switch_account"],
                "msg": f"the new credentials are for {_who(checked.account)} at {checked.url},"
                f" not the channel's {_who(current.account)} at {current.url}: send"
                ' "switch_account": true to move the channel and its pending posts there',
                "type": "account_changed",
            }
        ],
    )


def _with_credentials(
    channel: Channel, checked: CheckedCredentials, *, channel_secrets: ChannelSecrets
) -> Channel:
    """``channel`` holding the checked account, limits and freshly sealed credentials, active,
    with the session the check opened (Bluesky) cached."""
    updated = channel.model_copy(
        update={
            "url": checked.url,
            "account": checked.account,
            "limits": checked.limits,
            "status": ChannelStatus.ACTIVE,
            "status_reason": None,
            "session": None,
        }
    )
    sealed = channel_secrets.seal_credentials(updated, checked.secret)
    session = None
    if checked.session is not None:
        try:
            session = channel_secrets.seal_session(updated, checked.session)
        except CredentialsUnavailableError:
            session = None  # the worker opens its own session
    return updated.model_copy(update={"credentials": sealed, "session": session})


def create_channel(
    request: ChannelCreate,
    *,
    owner: str,
    channels: ChannelRepository,
    settings: Settings,
    clock: Clock,
    resolver: Resolver,
    checker: CredentialChecker | None = None,
    channel_secrets: ChannelSecrets | None = None,
) -> Channel:
    """Create a channel of ``owner``; a webhook's result carries the new signing secret.

    A Mastodon or Bluesky channel's credentials are checked with the network first and stored
    sealed (``logic/network_accounts.py``); nothing is stored when the check fails.

    Raises
    ------
    ValidationFailedError
        (422 on ``url``) when the URL breaks the destination policy
        (:func:`scheduled_posts.platforms.url_policy.check_destination`); (422 on the
        credential field) when the network refuses the credentials.
    NetworkUnavailableError
        (502) when the network or KMS cannot answer now.
    """
    spec = spec_of(request.platform)
    channel = Channel(
        channel_id=str(uuid.uuid4()),
        owner=owner,
        platform=spec.name,
        name=request.name,
        url=request.url or "",
        rate_limit_per_minute=request.rate_limit_per_minute,
        signing_secret=new_signing_secret(),
        created_at=clock.now(),
    )
    if not spec.has_credentials:
        check_outbound_url(request.url or "", settings=settings, resolver=resolver)
    else:
        deps = _NetworkDeps(settings, resolver, checker, channel_secrets)
        channel = _with_network_credentials(channel, request, current=None, deps=deps)
    channels.put_new(channel, max_channels=settings.MAX_CHANNELS_PER_USER)
    logger.info(
        "channel created", extra={"channel_id": channel.channel_id, "platform": channel.platform}
    )
    return channel


def update_channel(
    owner: str,
    channel_id: str,
    patch: ChannelPatch,
    *,
    channels: ChannelRepository,
    settings: Settings,
    resolver: Resolver,
    checker: CredentialChecker | None = None,
    channel_secrets: ChannelSecrets | None = None,
) -> Channel:
    """``PATCH /v1/channels/{id}``: a new name, rate limit, webhook URL or network credentials
    (checked with the network again; a channel that needed reauthorization becomes active).

    Raises
    ------
    ChannelNotFoundError
        Missing or another user's channel (404).
    ValidationFailedError
        (422) A field of another platform, an unsafe URL, credentials the network refused,
        or credentials of another account without ``switch_account`` (at that field).
    NetworkUnavailableError
        (502) The network or KMS cannot answer now; nothing is changed.
    """
    channel = get_channel(owner, channel_id, channels=channels)
    spec = spec_of(channel.platform)
    _refuse_foreign_fields(spec, patch)
    updates: dict[str, object] = {}
    if patch.name is not None:
        updates["name"] = patch.name
    if "rate_limit_per_minute" in patch.model_fields_set:
        updates["rate_limit_per_minute"] = patch.rate_limit_per_minute
    updated = channel.model_copy(update=updates)
    if not spec.has_credentials and patch.url is not None:
        check_outbound_url(patch.url, settings=settings, resolver=resolver)
        updated = updated.model_copy(update={"url": patch.url})
    elif patch.credential_values():
        deps = _NetworkDeps(settings, resolver, checker, channel_secrets)
        updated = _with_network_credentials(updated, patch, current=channel, deps=deps)
    channels.replace(updated)
    logger.info(
        "channel updated",
        extra={"channel_id": channel_id, "fields": sorted(patch.model_fields_set)},
    )
    return updated


def _refuse_foreign_fields(spec: PlatformSpec, patch: ChannelPatch) -> None:
    """A 422 naming each credential field of ``patch`` the platform's ``PATCH`` does not take
    (:attr:`PlatformSpec.patch_fields`)."""
    foreign = sorted(set(patch.credential_values()) - spec.patch_fields)
    if foreign:
        raise ValidationFailedError(
            "the request is not valid",
            [
                {
                    "loc": ["body", f],
                    "msg": f"is not a field of a {spec.name} channel",
                    "type": "extra_forbidden",
                }
                for f in foreign
            ],
        )


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
