"""Request and response shapes of the channel routes (``/v1/channels``), as pydantic v2 models.

Requests are validated field by field, as every API body (``models/api.py``): a failure is a
422 problem with per-field ``errors``; which fields a platform takes is its spec's
(``platforms/registry.py``). Credentials are write-only :class:`SecretStr` values.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    StrictBool,
    StrictInt,
    StrictStr,
    StringConstraints,
    model_validator,
)

from scheduled_posts.clock import format_instant
from scheduled_posts.models.channel_fields import OriginUrl, PlatformName
from scheduled_posts.models.network import ChannelLimits
from scheduled_posts.models.post import Channel
from scheduled_posts.models.post_fields import _not_blank
from scheduled_posts.platforms.registry import channel_limits, spec_of

ChannelName = Annotated[StrictStr, Field(min_length=1, max_length=100), AfterValidator(_not_blank)]
HttpUrl = Annotated[StrictStr, Field(min_length=1, max_length=2048)]
#: A credential: a :class:`SecretStr`, so it never shows in a repr, a log or an error.
Credential = Annotated[
    SecretStr,
    Field(min_length=1, max_length=4096, description="Write-only: never shown again"),
]
Handle = Annotated[
    StrictStr,
    Field(min_length=3, max_length=253, description="A Bluesky handle, e.g. alice.bsky.social"),
    StringConstraints(pattern=r"^@?[A-Za-z0-9.-]+$"),
]


def _check_platform_fields(
    platform: str, given: set[str], *, require: bool
) -> list[tuple[str, str]]:
    spec = spec_of(platform)
    takes = spec.required_fields + spec.optional_fields
    problems = [(f, f"is not a field of a {platform} channel") for f in sorted(given - set(takes))]
    if require:
        problems += [(f, "Field required") for f in spec.required_fields if f not in given]
    return problems


class ChannelCreate(BaseModel):
    """``POST /v1/channels`` body. ``webhook``: ``url``. ``mastodon``: ``instance_url`` and
    ``access_token`` (``write:statuses``). ``bluesky``: ``handle``, ``app_password`` and
    ``service_url`` (default ``https://bsky.social``). Credentials are write-only."""

    model_config = ConfigDict(extra="forbid")

    platform: PlatformName
    name: ChannelName
    url: HttpUrl | None = None
    rate_limit_per_minute: Annotated[StrictInt, Field(ge=1, le=100_000)] | None = None
    instance_url: OriginUrl | None = None
    access_token: Credential | None = None
    service_url: OriginUrl | None = None
    handle: Handle | None = None
    app_password: Credential | None = None

    @model_validator(mode="after")
    def _fields_of_the_platform(self) -> ChannelCreate:
        broken = _check_platform_fields(self.platform, set(self.credential_values()), require=True)
        if broken:
            raise ValueError("; ".join(f"{field} {msg.lower()}" for field, msg in broken))
        return self

    def credential_values(self) -> dict[str, Any]:
        """The platform fields this body sets (``url`` and the credentials, as ``SecretStr``)."""
        return {f: getattr(self, f) for f in CREDENTIAL_FIELDS if getattr(self, f) is not None}


class ChannelPatch(BaseModel):
    """``PATCH /v1/channels/{id}`` body: a new ``name`` and/or new credentials (checked with
    the network again; a webhook's ``url`` too). Credentials are replaced as a whole: a
    Mastodon channel takes ``access_token`` (with ``instance_url`` optional), a Bluesky channel
    ``app_password`` (with ``handle`` and ``service_url`` optional); credentials of another
    account need ``switch_account: true``."""

    model_config = ConfigDict(extra="forbid")

    name: ChannelName | None = None
    url: HttpUrl | None = None
    rate_limit_per_minute: Annotated[StrictInt, Field(ge=1, le=100_000)] | None = None
    instance_url: OriginUrl | None = None
    access_token: Credential | None = None
    service_url: OriginUrl | None = None
    handle: Handle | None = None
    app_password: Credential | None = None
    switch_account: StrictBool = Field(
        False,
        description="New credentials of another network account than the channel's (another "
        "Mastodon account id or instance, another Bluesky DID) are a 422 unless this is true: "
        "then the channel, and its pending posts, move to that account",
    )

    @model_validator(mode="after")
    def _something(self) -> ChannelPatch:
        if not self.model_fields_set:
            raise ValueError("give at least one field to change")
        return self

    def credential_values(self) -> dict[str, Any]:
        """The platform fields this patch sets (``url`` and the credentials, as ``SecretStr``)."""
        return {f: getattr(self, f) for f in CREDENTIAL_FIELDS if getattr(self, f) is not None}


#: The fields of a channel body that belong to a platform (``url`` and the credentials): every
#: field but ``platform``, ``name`` and ``rate_limit_per_minute``. A platform's spec names which
#: of them it takes.
CREDENTIAL_FIELDS: tuple[str, ...] = tuple(
    f for f in ChannelCreate.model_fields if f not in ("platform", "name", "rate_limit_per_minute")
)


class ChannelAccountOut(BaseModel):
    """The network account: Mastodon ``id`` and ``acct``; Bluesky ``did`` and ``handle``."""

    id: str | None = None
    acct: str | None = None
    did: str | None = None
    handle: str | None = None


class ChannelLimitsOut(ChannelLimits):
    """Limits to count and upload with (``docs/networks.md``): Mastodon ``max_characters`` and
    ``characters_reserved_per_url``; Bluesky ``max_graphemes`` and ``max_bytes`` (UTF-8);
    every platform's media limits (``max_media_attachments``, ``image_size_limit`` and
    ``video_size_limit`` in bytes, ``description_limit`` in characters of alt text,
    ``supported_mime_types``)."""


class ChannelOut(BaseModel):
    """A channel as ``GET`` shows it: never a signing secret or a credential. ``url`` is the
    webhook URL, the Mastodon instance or the Bluesky service (PDS). ``status`` is
    ``needs_reauthorization`` after the network refused the credentials, until a ``PATCH``
    replaces them."""

    channel_id: str
    platform: str
    name: str
    url: str
    rate_limit_per_minute: int | None
    created_at: str
    status: str = "active"
    status_reason: str | None = None
    account: ChannelAccountOut | None = None
    limits: ChannelLimitsOut | None = None

    @classmethod
    def of(cls, channel: Channel) -> ChannelOut:
        return cls(
            channel_id=channel.channel_id,
            platform=channel.platform,
            name=channel.name,
            url=channel.url,
            rate_limit_per_minute=channel.rate_limit_per_minute,
            created_at=format_instant(channel.created_at),
            status=channel.status.value,
            status_reason=channel.status_reason,
            account=(
                ChannelAccountOut(**channel.account.model_dump()) if channel.account else None
            ),
            limits=_limits_out(channel),
        )


def _limits_out(channel: Channel) -> ChannelLimitsOut | None:
    limits = channel_limits(channel.platform, channel.limits)
    return ChannelLimitsOut(**limits.model_dump()) if limits else None


class ChannelCreated(ChannelOut):
    """``POST /v1/channels`` 201 body: the only response that carries a webhook's
    ``signing_secret`` (``null`` for network channels, which sign nothing)."""

    signing_secret: str | None

    @classmethod
    def of_new(cls, channel: Channel) -> ChannelCreated:
        secret = channel.signing_secret if spec_of(channel.platform).signed else None
        return cls(**ChannelOut.of(channel).model_dump(), signing_secret=secret)


class ChannelList(BaseModel):
    """``GET /v1/channels`` body: a page of the caller's channels, by ``channel_id``; only
    ``next_cursor: null`` ends the list."""

    items: list[ChannelOut]
    next_cursor: str | None = None


class SecretRotation(BaseModel):
    """``POST /v1/channels/{channel_id}/rotate-secret`` body (optional)."""

    model_config = ConfigDict(extra="forbid")

    revoke_previous: StrictBool = Field(
        False,
        description="End the overlap of every earlier secret now (a leaked secret): only the "
        "new secret is valid afterwards",
    )
