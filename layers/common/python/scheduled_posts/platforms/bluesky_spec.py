"""The ``bluesky`` platform's spec: posts in the account of ``handle`` on the PDS of
``service_url`` (default ``https://bsky.social``) with an ``app_password``; the check opens a
session (``com.atproto.server.createSession``), which the channel caches sealed; the length
rule is the lexicon's (``platforms/text_length.py``); media are published as the record's
images or video embed (``platforms/bluesky_media.py``). The adapter's module is imported when the
first adapter or check is built."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from scheduled_posts.models.network import ChannelAccount
from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.base import PlatformAdapter
from scheduled_posts.platforms.media_rules import BLUESKY_MEDIA_RULES
from scheduled_posts.platforms.spec import (
    CheckedCredentials,
    PlatformSpec,
    account_did,
    missing,
    refused,
    required,
    unavailable,
)
from scheduled_posts.platforms.text_length import bluesky_limits, bluesky_rule
from scheduled_posts.settings import Settings

if TYPE_CHECKING:
    from scheduled_posts.platforms.bluesky import BlueskyAccess
    from scheduled_posts.platforms.http import OutboundHttp


def _adapter(
    settings: Settings,
    *,
    access: Any = None,
    sessions: Any = None,
    transport: Any = None,
    resolver: Any = None,
    media: Any = None,
    thread_parts: Any = None,
    **_: Any,
) -> PlatformAdapter:
    from scheduled_posts.platforms.bluesky import BlueskyAdapter

    return BlueskyAdapter(
        settings,
        access=required("access", access),
        sessions=sessions,
        media=media,
        transport=transport,
        resolver=resolver,
        thread_parts=thread_parts,
    )


def _check(
    http: OutboundHttp, given: Mapping[str, Any], current: Channel | None
) -> CheckedCredentials:
    """Open a session (``handle`` and ``service_url`` default to the channel's on a
    ``PATCH``)."""
    from scheduled_posts.platforms.bluesky import DEFAULT_SERVICE_URL, BlueskyAccess, BlueskyClient
    from scheduled_posts.platforms.http import CredentialsRefusedError, OutboundError

    handle = given.get("handle") or (
        current.account.handle if current and current.account else None
    )
    app_password: SecretStr | None = given.get("app_password")
    if app_password is None or not handle:
        raise missing("app_password", "new Bluesky credentials need an app_password")
    url = given.get("service_url") or (current.url if current else None) or DEFAULT_SERVICE_URL
    access = BlueskyAccess(
        service_url=url.rstrip("/"), handle=handle.removeprefix("@"), app_password=app_password
    )
    try:
        session = BlueskyClient(http).create_session(access)
    except CredentialsRefusedError as exc:
        where = "service_url" if "service_url" in str(exc) else "app_password"
        raise refused(where, exc) from exc
    except OutboundError as exc:
        raise unavailable("the Bluesky service", exc) from exc
    return CheckedCredentials(
        url=access.service_url,
        account=ChannelAccount(did=session.did, handle=session.handle),
        limits=bluesky_limits(),
        secret={"handle": access.handle, "app_password": app_password.get_secret_value()},
        session=session,
    )


def _access(channel: Channel, opened: dict[str, str]) -> BlueskyAccess:
    from scheduled_posts.platforms.bluesky import BlueskyAccess

    return BlueskyAccess(
        service_url=channel.url,
        handle=opened["handle"],
        app_password=SecretStr(opened["app_password"]),
    )


def _planned_url(channel: Channel, schedule_id: str, publish_at: datetime) -> str | None:
    """The ``remote_url`` the adapter will give (``BlueskyAdapter.deliver``: the record key is
    ``atproto_text.tid`` of ``publish_at`` and the delivery), when the channel's DID is known."""
    from scheduled_posts.platforms.atproto_text import tid
    from scheduled_posts.platforms.bluesky_client import post_url

    did = channel.account.did if channel.account else None
    if not did:
        return None
    return post_url(did, tid(publish_at, schedule_id=schedule_id, channel_id=channel.channel_id))


SPEC = PlatformSpec(
    name="bluesky",
    adapter=_adapter,
    required_fields=("handle", "app_password"),
    optional_fields=("service_url",),
    patch_fields=frozenset({"service_url", "handle", "app_password"}),
    check=_check,
    access=_access,
    length_rule=bluesky_rule,
    account_key=account_did,
    publishes_media=True,
    media_rules=BLUESKY_MEDIA_RULES,
    variant_options=frozenset({"langs", "tags"}),
    planned_url=_planned_url,
)
