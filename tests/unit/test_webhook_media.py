"""A webhook's signed body lists the post's media with pre-signed download links
(``platforms/webhook_media.py``; decision "Publishing media to Bluesky and webhooks"), and the
adapters get the ``media=`` collaborator from the registry."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import SecretStr

from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.base import DeliveryRequest, PublishedMedia, ThreadPart
from scheduled_posts.platforms.bluesky import BlueskyAccess
from scheduled_posts.platforms.registry import get_adapter
from scheduled_posts.platforms.signing import verify
from scheduled_posts.platforms.webhook import WebhookAdapter
from scheduled_posts.platforms.webhook_media import MEDIA_URL_EXPIRES_SECONDS
from scheduled_posts.settings import Settings
from tests.support.media import DOWNLOAD_ORIGIN, MemoryMediaObjects, png
from tests.support.receiver import FakeReceiver, standard_webhooks_valid

NOW = datetime(2026, 11, 29, 13, 0, 0, tzinfo=UTC)
URL = "https://hooks.example.com/in"
SECRET = "new-secret"


class FixedNow:
    def now(self) -> datetime:
        return NOW


def make_channel() -> Channel:
    return Channel(
        channel_id="ch_1",
        owner="alice",
        platform="webhook",
        name="hooks",
        url=URL,
        signing_secret=SECRET,
        created_at=NOW - timedelta(days=1),
    )


def make_request(
    media: tuple[PublishedMedia, ...] = (), ids: tuple[str, ...] = ()
) -> DeliveryRequest:
    return DeliveryRequest(
        schedule_id="sch_1",
        channel_id="ch_1",
        content="look",
        media_ids=ids or tuple(m.media_id for m in media),
        media=media,
        publish_at=NOW,
        attempt=1,
        idempotency_key="sch_1:ch_1",
    )


@pytest.fixture
def receiver() -> FakeReceiver:
    fake = FakeReceiver(FixedNow())
    fake.add_secret(URL, SECRET)
    return fake


@pytest.fixture
def objects() -> MemoryMediaObjects:
    return MemoryMediaObjects()


def adapter_for(receiver: FakeReceiver, objects: MemoryMediaObjects | None) -> WebhookAdapter:
    adapter = get_adapter(
        "webhook",
        settings=Settings(),
        transport=receiver,
        resolver=receiver.resolver,
        media=objects,
    )
    assert isinstance(adapter, WebhookAdapter)
    return adapter


def two_items(objects: MemoryMediaObjects) -> tuple[PublishedMedia, ...]:
    return (
        objects.add(png(40, 30), media_id="m1", width=40, height=30, alt_text="a red field"),
        objects.add(b"\x00" * 100, media_id="v1", content_type="video/mp4", duration_seconds=2.5),
    )


def test_webhook_media_body_lists_each_item_with_a_link_in_order(
    receiver: FakeReceiver, objects: MemoryMediaObjects
) -> None:
    media = two_items(objects)
    result = adapter_for(receiver, objects).deliver(make_channel(), make_request(media), now=NOW)
    assert result.outcome == "published"
    payload = receiver.requests[0].payload
    assert payload is not None
    assert payload["media_ids"] == ["m1", "v1"]  # kept for receivers that know only the ids
    expires = "2026-11-29T14:00:00.000Z"
    assert payload["media"] == [
        {
            "media_id": "m1",
            "content_type": "image/png",
            "size": media[0].size,
            "sha256": media[0].sha256,
            "width": 40,
            "height": 30,
            "duration_seconds": None,
            "alt_text": "a red field",
            "url": f"{DOWNLOAD_ORIGIN}/media/m1?X-Amz-Expires={MEDIA_URL_EXPIRES_SECONDS}",
            "url_expires_at": expires,
        },
        {
            "media_id": "v1",
            "content_type": "video/mp4",
            "size": 100,
            "sha256": media[1].sha256,
            "width": None,
            "height": None,
            "duration_seconds": 2.5,
            "alt_text": None,
            "url": f"{DOWNLOAD_ORIGIN}/media/v1?X-Amz-Expires={MEDIA_URL_EXPIRES_SECONDS}",
            "url_expires_at": expires,
        },
    ]
    assert objects.urls == [("media/m1", 3600), ("media/v1", 3600)]


def test_webhook_media_list_is_covered_by_both_signatures(
    receiver: FakeReceiver, objects: MemoryMediaObjects
) -> None:
    adapter_for(receiver, objects).deliver(
        make_channel(), make_request(two_items(objects)), now=NOW
    )
    sent = receiver.requests[0]
    forged = json.loads(sent.body)
    forged["media"][0]["url"] = "https://attacker.example/m1"
    forged_body = json.dumps(forged, ensure_ascii=False, separators=(",", ":")).encode()
    stamp = int(NOW.timestamp())
    assert verify(sent.headers["X-Signature"], SECRET, sent.body, now=stamp)
    assert standard_webhooks_valid(sent.headers, SECRET, sent.body, at=NOW)
    assert not verify(sent.headers["X-Signature"], SECRET, forged_body, now=stamp)
    assert not standard_webhooks_valid(sent.headers, SECRET, forged_body, at=NOW)


def test_webhook_media_ids_without_resolved_media_keep_the_old_body(
    receiver: FakeReceiver, objects: MemoryMediaObjects
) -> None:
    # A post made before uploads existed: opaque media_ids, nothing resolved.
    adapter_for(receiver, objects).deliver(make_channel(), make_request(ids=("old-1",)), now=NOW)
    payload = receiver.requests[0].payload
    assert payload is not None
    assert "media" not in payload
    assert payload["media_ids"] == ["old-1"]
    assert objects.urls == []


def test_webhook_media_without_a_media_store_fails_unsent(
    receiver: FakeReceiver, objects: MemoryMediaObjects
) -> None:
    result = adapter_for(receiver, None).deliver(
        make_channel(), make_request(two_items(objects)), now=NOW
    )
    assert result.outcome == "failed"
    assert (result.error or "").startswith("media_unavailable: ")
    assert receiver.requests == []


def test_webhook_thread_parts_list_their_media_with_links_and_hashes_like_the_posts(
    receiver: FakeReceiver, objects: MemoryMediaObjects
) -> None:
    first, video = two_items(objects)
    parts = (
        ThreadPart(content="two", media_ids=("v1",), media=(video,)),
        ThreadPart(content="three"),
    )
    request = make_request((first,)).model_copy(update={"parts": parts})
    result = adapter_for(receiver, objects).deliver(make_channel(), request, now=NOW)
    assert result.outcome == "published"
    payload = receiver.requests[0].payload
    assert payload is not None
    [with_media, without] = payload["parts"]
    assert (with_media["content"], with_media["media_ids"]) == ("two", ["v1"])
    [entry] = with_media["media"]
    assert entry == {
        "media_id": "v1",
        "content_type": "video/mp4",
        "size": 100,
        "sha256": video.sha256,
        "width": None,
        "height": None,
        "duration_seconds": 2.5,
        "alt_text": None,
        "url": f"{DOWNLOAD_ORIGIN}/media/v1?X-Amz-Expires={MEDIA_URL_EXPIRES_SECONDS}",
        "url_expires_at": payload["media"][0]["url_expires_at"],
    }
    assert without == {"content": "three", "media_ids": []}  # no media: no member
    assert objects.urls == [("media/m1", 3600), ("media/v1", 3600)]


def test_webhook_thread_part_media_without_a_media_store_fails_unsent(
    receiver: FakeReceiver, objects: MemoryMediaObjects
) -> None:
    _, video = two_items(objects)
    part = ThreadPart(content="two", media_ids=("v1",), media=(video,))
    request = make_request().model_copy(update={"parts": (part,)})
    result = adapter_for(receiver, None).deliver(make_channel(), request, now=NOW)
    assert (result.outcome, (result.error or "")[:18]) == ("failed", "media_unavailable:")
    assert receiver.requests == []


def test_registry_gives_the_media_collaborator_to_bluesky(objects: MemoryMediaObjects) -> None:
    access = BlueskyAccess(handle="a.test", app_password=SecretStr("x"))
    adapter = get_adapter("bluesky", settings=Settings(), access=lambda _c: access, media=objects)
    assert adapter.media is objects  # type: ignore[attr-defined]
