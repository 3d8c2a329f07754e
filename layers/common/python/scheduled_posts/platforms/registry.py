"""Platform name -> adapter. Adding a platform is one module plus one line in ``_FACTORIES``.

The API validates ``POST /v1/channels``'s ``platform`` against the ``Platform`` enum of
``models/api.py`` (a new platform goes there too); the worker builds the adapter of each channel
with :func:`get_adapter` from :data:`KNOWN_PLATFORMS`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scheduled_posts.platforms.base import PlatformAdapter
from scheduled_posts.platforms.bluesky import BlueskyAdapter
from scheduled_posts.platforms.mastodon import MastodonAdapter
from scheduled_posts.platforms.webhook import WebhookAdapter
from scheduled_posts.settings import Settings


def _required(name: str, value: Any) -> Any:
    if value is None:
        raise TypeError(f"the adapter needs the {name}= collaborator")
    return value


def _mastodon(
    settings: Settings,
    mastodon_access: Any = None,
    transport: Any = None,
    resolver: Any = None,
    **_: Any,
) -> PlatformAdapter:
    return MastodonAdapter(
        settings,
        access=_required("mastodon_access", mastodon_access),
        transport=transport,
        resolver=resolver,
    )


def _bluesky(
    settings: Settings,
    bluesky_access: Any = None,
    sessions: Any = None,
    transport: Any = None,
    resolver: Any = None,
    **_: Any,
) -> PlatformAdapter:
    return BlueskyAdapter(
        settings,
        access=_required("bluesky_access", bluesky_access),
        sessions=sessions,
        transport=transport,
        resolver=resolver,
    )


#: ``platform -> factory(settings, **collaborators)``. Collaborators a factory does not know
#: (another platform's test fakes) are ignored. The network adapters need their credentials'
#: loaders (``mastodon_access=``, ``bluesky_access=``; ``logic/network_delivery.py`` builds
#: them from the sealed credentials) and, for Bluesky, a session cache (``sessions=``).
_FACTORIES: dict[str, Callable[..., PlatformAdapter]] = {
    "webhook": lambda settings, transport=None, resolver=None, **_: WebhookAdapter(
        settings, transport=transport, resolver=resolver
    ),
    "mastodon": _mastodon,
    "bluesky": _bluesky,
}

#: The platforms a channel may use, sorted.
KNOWN_PLATFORMS: tuple[str, ...] = tuple(sorted(_FACTORIES))


class UnknownPlatformError(ValueError):
    """No adapter is registered under that name."""


def get_adapter(platform: str, *, settings: Settings, **collaborators: Any) -> PlatformAdapter:
    """Build the adapter for ``platform``.

    Parameters
    ----------
    platform
        A name from :data:`KNOWN_PLATFORMS` (``"bluesky"``, ``"mastodon"``, ``"webhook"``).
    settings
        The service settings.
    collaborators
        Injectable dependencies passed to the factory, e.g. ``transport=`` and ``resolver=`` for
        ``webhook`` (tests pass the fake receiver and a fake resolver).

    Raises
    ------
    UnknownPlatformError
        When no adapter is registered under ``platform``.
    TypeError
        When a network adapter's required collaborator is missing.
    """
    try:
        factory = _FACTORIES[platform]
    except KeyError as exc:
        raise UnknownPlatformError(f"unknown platform {platform!r}") from exc
    return factory(settings, **collaborators)
