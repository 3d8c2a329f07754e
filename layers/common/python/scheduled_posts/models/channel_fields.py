"""Fields of the channel bodies that read the platform registry or have a rule of their own:
the ``platform`` name and the networks' base URLs (``models/channel_api.py`` uses them)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, PlainValidator, StrictStr
from pydantic_core import PydanticCustomError

from scheduled_posts.platforms.registry import BUILTIN_SPECS, platform_names

#: The built-in platforms as the OpenAPI document names them (built from the registry,
#: ``platforms/registry.py``; the API accepts every registered platform: :data:`PlatformName`).
Platform = StrEnum("Platform", [(spec.name.upper(), spec.name) for spec in BUILTIN_SPECS])  # type: ignore[misc]
Platform.__doc__ = "Known delivery platforms (one spec each in ``platforms/registry.py``)."


def _registered_platform(value: Any) -> str:
    """``value`` when it names a registered platform; otherwise the error pydantic gives an
    enum, listing the registered names."""
    names = platform_names()
    if isinstance(value, str) and value in names:
        return value
    quoted = [repr(name) for name in names]
    expected = f"{', '.join(quoted[:-1])} or {quoted[-1]}" if len(quoted) > 1 else quoted[0]
    raise PydanticCustomError("enum", "Input should be {expected}", {"expected": expected})


#: A registered platform's name (``platforms/registry.py``), documented as :data:`Platform`.
PlatformName = Annotated[str, PlainValidator(_registered_platform, json_schema_input_type=Platform)]


def _origin_rule(value: str) -> str:
    """A network's base URL must be an origin (RFC 6454: ``scheme://host[:port]``, an
    optional trailing ``/``): every later call, with the credential, goes under it, so a path,
    query, fragment or user info would move those calls (decision: a network's URL is an
    origin)."""
    rule = "must be an origin (scheme://host[:port], an optional trailing /)"
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError as exc:
        raise ValueError(f"{rule}: {exc}") from exc
    if not parts.scheme or not parts.netloc:
        raise ValueError(f"{rule}: the scheme or the host is missing")
    found = [
        name
        for name, present in (
            ("user info", "@" in parts.netloc),
            ("a path", parts.path not in ("", "/")),
            ("a query", "?" in value),
            ("a fragment", "#" in value),
        )
        if present
    ]
    if found:
        raise ValueError(f"{rule}, not one with {' and '.join(found)}")
    return value


OriginUrl = Annotated[
    StrictStr,
    Field(
        min_length=1,
        max_length=2048,
        description="An origin: scheme://host[:port], an optional trailing /",
    ),
    AfterValidator(_origin_rule),
]
