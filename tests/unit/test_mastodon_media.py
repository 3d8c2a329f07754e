"""The Mastodon media client (platforms/mastodon_media.py): multipart uploads, polls and
statuses with media against the stand-in over loopback and scripted answers, and the pure
classification of each answer (ready, processing, wait, refused, reauthorize, retry)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from PIL import Image
from pydantic import SecretStr

from local.mastodon import MastodonStandIn
from local.mastodon_media import NOT_READY
from scheduled_posts.platforms import http as outbound
from scheduled_posts.platforms.http import HttpAnswer, OutboundHttp, RequestBodyTooLargeError
from scheduled_posts.platforms.mastodon import MastodonAccess
from scheduled_posts.platforms.mastodon_media import (
    MastodonMediaClient,
    MediaAnswer,
    MediaOutcome,
    classify_media,
    classify_status,
    classify_upload,
)
from scheduled_posts.platforms.transport import TransportResponse
from scheduled_posts.settings import Settings
from tests.support.transport import ScriptedTransport

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
MP4 = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom" + b"\x00" * 64


def png(color: str = "red") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (64, 48), color).save(out, format="PNG")
    return out.getvalue()


def answer(status: int, body: object = None) -> HttpAnswer:
    return HttpAnswer(status, {}, b"" if body is None else json.dumps(body).encode())


@pytest.fixture
def live() -> Iterator[tuple[MastodonStandIn, MastodonMediaClient, MastodonAccess]]:
    state = MastodonStandIn(clock=lambda: NOW)
    account = state.add_account("alice")
    settings = Settings(WEBHOOK_ALLOWED_ORIGINS="http://127.0.0.1", DELIVERY_TIMEOUT_SECONDS=5)
    with state.serving() as base:
        access = MastodonAccess(
            instance_url=base, access_token=SecretStr(account.token), account_id=account.id
        )
        yield state, MastodonMediaClient(OutboundHttp.from_settings(settings)), access


def scripted(*answers: TransportResponse) -> tuple[MastodonMediaClient, ScriptedTransport]:
    transport = ScriptedTransport(*answers)
    settings = Settings(DELIVERY_TIMEOUT_SECONDS=5)
    http = OutboundHttp.from_settings(
        settings, transport=transport, resolver=lambda _host: ["93.184.216.34"]
    )
    return MastodonMediaClient(http), transport


ACCESS = MastodonAccess(
    instance_url="https://mastodon.example", access_token=SecretStr("tok-1"), account_id="1"
)


def test_image_upload_is_ready_and_publishes_with_its_description(live) -> None:
    state, client, access = live

    uploaded = classify_upload(client.upload_media(access, png(), "image/png", description="Alt"))
    posted = client.post_status(
        access,
        "with an image",
        idempotency_key="sch_1:ch_m",
        language=None,
        media_ids=[uploaded.media_id or ""],
    )

    assert uploaded.outcome == MediaOutcome.READY
    assert classify_status(posted).outcome == MediaOutcome.PUBLISHED
    attachments = posted.json_object()["media_attachments"]
    assert [(m["id"], m["description"]) for m in attachments] == [(uploaded.media_id, "Alt")]
    assert state.media.upload_count(png()) == 1


def test_video_processing_then_status_waits_then_publishes(live) -> None:
    state, client, access = live
    uploaded = classify_upload(client.upload_media(access, MP4, "video/mp4"))
    media_id = uploaded.media_id or ""

    early = classify_status(
        client.post_status(access, "clip", idempotency_key="k", language=None, media_ids=[media_id])
    )
    polls = [classify_media(client.get_media(access, media_id)).outcome for _ in range(2)]
    late = client.post_status(
        access, "clip", idempotency_key="k", language=None, media_ids=[media_id]
    )

    assert uploaded.outcome == MediaOutcome.PROCESSING
    assert (early.outcome, early.http_status) == (MediaOutcome.WAIT, 422)
    assert early.error is not None and NOT_READY in early.error
    assert polls == [MediaOutcome.PROCESSING, MediaOutcome.READY]
    assert classify_status(late).outcome == MediaOutcome.PUBLISHED
    assert len(state.statuses) == 1 and state.media.upload_count(MP4) == 1


def test_attached_media_poll_is_missing_not_refused(live) -> None:
    _, client, access = live
    media_id = classify_upload(client.upload_media(access, png(), "image/png")).media_id or ""
    client.post_status(access, "once", idempotency_key="k", language=None, media_ids=[media_id])

    polled = classify_media(client.get_media(access, media_id))

    assert (polled.outcome, polled.http_status) == (MediaOutcome.MISSING, 404)


def test_upload_sends_multipart_with_file_description_and_token() -> None:
    client, transport = scripted(TransportResponse(200, {}, b'{"id": "7", "url": "https://x/y"}'))

    client.upload_media(
        ACCESS, b"\x89PNG-bytes", "image/png", description="A cat", focus=(0.5, -0.25)
    )

    sent = transport.requests[0]
    assert (sent.method, sent.path) == ("POST", "/api/v2/media")
    assert sent.headers["Content-Type"].startswith("multipart/form-data; boundary=")
    assert sent.headers["Authorization"] == "Bearer tok-1"
    assert b'name="file"; filename="media.png"' in sent.body
    assert b"Content-Type: image/png\r\n\r\n\x89PNG-bytes" in sent.body
    assert b'name="description"\r\n\r\nA cat' in sent.body
    assert b'name="focus"\r\n\r\n0.5,-0.25' in sent.body


def test_upload_without_description_sends_no_description_field() -> None:
    client, transport = scripted(TransportResponse(202, {}, b'{"id": "7", "url": null}'))

    client.upload_media(ACCESS, MP4, "video/mp4", description="")

    assert b'name="description"' not in transport.requests[0].body


def test_post_status_without_media_sends_the_same_body_as_before() -> None:
    client, transport = scripted(TransportResponse(200, {}, b'{"id": "1"}'))

    client.post_status(ACCESS, "hello", idempotency_key="k", language="en")

    assert json.loads(transport.requests[0].body) == {"status": "hello", "language": "en"}


def test_post_status_with_media_sends_the_ids_in_order() -> None:
    client, transport = scripted(TransportResponse(200, {}, b'{"id": "1"}'))

    client.post_status(ACCESS, "", idempotency_key="k", language=None, media_ids=["9", "3"])

    sent = transport.requests[0]
    assert json.loads(sent.body) == {"status": "", "media_ids": ["9", "3"]}
    assert sent.headers["Idempotency-Key"] == "k"


def test_a_body_over_the_bound_is_refused_before_sending(monkeypatch) -> None:
    monkeypatch.setattr(outbound, "MAX_REQUEST_BODY_BYTES", 1024)
    client, transport = scripted()

    with pytest.raises(RequestBodyTooLargeError):
        client.upload_media(ACCESS, b"\x00" * 2048, "video/mp4")

    assert transport.requests == []


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (200, {"id": "5", "url": "https://f/x.png"}, MediaAnswer(MediaOutcome.READY, 200, "5")),
        (200, {"id": "5", "url": None}, MediaAnswer(MediaOutcome.PROCESSING, 200, "5")),
        (202, {"id": "5", "url": None}, MediaAnswer(MediaOutcome.PROCESSING, 202, "5")),
    ],
)
def test_classify_upload_ready_or_processing(status: int, body: object, expected) -> None:
    assert classify_upload(answer(status, body)) == expected


@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        (422, MediaOutcome.REFUSED),
        (413, MediaOutcome.REFUSED),
        (415, MediaOutcome.REFUSED),
        (401, MediaOutcome.REAUTHORIZE),
        (403, MediaOutcome.REAUTHORIZE),
        (429, MediaOutcome.RETRY),
        (500, MediaOutcome.RETRY),
        (503, MediaOutcome.RETRY),
    ],
)
def test_classify_upload_failures_quote_the_network(status: int, outcome: MediaOutcome) -> None:
    classified = classify_upload(answer(status, {"error": "File content type is invalid"}))

    assert (classified.outcome, classified.media_id) == (outcome, None)
    assert classified.error is not None
    assert classified.error.startswith(f"http_{status}: ")
    assert classified.error.endswith("File content type is invalid")
    assert classified.rate_limited is (status == 429)


def test_classify_upload_200_without_an_id_is_retried() -> None:
    assert classify_upload(answer(200, {"url": "https://f/x"})).outcome == MediaOutcome.RETRY


@pytest.mark.parametrize(
    ("status", "body", "outcome"),
    [
        (200, {"id": "5", "url": "https://f/x.mp4"}, MediaOutcome.READY),
        (206, {"id": "5", "url": None}, MediaOutcome.PROCESSING),
        (404, {"error": "Record not found"}, MediaOutcome.MISSING),
        (422, {"error": "Error processing thumbnail for uploaded media"}, MediaOutcome.REFUSED),
        (401, {"error": "The access token is invalid"}, MediaOutcome.REAUTHORIZE),
        (429, {"error": "Too many requests"}, MediaOutcome.RETRY),
        (502, None, MediaOutcome.RETRY),
    ],
)
def test_classify_media_poll(status: int, body: object, outcome: MediaOutcome) -> None:
    assert classify_media(answer(status, body)).outcome == outcome


@pytest.mark.parametrize(
    ("status", "body", "confirmed", "outcome"),
    [
        (200, {"id": "77"}, True, MediaOutcome.PUBLISHED),
        (422, {"error": NOT_READY}, True, MediaOutcome.WAIT),
        (422, {"error": "Text can't be blank"}, True, MediaOutcome.REFUSED),
        (422, {"error": "Medien werden noch verarbeitet"}, False, MediaOutcome.WAIT),
        (422, {"error": "Cannot attach more than 4 files"}, True, MediaOutcome.REFUSED),
        (401, {"error": "The access token is invalid"}, True, MediaOutcome.REAUTHORIZE),
        (429, {"error": "Too many requests"}, True, MediaOutcome.RETRY),
        (500, None, True, MediaOutcome.RETRY),
        (200, {}, True, MediaOutcome.RETRY),
    ],
)
def test_classify_status(status: int, body: object, confirmed: bool, outcome) -> None:
    classified = classify_status(answer(status, body), media_confirmed=confirmed)

    assert classified.outcome == outcome
    if outcome == MediaOutcome.PUBLISHED:
        assert classified.media_id == "77"
