"""The ``webhook`` platform's spec: a signed POST to the channel's ``url``
(``platforms/webhook.py``), checked by the outbound URL policy; no credentials, no length
rule; media are listed in the signed body with download links (``platforms/webhook_media.py``)."""

from __future__ import annotations

from typing import Any

from scheduled_posts.platforms.base import PlatformAdapter
from scheduled_posts.platforms.media_rules import WEBHOOK_MEDIA_RULES
from scheduled_posts.platforms.spec import PlatformSpec
from scheduled_posts.settings import Settings


def _adapter(
    settings: Settings,
    *,
    transport: Any = None,
    resolver: Any = None,
    media: Any = None,
    **_: Any,
) -> PlatformAdapter:
    from scheduled_posts.platforms.webhook import WebhookAdapter

    return WebhookAdapter(settings, transport=transport, resolver=resolver, media=media)


SPEC = PlatformSpec(
    name="webhook",
    adapter=_adapter,
    required_fields=("url",),
    patch_fields=frozenset({"url"}),
    signed=True,
    publishes_media=True,
    media_rules=WEBHOOK_MEDIA_RULES,
)
