"""What a platform is, in one place: :class:`PlatformSpec` (the registry of them:
``platforms/registry.py``).

A spec names the platform and gives everything the API, the data layer and the worker ask
about it: the adapter factory (imported lazily, so the API's cold start does not load every
adapter), which ``POST``/``PATCH /v1/channels`` fields it takes, the credential check and the
access loader (for a network with credentials), and the length rule of a post's text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scheduled_posts.errors import NetworkUnavailableError, ValidationFailedError
from scheduled_posts.models.network import ChannelAccount, ChannelLimits
from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.media_rules import MediaRules

if TYPE_CHECKING:
    from datetime import datetime

    from scheduled_posts.models.variants import NetworkOptions
    from scheduled_posts.platforms.base import PlatformAdapter
    from scheduled_posts.platforms.http import OutboundHttp
    from scheduled_posts.platforms.text_length import LengthViolation


@dataclass(frozen=True)
class CheckedCredentials:
    """What a successful credential check found: the network ``url`` (instance or service, as
    the channel stores it), the ``account``, the ``limits``, the ``secret`` to seal and (Bluesky)
    the opened ``session``."""

    url: str
    account: ChannelAccount
    limits: ChannelLimits
    secret: dict[str, str] = field(repr=False)
    session: Any = field(default=None, repr=False)


#: ``factory(settings, **collaborators) -> PlatformAdapter``; collaborators it does not know
#: (``access=``, ``sessions=``, ``transport=``, ``resolver=`` ...) are ignored.
AdapterFactory = Callable[..., "PlatformAdapter"]
#: ``check(http, given, current) -> CheckedCredentials``: ``given`` holds the request's
#: credential fields (credentials as ``SecretStr``), ``current`` the channel a ``PATCH``
#: changes (``None`` on create). Raises ``ValidationFailedError`` (422: missing or refused
#: credentials, an unsafe URL) or ``NetworkUnavailableError`` (502: the network cannot answer).
CredentialCheck = Callable[["OutboundHttp", Mapping[str, Any], Channel | None], CheckedCredentials]
#: ``access(channel, opened) -> <the adapter's access>``: what a delivery needs, from the
#: channel and its opened (decrypted) credentials.
AccessLoader = Callable[[Channel, dict[str, str]], Any]
#: ``rule(text, limits) -> violations`` (empty when the text fits), counted as the network does.
LengthRule = Callable[[str, ChannelLimits | None], "list[LengthViolation]"]
#: ``rule(text, options, limits) -> violations``: the length rule when network options count
#: toward it (Mastodon's ``spoiler_text``).
#: ``(channel, schedule_id, publish_at) -> URL | None``: the public page a delivery will have,
#: known before publishing (Bluesky's deterministic record key); ``None``: not known.
PlannedUrl = Callable[[Channel, str, "datetime"], str | None]
OptionsLengthRule = Callable[[str, "NetworkOptions", ChannelLimits | None], "list[LengthViolation]"]
#: ``key(url, account) -> identity``: two credentials of one channel are the same account when
#: their keys are equal.
AccountKey = Callable[[str, ChannelAccount | None], tuple[str | None, ...]]


def account_on_instance(url: str, account: ChannelAccount | None) -> tuple[str | None, ...]:
    """The network's origin and the account ``id``: an id is unique on its instance only
    (Mastodon account ids, https://docs.joinmastodon.org/entities/Account/#id)."""
    return (url.rstrip("/").lower(), account.id if account else None)


def account_did(url: str, account: ChannelAccount | None) -> tuple[str | None, ...]:
    """The account's DID, whatever its PDS: an account that moves to another PDS keeps its DID
    (https://atproto.com/guides/account-migration)."""
    return (account.did if account else None,)


@dataclass(frozen=True)
class PlatformSpec:
    """One platform.

    Attributes
    ----------
    name
        The ``platform`` of a channel (``POST /v1/channels``), e.g. ``"mastodon"``.
    adapter
        Builds the worker's adapter (:data:`AdapterFactory`); import the adapter's module
        inside it.
    required_fields, optional_fields
        The fields of ``ChannelCreate``/``ChannelPatch`` a create of this platform must and may
        give besides ``platform``, ``name`` and ``rate_limit_per_minute``; any other of those
        fields is a 422. Each must be a field of both models (a test checks it).
    patch_fields
        Of those, the ones a ``PATCH`` may change.
    check
        The credential check (:data:`CredentialCheck`); ``None`` for a platform without
        credentials, whose ``url`` is checked by the outbound URL policy instead (webhook).
    access
        Builds the adapter's access from the opened credentials (:data:`AccessLoader`); needed
        with ``check``.
    length_rule
        The network's length rule (:data:`LengthRule`); ``None``: no rule beyond the API's
        5,000 code points.
    account_key
        Which account credentials belong to (:data:`AccountKey`): new credentials of another
        account are refused on a ``PATCH`` unless it asks ``"switch_account": true``.
    signed
        Deliveries are signed with the channel's signing secret (webhook): the secret is shown
        on create and can be rotated.
    publishes_media
        The adapter publishes a post's media (webhook, Mastodon, Bluesky). Posts with media for
        a channel of a platform without it are refused (decision "Media refused for network
        channels until they can be published"), never published as text alone.
    media_rules
        The media a post to this platform may carry (:class:`~scheduled_posts.platforms.
        media_rules.MediaRules`: counts, kinds, mixing, sizes, alt text; checked with
        ``media_rule_errors``); ``None``: the platform takes no media.
    variant_options
        The network options (``models/variants.py``, ``OPTION_FIELDS``) a variant for a
        channel of this platform may set; any other is a 422 naming it (decision "A text per
        channel: variants").
    planned_url
        The public page of a delivery before it is published (:data:`PlannedUrl`, Bluesky: from
        the record key the adapter will write); ``None``: the network chooses the address.
    options_length_rule
        The length rule when options are set (:data:`OptionsLengthRule`, Mastodon: the
        ``spoiler_text`` counts); ``None``: ``length_rule`` alone.
    """

    name: str
    adapter: AdapterFactory
    required_fields: tuple[str, ...]
    optional_fields: tuple[str, ...] = ()
    patch_fields: frozenset[str] = frozenset()
    check: CredentialCheck | None = None
    access: AccessLoader | None = None
    length_rule: LengthRule | None = None
    account_key: AccountKey = account_on_instance
    signed: bool = False
    publishes_media: bool = False
    media_rules: MediaRules | None = None
    variant_options: frozenset[str] = frozenset()
    options_length_rule: OptionsLengthRule | None = None
    planned_url: PlannedUrl | None = None

    @property
    def has_credentials(self) -> bool:
        """Channels of this platform hold sealed network credentials."""
        return self.check is not None


def required(name: str, value: Any) -> Any:
    """``value``, or a ``TypeError`` naming the missing ``name=`` collaborator of a factory."""
    if value is None:
        raise TypeError(f"the adapter needs the {name}= collaborator")
    return value


def missing(field_name: str, what: str) -> ValidationFailedError:
    """The 422 of a credential field a check needs (``type: missing``)."""
    return ValidationFailedError(
        what, [{"loc": ["body", field_name], "msg": "Field required", "type": "missing"}]
    )


def refused(field_name: str, exc: Exception) -> ValidationFailedError:
    """The 422 of credentials the network refused, quoting it (never the credential)."""
    return ValidationFailedError(
        "the network refused the credentials",
        [{"loc": ["body", field_name], "msg": str(exc), "type": "credentials_refused"}],
    )


def unavailable(network: str, exc: Exception) -> NetworkUnavailableError:
    """The 502 of a network that could not check the credentials now."""
    return NetworkUnavailableError(f"{network} could not check the credentials now: {exc}")
