"""The ``mastodon`` platform's spec: statuses on the instance of ``instance_url`` with an
``access_token`` (``write:statuses``); the check is ``verify_credentials`` then
``/api/v2/instance`` (:meth:`~scheduled_posts.platforms.mastodon.MastodonClient.verify`), the
length rule the instance's (``platforms/text_length.py``). The adapter's module is imported
when the first adapter or check is built."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from scheduled_posts.models.network import ChannelAccount, ChannelLimits
from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.base import PlatformAdapter
from scheduled_posts.platforms.media_rules import MASTODON_MEDIA_RULES
from scheduled_posts.platforms.spec import (
    CheckedCredentials,
    PlatformSpec,
    missing,
    refused,
    required,
    unavailable,
)
from scheduled_posts.platforms.text_length import (
    MASTODON_DEFAULT_CHARACTERS_RESERVED_PER_URL,
    MASTODON_DEFAULT_MAX_CHARACTERS,
    LengthViolation,
    grapheme_count,
    mastodon_length,
    mastodon_rule,
)
from scheduled_posts.settings import Settings

if TYPE_CHECKING:
    from scheduled_posts.models.variants import NetworkOptions
    from scheduled_posts.platforms.http import OutboundHttp
    from scheduled_posts.platforms.mastodon import MastodonAccess


def _adapter(
    settings: Settings,
    *,
    access: Any = None,
    transport: Any = None,
    resolver: Any = None,
    media: Any = None,
    network_media: Any = None,
    thread_parts: Any = None,
    **_: Any,
) -> PlatformAdapter:
    from scheduled_posts.platforms.mastodon_adapter import MastodonAdapter

    return MastodonAdapter(
        settings,
        access=required("access", access),
        transport=transport,
        resolver=resolver,
        media=media,
        network_media=network_media,
        thread_parts=thread_parts,
    )


def _check(
    http: OutboundHttp, given: Mapping[str, Any], current: Channel | None
) -> CheckedCredentials:
    """Verify the token (``instance_url`` defaults to the channel's on a ``PATCH``)."""
    from scheduled_posts.platforms.http import CredentialsRefusedError, OutboundError
    from scheduled_posts.platforms.mastodon import MastodonClient

    instance_url = given.get("instance_url") or (current.url if current else None)
    token: SecretStr | None = given.get("access_token")
    if token is None or not instance_url:
        raise missing("access_token", "new Mastodon credentials need an access_token")
    try:
        found = MastodonClient(http).verify(instance_url, token)
    except CredentialsRefusedError as exc:
        where = "instance_url" if "instance_url" in str(exc) else "access_token"
        raise refused(where, exc) from exc
    except OutboundError as exc:
        raise unavailable("the Mastodon instance", exc) from exc
    return CheckedCredentials(
        url=instance_url.rstrip("/"),
        account=ChannelAccount(id=found.account_id, acct=found.acct),
        limits=found.limits,
        secret={"access_token": token.get_secret_value()},
    )


def _access(channel: Channel, opened: dict[str, str]) -> MastodonAccess:
    from scheduled_posts.platforms.mastodon import MastodonAccess

    return MastodonAccess(
        instance_url=channel.url,
        access_token=SecretStr(opened["access_token"]),
        account_id=(channel.account.id if channel.account else None) or "",
        limits=channel.limits or ChannelLimits(),
    )


def _status_length_rule(
    text: str, options: NetworkOptions, limits: ChannelLimits | None
) -> list[LengthViolation]:
    """:func:`mastodon_rule` with the ``spoiler_text`` counted: Mastodon's
    ``StatusLengthValidator`` counts ``[spoiler_text, countable_text(text)].join`` in grapheme
    clusters, the spoiler as it is (its URLs are not shortened)."""
    spoiler = options.spoiler_text
    if not spoiler:
        return mastodon_rule(text, limits)
    limits = limits or ChannelLimits()
    reserved = limits.characters_reserved_per_url or MASTODON_DEFAULT_CHARACTERS_RESERVED_PER_URL
    maximum = limits.max_characters or MASTODON_DEFAULT_MAX_CHARACTERS
    length = grapheme_count(spoiler) + mastodon_length(text, reserved)
    if length <= maximum:
        return []
    description = (
        f"this Mastodon instance allows at most {maximum} characters, spoiler_text included"
        f" (a URL in the text counts as {reserved}, @user@domain as @user)"
    )
    return [
        LengthViolation(rule="characters", description=description, count=length, limit=maximum)
    ]


SPEC = PlatformSpec(
    name="mastodon",
    adapter=_adapter,
    required_fields=("instance_url", "access_token"),
    patch_fields=frozenset({"instance_url", "access_token"}),
    check=_check,
    access=_access,
    length_rule=mastodon_rule,
    publishes_media=True,
    media_rules=MASTODON_MEDIA_RULES,
    variant_options=frozenset({"visibility", "spoiler_text", "sensitive"}),
    options_length_rule=_status_length_rule,
)
