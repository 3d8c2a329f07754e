"""Every platform, once: ``name -> PlatformSpec`` (``platforms/spec.py``). Adding a platform is
its adapter module plus its spec module (``platforms/<name>_spec.py``) and one line in
:data:`BUILTIN_SPECS`; every list of platforms reads this registry:

- the API: which ``platform`` a channel may have, the fields each takes and a ``PATCH`` may
  change (``models/channel_api.py``, ``logic/channels.py``), the credential check
  (``logic/network_accounts.py``), the length rule of a post's text (:func:`check_length`);
- the data layer: a channel with credentials stores them sealed (``data/channels.py``);
- the worker: one adapter per platform (:func:`get_adapter`, ``logic/network_delivery.py``),
  given the access loader (:attr:`PlatformSpec.access`) over the sealed credentials.

Importing this module imports no adapter: each spec's factory, check and access loader import
their platform's module when first called (the API's cold start). :func:`registered` adds a
spec for the duration of a test.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from scheduled_posts.models.network import ChannelLimits
from scheduled_posts.platforms import bluesky_spec, mastodon_spec, webhook_spec
from scheduled_posts.platforms.base import PlatformAdapter
from scheduled_posts.platforms.media_rules import MediaRules
from scheduled_posts.platforms.spec import PlatformSpec
from scheduled_posts.platforms.text_length import LengthViolation
from scheduled_posts.settings import Settings

if TYPE_CHECKING:
    from scheduled_posts.models.variants import NetworkOptions

#: The built-in platforms, in the order the API documents them (the OpenAPI ``Platform`` enum).
BUILTIN_SPECS: tuple[PlatformSpec, ...] = (
    webhook_spec.SPEC,
    mastodon_spec.SPEC,
    bluesky_spec.SPEC,
)
_SPECS: dict[str, PlatformSpec] = {spec.name: spec for spec in BUILTIN_SPECS}


class UnknownPlatformError(ValueError):
    """No platform is registered under that name."""


def platform_names() -> tuple[str, ...]:
    """The registered platforms' names, built-in ones first, in registration order."""
    return tuple(_SPECS)


def spec_of(platform: str) -> PlatformSpec:
    """The spec of ``platform``.

    Raises
    ------
    UnknownPlatformError
        When no platform is registered under that name.
    """
    try:
        return _SPECS[platform]
    except KeyError as exc:
        raise UnknownPlatformError(f"unknown platform {platform!r}") from exc


@contextmanager
def registered(spec: PlatformSpec) -> Iterator[PlatformSpec]:
    """Register ``spec`` for the duration of the ``with`` block (tests: a fake platform).

    Raises
    ------
    ValueError
        When a platform of that name is registered already.
    """
    if spec.name in _SPECS:
        raise ValueError(f"platform {spec.name!r} is registered already")
    _SPECS[spec.name] = spec
    try:
        yield spec
    finally:
        del _SPECS[spec.name]


def get_adapter(platform: str, *, settings: Settings, **collaborators: Any) -> PlatformAdapter:
    """Build the adapter for ``platform`` with its spec's factory.

    Parameters
    ----------
    platform
        A name from :func:`platform_names` (``"webhook"``, ``"mastodon"``, ``"bluesky"``).
    settings
        The service settings.
    collaborators
        Injectable dependencies given to the factory, which ignores those it does not know:
        ``transport=`` and ``resolver=`` (tests pass fakes), ``access=`` (``channel -> access``
        over the sealed credentials: every platform with credentials needs it),
        ``sessions=`` (Bluesky's session cache) and ``media=`` (the media bucket's bytes and
        links, a :class:`~scheduled_posts.platforms.base.MediaObjects`: Bluesky and webhooks).

    Raises
    ------
    UnknownPlatformError
        When no platform is registered under ``platform``.
    TypeError
        When a network adapter's required collaborator is missing.
    """
    return spec_of(platform).adapter(settings, **collaborators)


def check_length(
    platform: str,
    text: str,
    limits: ChannelLimits | None,
    options: NetworkOptions | None = None,
) -> list[LengthViolation]:
    """The length rules ``text`` breaks on ``platform`` with ``limits`` (empty when it fits or
    the platform has no rule, as webhooks; an unknown platform has none either); with
    ``options`` that set something, the spec's ``options_length_rule`` when it has one."""
    spec = _SPECS.get(platform)
    if spec is None or spec.length_rule is None:
        return []
    if options is not None and options.given() and spec.options_length_rule is not None:
        return spec.options_length_rule(text, options, limits)
    return spec.length_rule(text, limits)


def channel_limits(platform: str, limits: ChannelLimits | None) -> ChannelLimits | None:
    """A channel's limits as ``GET /v1/channels`` shows them: its stored ``limits`` (length
    limits; a Mastodon instance's media limits) with the media fields of its platform's
    :attr:`PlatformSpec.media_rules` narrowed by them (a Bluesky or webhook channel's media
    limits are fixed by its spec). ``None`` for a platform without media rules and no limits."""
    spec = _SPECS.get(platform)
    if spec is None or spec.media_rules is None:
        return limits
    media = spec.media_rules.with_limits(limits).limits()
    return (limits or ChannelLimits()).model_copy(update=media)


def media_rules_of(platform: str, limits: ChannelLimits | None) -> MediaRules | None:
    """The media rules of a channel of ``platform`` with its stored ``limits`` (for
    :func:`~scheduled_posts.platforms.media_rules.media_rule_errors`); ``None``: the platform
    takes no media."""
    spec = _SPECS.get(platform)
    if spec is None or spec.media_rules is None:
        return None
    return spec.media_rules.with_limits(limits)
