"""Bluesky media against the reference PDS (``local/bluesky.py`` on 127.0.0.1): each item is
uploaded with ``uploadBlob`` before the ``putRecord``, the record embeds them
(``app.bsky.embed.images`` / ``app.bsky.embed.video``) with their alt texts and aspect ratios
in order, and lost answers of either call leave one record with the same blobs (decision
"Publishing media to Bluesky and webhooks")."""

from __future__ import annotations

import json
import urllib.request
import uuid
from typing import Any

import pytest
from pydantic import SecretStr

from local.bluesky import LocalPds, PdsAccount
from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.platforms.base import DeliveryRequest, PublishedMedia
from scheduled_posts.platforms.bluesky import (
    BlueskyAccess,
    BlueskyAdapter,
    BlueskySession,
    MemorySessionCache,
)
from scheduled_posts.platforms.transport import TransportError, TransportResponse, Urllib3Transport
from scheduled_posts.settings import Settings
from tests.integration.networks.test_bluesky_contract import (
    PUBLISH_AT,
    channel,
    make_request,
    posts_on_pds,
)
from tests.support.media import MemoryMediaObjects, png
from tests.support.transport import ScriptedTransport, SentRequest

UPLOAD = "/xrpc/com.atproto.repo.uploadBlob"
PUT = "/xrpc/com.atproto.repo.putRecord"
FORGED_JWT = (
    "eyJhbGciOiJIUzI1NiJ9.eyJzY29wZSI6ImNvbS5hdHByb3RvLmFjY2VzcyIsInN1YiI6ImRpZDpwbGM6eCIs"
    "ImV4cCI6MX0.abc"
)


