"""The platform registry is the one list of platforms: the API's documented enum, the fields
of the channel bodies and the specs agree, and importing it loads no adapter (cold start)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from pydantic import ValidationError

from scheduled_posts.models.channel_api import CREDENTIAL_FIELDS, ChannelCreate, ChannelPatch
from scheduled_posts.models.channel_fields import Platform
from scheduled_posts.platforms.registry import (
    BUILTIN_SPECS,
    UnknownPlatformError,
    check_length,
    platform_names,
    registered,
    spec_of,
)
from scheduled_posts.platforms.spec import PlatformSpec


def test_registry_openapi_platform_enum_equals_the_builtin_specs_in_order() -> None:
    assert [p.value for p in Platform] == [spec.name for spec in BUILTIN_SPECS]
    assert platform_names() == tuple(spec.name for spec in BUILTIN_SPECS)


@pytest.mark.parametrize("spec", BUILTIN_SPECS, ids=lambda spec: spec.name)
def test_registry_spec_fields_are_fields_of_both_channel_bodies(spec: PlatformSpec) -> None:
    takes = set(spec.required_fields + spec.optional_fields)
    assert takes <= set(CREDENTIAL_FIELDS)
    assert takes <= set(ChannelPatch.model_fields)
    assert spec.patch_fields <= takes
    assert (spec.check is None) == (spec.access is None)


def test_registry_registered_spec_is_listed_only_inside_the_block() -> None:
    fake = PlatformSpec(name="fake", adapter=lambda settings, **_: None, required_fields=())
    with registered(fake):
        assert spec_of("fake") is fake and platform_names()[-1] == "fake"
        with pytest.raises(ValueError, match="registered already"), registered(fake):
            pass
    assert "fake" not in platform_names()
    with pytest.raises(UnknownPlatformError):
        spec_of("fake")


def test_registry_length_rule_of_a_platform_without_one_is_empty() -> None:
    assert check_length("webhook", "x" * 100_000, None) == []
    assert check_length("no-such-platform", "x" * 100_000, None) == []
    assert [v.rule for v in check_length("bluesky", "x" * 301, None)] == ["graphemes"]


def test_registry_and_api_models_import_no_adapter_module() -> None:
    # Given a fresh interpreter (the API's cold start)
    code = (
        "import sys, scheduled_posts.models.api, scheduled_posts.platforms.registry\n"
        "print(sorted(m for m in sys.modules if m.startswith('scheduled_posts.platforms.')))"
    )
    # When the registry and the API models are imported
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout
    # Then no adapter (nor the outbound transport) was imported
    for heavy in ("webhook", "mastodon", "bluesky", "http", "atproto_text", "url_policy"):
        assert f"'scheduled_posts.platforms.{heavy}'" not in out, out


@pytest.mark.parametrize("value", ["myspace", 5, None, "Webhook"])
def test_registry_unknown_platform_is_the_enum_error_pydantic_gave(value: object) -> None:
    # The request field validates against the live registry; its error stays the one the
    # former enum field gave (the problem body did not change)
    with pytest.raises(ValidationError) as caught:
        ChannelCreate.model_validate({"platform": value, "name": "n", "url": "https://x.example"})
    [error] = [e for e in caught.value.errors() if e["loc"] == ("platform",)]
    assert (error["type"], error["msg"]) == (
        "enum",
        "Input should be 'webhook', 'mastodon' or 'bluesky'",
    )