class FaultyTransport(ScriptedTransport):
    """Sends for real; ``lose[path]`` answers of ``path`` are lost after the PDS processed the
    request (a timeout), ``fail[path]`` answers are replaced by that answer (not processed)."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = Urllib3Transport()
        self.lose: dict[str, int] = {}
        self.fail: dict[str, TransportResponse] = {}

    def answer(self, request: SentRequest) -> TransportResponse:
        if request.path in self.fail:
            return self.fail.pop(request.path)
        answer = request.forward(self.inner)
        if self.lose.get(request.path):
            self.lose[request.path] -= 1
            raise TransportError("timed out: the answer was lost", timeout=True)
        return answer


@pytest.fixture
def account(local_pds: LocalPds) -> PdsAccount:
    return local_pds.create_account(f"media{uuid.uuid4().hex[:10]}")  # a label <= 18 chars


@pytest.fixture
def transport() -> FaultyTransport:
    return FaultyTransport()


@pytest.fixture
def objects() -> MemoryMediaObjects:
    return MemoryMediaObjects()


def make_adapter(
    pds: LocalPds,
    account: PdsAccount,
    transport: FaultyTransport,
    objects: MemoryMediaObjects,
    *,
    sessions: MemorySessionCache | None = None,
) -> BlueskyAdapter:
    access = BlueskyAccess(
        service_url=pds.url, handle=account.handle, app_password=SecretStr(account.app_password)
    )
    return BlueskyAdapter(
        Settings(WEBHOOK_ALLOWED_ORIGINS="http://127.0.0.1", DELIVERY_TIMEOUT_SECONDS=20),
        access=lambda _channel: access,
        transport=transport,
        sessions=sessions,
        media=objects,
    )


def two_pngs(objects: MemoryMediaObjects) -> tuple[PublishedMedia, ...]:
    return (
        objects.add(png(40, 30), media_id="m1", width=40, height=30, alt_text="a red field"),
        objects.add(png(16, 64, (0, 90, 200)), media_id="m2", width=16, height=64, alt_text=None),
    )


def with_media(
    request: DeliveryRequest, media: tuple[PublishedMedia, ...], ids: tuple[str, ...] | None = None
) -> DeliveryRequest:
    return request.model_copy(
        update={
            "media": media,
            "media_ids": ids if ids is not None else [m.media_id for m in media],
        }
    )


def get_blob(pds: LocalPds, did: str, cid: str) -> bytes:
    url = f"{pds.url}/xrpc/com.atproto.sync.getBlob?did={did}&cid={cid}"
    with urllib.request.urlopen(url, timeout=20) as answer:
        body: bytes = answer.read()
        return body


def cids_of(post: dict[str, Any]) -> list[str]:
    return [image["image"]["ref"]["$link"] for image in post["value"]["embed"]["images"]]


def test_bluesky_media_two_pngs_are_one_record_with_alts_and_aspect_ratios_in_order(
    local_pds: LocalPds,
    account: PdsAccount,
    transport: FaultyTransport,
    objects: MemoryMediaObjects,
) -> None:
    media = two_pngs(objects)
    result = make_adapter(local_pds, account, transport, objects).deliver(
        channel(), with_media(make_request("two images"), media), now=PUBLISH_AT
    )
    [post] = posts_on_pds(local_pds, account)
    assert result.outcome == "published", result
    assert transport.paths == ["/xrpc/com.atproto.server.createSession", UPLOAD, UPLOAD, PUT]
    embed = post["value"]["embed"]
    assert embed["$type"] == "app.bsky.embed.images"
    assert [(i["alt"], i["aspectRatio"]) for i in embed["images"]] == [
        ("a red field", {"width": 40, "height": 30}),
        ("", {"width": 16, "height": 64}),
    ]
    assert [i["image"]["mimeType"] for i in embed["images"]] == ["image/png", "image/png"]
    assert result.media_remote_ids == tuple(cids_of(post))
    for item, cid in zip(media, cids_of(post), strict=True):
        assert get_blob(local_pds, account.did, cid) == objects.objects[item.object_key]


def test_bluesky_media_lost_put_record_answer_then_retry_keeps_one_record_and_its_blobs(
    local_pds: LocalPds,
    account: PdsAccount,
    transport: FaultyTransport,
    objects: MemoryMediaObjects,
) -> None:
    media = two_pngs(objects)
    adapter = make_adapter(local_pds, account, transport, objects)
    transport.lose[PUT] = 1
    with pytest.raises(RetryableDeliveryError, match="answer was lost"):
        adapter.deliver(channel(), with_media(make_request("lost put"), media), now=PUBLISH_AT)
    [written] = posts_on_pds(local_pds, account)
    transport.requests.clear()
    retry = with_media(make_request("lost put", retry=True), media)
    result = adapter.deliver(channel(), retry, now=PUBLISH_AT)
    assert result.outcome == "published", result
    assert transport.paths == ["/xrpc/com.atproto.repo.getRecord"]  # confirmed, not re-sent
    [post] = posts_on_pds(local_pds, account)
    assert post["cid"] == written["cid"]
    assert result.media_remote_ids == tuple(cids_of(post))


def test_bluesky_media_lost_upload_blob_answer_then_retry_writes_one_record(
    local_pds: LocalPds,
    account: PdsAccount,
    transport: FaultyTransport,
    objects: MemoryMediaObjects,
) -> None:
    media = two_pngs(objects)
    adapter = make_adapter(local_pds, account, transport, objects)
    transport.lose[UPLOAD] = 1
    with pytest.raises(RetryableDeliveryError, match="answer was lost"):
        adapter.deliver(channel(), with_media(make_request("lost upload"), media), now=PUBLISH_AT)
    assert posts_on_pds(local_pds, account) == []
    retry = with_media(make_request("lost upload", retry=True), media)
    result = adapter.deliver(channel(), retry, now=PUBLISH_AT)
    [post] = posts_on_pds(local_pds, account)
    assert result.outcome == "published", result
    assert [i["alt"] for i in post["value"]["embed"]["images"]] == ["a red field", ""]


def test_bluesky_media_repeat_rebuilds_a_byte_identical_record(
    local_pds: LocalPds,
    account: PdsAccount,
    transport: FaultyTransport,
    objects: MemoryMediaObjects,
) -> None:
    # A repeat that does not know of the first write uploads again: the same bytes give the
    # same blob refs, so the PDS takes the identical record as a no-op (not InvalidSwap).
    media = two_pngs(objects)
    adapter = make_adapter(local_pds, account, transport, objects)
    request = with_media(make_request("twice"), media)
    first = adapter.deliver(channel(), request, now=PUBLISH_AT)
    second = adapter.deliver(channel(), request, now=PUBLISH_AT)
    assert first.outcome == second.outcome == "published", second
    assert first.media_remote_ids == second.media_remote_ids
    assert transport.paths.count(UPLOAD) == 4
    assert len(posts_on_pds(local_pds, account)) == 1


def test_bluesky_media_one_video_is_a_video_embed(
    local_pds: LocalPds,
    account: PdsAccount,
    transport: FaultyTransport,
    objects: MemoryMediaObjects,
) -> None:
    mp4 = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom" + bytes(range(256)) * 8
    video = objects.add(
        mp4, media_id="v1", content_type="video/mp4", width=1280, height=720, alt_text="a clip"
    )
    result = make_adapter(local_pds, account, transport, objects).deliver(
        channel(), with_media(make_request("a video"), (video,)), now=PUBLISH_AT
    )
    [post] = posts_on_pds(local_pds, account)
    assert result.outcome == "published", result
    embed = post["value"]["embed"]
    assert (embed["$type"], embed["alt"], embed["aspectRatio"]) == (
        "app.bsky.embed.video",
        "a clip",
        {"width": 1280, "height": 720},
    )
    assert get_blob(local_pds, account.did, embed["video"]["ref"]["$link"]) == mp4


def test_bluesky_media_blob_over_the_pds_limit_fails_with_its_words(
    local_pds: LocalPds,
    account: PdsAccount,
    transport: FaultyTransport,
    objects: MemoryMediaObjects,
) -> None:
    big = objects.add(b"\x00" * (5 * 1024 * 1024 + 1), media_id="big", content_type="video/mp4")
    result = make_adapter(local_pds, account, transport, objects).deliver(
        channel(), with_media(make_request("too big"), (big,)), now=PUBLISH_AT
    )
    assert (result.outcome, result.reason, result.http_status) == ("failed", "refused", 413)
    assert (result.error or "").startswith("http_413: Bluesky refused media big: "), result.error
    assert PUT not in transport.paths
    assert posts_on_pds(local_pds, account) == []


def test_bluesky_media_upload_5xx_is_retried_without_a_record(
    local_pds: LocalPds,
    account: PdsAccount,
    transport: FaultyTransport,
    objects: MemoryMediaObjects,
) -> None:
    transport.fail[UPLOAD] = TransportResponse(503, {}, b'{"error":"Unavailable"}')
    with pytest.raises(RetryableDeliveryError, match="503"):
        make_adapter(local_pds, account, transport, objects).deliver(
            channel(), with_media(make_request("busy"), two_pngs(objects)), now=PUBLISH_AT
        )
    assert PUT not in transport.paths
    assert posts_on_pds(local_pds, account) == []


def test_bluesky_media_invalid_token_at_upload_is_refreshed_and_the_post_written(
    local_pds: LocalPds,
    account: PdsAccount,
    transport: FaultyTransport,
    objects: MemoryMediaObjects,
) -> None:
    sessions = MemorySessionCache()
    adapter = make_adapter(local_pds, account, transport, objects, sessions=sessions)
    good = adapter.client.create_session(
        BlueskyAccess(
            service_url=local_pds.url,
            handle=account.handle,
            app_password=SecretStr(account.app_password),
        )
    )
    stale = BlueskySession(
        did=good.did,
        handle=good.handle,
        # JWT-shaped with a bad signature: the PDS answers 400 InvalidToken (a token that is
        # not a JWT at all makes its uploadBlob answer 500)
        access_jwt=SecretStr(FORGED_JWT),
        refresh_jwt=good.refresh_jwt,
    )
    sessions.put(channel(), stale)
    transport.requests.clear()
    result = adapter.deliver(
        channel(), with_media(make_request("refreshed"), two_pngs(objects)), now=PUBLISH_AT
    )
    assert result.outcome == "published", result
    assert transport.paths[:3] == [UPLOAD, "/xrpc/com.atproto.server.refreshSession", UPLOAD]
    assert len(posts_on_pds(local_pds, account)) == 1


@pytest.mark.parametrize(
    ("case", "error"),
    [
        ("unresolved", "media_unresolved: "),
        ("changed", "media_changed: "),
        ("five", "media_refused: "),
        ("mixed", "media_refused: "),
    ],
)
def test_bluesky_media_that_cannot_be_published_fails_before_any_request(
    local_pds: LocalPds,
    account: PdsAccount,
    transport: FaultyTransport,
    objects: MemoryMediaObjects,
    case: str,
    error: str,
) -> None:
    media = two_pngs(objects)
    request = with_media(make_request("never text alone"), media)
    if case == "unresolved":  # a post made before uploads existed: opaque ids only
        request = with_media(make_request("never text alone"), (), ("opaque-1",))
    elif case == "changed":
        objects.objects[media[0].object_key] = png(41, 30)
    elif case == "five":
        many = tuple(objects.add(png(8, 8), media_id=f"i{n}") for n in range(5))
        request = with_media(request, many)
    else:
        clip = objects.add(b"\x00" * 64, media_id="v", content_type="video/mp4")
        request = with_media(request, (*media, clip))
    result = make_adapter(local_pds, account, transport, objects).deliver(
        channel(), request, now=PUBLISH_AT
    )
    assert (result.outcome, result.reason) == ("failed", "refused")
    assert (result.error or "").startswith(error), result.error
    assert transport.paths == []
    assert json.dumps(posts_on_pds(local_pds, account)) == "[]"


def test_bluesky_media_blob_over_the_outbound_body_bound_fails_unsent(
    local_pds: LocalPds,
    account: PdsAccount,
    transport: FaultyTransport,
    objects: MemoryMediaObjects,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("scheduled_posts.platforms.http.MAX_REQUEST_BODY_BYTES", 1000)
    clip = objects.add(b"\x00" * 1001, media_id="v", content_type="video/mp4")
    result = make_adapter(local_pds, account, transport, objects).deliver(
        channel(), with_media(make_request("over the bound"), (clip,)), now=PUBLISH_AT
    )
    assert (result.outcome, result.reason) == ("failed", "refused")
    assert (result.error or "").startswith("media_refused: media v is 1001 bytes"), result.error
    assert UPLOAD not in transport.paths
