"""The Mastodon stand-in's media (local/mastodon_media.py) over loopback HTTP: uploads answer
200 for an image and 202 while a video or GIF processes, GET polls 206 then 200, statuses
refuse unprocessed, unknown, foreign and reused media with Mastodon's words, and show their
attachments in order with their descriptions."""

from __future__ import annotations

import http.client
import io
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from PIL import Image
from urllib3 import encode_multipart_formdata

from local.mastodon import MAX_BODY_BYTES, MastodonStandIn, parse_body
from local.mastodon_media import (
    IMAGES_AND_VIDEO,
    NOT_READY,
    PROCESSING_ERROR,
    sniff,
)

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
MP4 = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom" + b"\x00" * 64


class Clock:
    def __init__(self) -> None:
        self.instant = NOW

    def __call__(self) -> datetime:
        return self.instant


def image(kind: str = "PNG", size: tuple[int, int] = (640, 480), color: str = "red") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, format=kind)
    return out.getvalue()


class Client:
    """Requests to the stand-in over loopback as one account."""

    def __init__(self, port: int, token: str) -> None:
        self.port, self.token = port, token

    def send(
        self, method: str, path: str, body: bytes = b"", content_type: str = "", **headers: str
    ) -> tuple[int, Any]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        try:
            sent = {"Authorization": f"Bearer {self.token}", **headers}
            if body or content_type:
                sent |= {"Content-Type": content_type, "Content-Length": str(len(body))}
            connection.request(method, path, body=body or None, headers=sent)
            answer = connection.getresponse()
            return answer.status, json.loads(answer.read())
        finally:
            connection.close()

    def upload(
        self, data: bytes, description: str | None = None, name: str = "f.png", **fields: str
    ) -> tuple[int, Any]:
        form: dict[str, Any] = {"file": (name, data, "application/octet-stream"), **fields}
        if description is not None:
            form["description"] = description
        body, content_type = encode_multipart_formdata(form)
        return self.send("POST", "/api/v2/media", body, content_type)

    def status(self, text: str, media_ids: list[str], **headers: str) -> tuple[int, Any]:
        body = json.dumps({"status": text, "media_ids": media_ids}).encode()
        return self.send("POST", "/api/v1/statuses", body, "application/json", **headers)

    def media(self, media_id: str) -> tuple[int, Any]:
        return self.send("GET", f"/api/v1/media/{media_id}")


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def served(clock: Clock) -> Iterator[tuple[MastodonStandIn, int]]:
    state = MastodonStandIn(clock=clock)
    server = state.serve()
    try:
        yield state, int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def alice(served: tuple[MastodonStandIn, int]) -> Client:
    state, port = served
    return Client(port, state.add_account("alice").token)


@pytest.fixture
def bob(served: tuple[MastodonStandIn, int]) -> Client:
    state, port = served
    return Client(port, state.add_account("bob").token)


def test_image_upload_answers_200_with_the_attachment_entity(alice: Client) -> None:
    status, media = alice.upload(image(), "A red square")

    assert status == 200
    assert media["type"] == "image"
    assert media["url"].endswith(".png") and media["preview_url"]
    assert media["description"] == "A red square"
    assert isinstance(media["id"], str)
    assert media["meta"]["original"] | {"aspect": 0} == {
        "width": 640,
        "height": 480,
        "size": "640x480",
        "aspect": 0,
    }


def test_image_kind_is_read_from_the_bytes_not_the_declared_type(alice: Client) -> None:
    status, media = alice.upload(image("JPEG"), name="photo.png")

    assert (status, media["url"].endswith(".jpeg")) == (200, True)


def test_video_is_processing_202_then_206_then_200(alice: Client) -> None:
    status, media = alice.upload(MP4, name="clip.mp4")
    assert (status, media["type"], media["url"]) == (202, "video", None)

    polled, during = alice.media(media["id"])
    done, after = alice.media(media["id"])

    assert (polled, during["url"]) == (206, None)
    assert done == 200 and after["url"].endswith(".mp4")


def test_gif_is_processed_as_gifv(alice: Client) -> None:
    status, media = alice.upload(image("GIF"), name="anim.gif")

    assert (status, media["type"], media["url"]) == (202, "gifv", None)


def test_processing_can_end_on_the_clock_instead_of_polls(
    served: tuple[MastodonStandIn, int], alice: Client, clock: Clock
) -> None:
    state, _ = served
    state.media.processing_polls, state.media.processing_seconds = None, 30
    _, media = alice.upload(MP4)

    early = [alice.media(media["id"])[0] for _ in range(3)]
    clock.instant += timedelta(seconds=30)

    assert (early, alice.media(media["id"])[0]) == ([206, 206, 206], 200)


def test_failed_processing_answers_422_with_mastodons_words(
    served: tuple[MastodonStandIn, int], alice: Client
) -> None:
    served[0].media.fail_next_processing()
    _, media = alice.upload(MP4)

    assert alice.media(media["id"]) == (422, {"error": PROCESSING_ERROR})


def test_another_accounts_media_is_not_found(alice: Client, bob: Client) -> None:
    _, media = alice.upload(image())

    assert bob.media(media["id"]) == (404, {"error": "Record not found"})
    assert bob.status("mine now", [media["id"]])[0] == 422


def test_put_media_changes_the_description(alice: Client) -> None:
    _, media = alice.upload(image(), "before")

    status, updated = alice.send(
        "PUT",
        f"/api/v1/media/{media['id']}",
        b"description=after",
        "application/x-www-form-urlencoded",
    )

    assert (status, updated["description"], alice.media(media["id"])[1]["description"]) == (
        200,
        "after",
        "after",
    )


def test_status_with_unprocessed_media_is_refused_then_accepted(
    served: tuple[MastodonStandIn, int], alice: Client
) -> None:
    state, _ = served
    _, video = alice.upload(MP4, "a clip")

    refused = alice.status("look", [video["id"]])
    alice.media(video["id"])  # 206
    alice.media(video["id"])  # 200: processed
    status, created = alice.status("look", [video["id"]])

    assert refused == (422, {"error": NOT_READY})
    assert NOT_READY == (
        "Cannot attach files that have not finished processing. Try again in a moment!"
    )
    assert status == 200
    assert [(m["id"], m["description"]) for m in created["media_attachments"]] == [
        (video["id"], "a clip")
    ]
    assert len(state.statuses) == 1


def test_status_lists_attachments_in_the_given_order_with_descriptions(alice: Client) -> None:
    ids = [alice.upload(image(color=c), f"alt {c}")[1]["id"] for c in ("red", "green", "blue")]

    status, created = alice.status("three", [ids[2], ids[0], ids[1]])
    _, fetched = alice.send("GET", f"/api/v1/statuses/{created['id']}")
    _, listed = alice.send("GET", f"/api/v1/accounts/{created['account']['id']}/statuses")

    expected = [(ids[2], "alt blue"), (ids[0], "alt red"), (ids[1], "alt green")]
    for shown in (created, fetched, listed[0]):
        assert [(m["id"], m["description"]) for m in shown["media_attachments"]] == expected
    assert status == 200


def test_form_media_ids_brackets_attach_every_value(alice: Client) -> None:
    ids = [alice.upload(image(color=c))[1]["id"] for c in ("red", "blue")]
    body = f"status=hi&media_ids[]={ids[0]}&media_ids[]={ids[1]}".encode()

    status, created = alice.send(
        "POST", "/api/v1/statuses", body, "application/x-www-form-urlencoded"
    )

    assert (status, [m["id"] for m in created["media_attachments"]]) == (200, ids)


def test_media_only_status_is_accepted_and_no_text_no_media_refused(alice: Client) -> None:
    _, media = alice.upload(image())

    assert alice.status("", [media["id"]])[0] == 200
    assert alice.status("", []) == (422, {"error": "Validation failed: Text can't be blank"})


def test_unknown_and_already_attached_media_are_refused(alice: Client) -> None:
    _, media = alice.upload(image())
    assert alice.status("first", [media["id"]])[0] == 200

    again = alice.status("second", [media["id"]])
    unknown = alice.status("third", ["999999"])

    assert again == (
        422,
        {"error": f"Media {media['id']} not found or already attached to another post"},
    )
    assert unknown == (422, {"error": "Media 999999 not found or already attached to another post"})
    assert alice.media(media["id"])[0] == 404  # attached: no longer editable


def test_idempotency_key_repeat_with_media_returns_the_first_status(
    served: tuple[MastodonStandIn, int], alice: Client
) -> None:
    _, media = alice.upload(image())

    first = alice.status("once", [media["id"]], **{"Idempotency-Key": "k1"})
    repeat = alice.status("once", [media["id"]], **{"Idempotency-Key": "k1"})

    assert first == repeat and first[0] == 200
    assert len(served[0].statuses) == 1


def test_instance_reports_its_media_limits(alice: Client) -> None:
    _, instance = alice.send("GET", "/api/v2/instance")

    configuration = instance["configuration"]
    assert configuration["statuses"]["max_media_attachments"] == 4
    limits = configuration["media_attachments"]
    assert (limits["image_size_limit"], limits["video_size_limit"]) == (16_777_216, 103_809_024)
    assert limits["description_limit"] == 1500
    assert {"image/png", "image/jpeg", "image/gif", "image/webp", "video/mp4"} <= set(
        limits["supported_mime_types"]
    )


def test_uploads_over_the_instance_limits_are_refused_with_422(
    served: tuple[MastodonStandIn, int], alice: Client
) -> None:
    state, _ = served
    state.media.image_size_limit = 1024 * 1024

    too_big = alice.upload(image("PNG", (1, 1)) + b"\x00" * 2**20)
    too_long = alice.upload(image(), "x" * 1501)
    not_media = alice.upload(b"%PDF-1.7 not an image")

    assert too_big == (422, {"error": "Validation failed: File file size must be less than 1 MB"})
    assert too_long == (
        422,
        {"error": "Validation failed: Description is too long (maximum is 1500 characters)"},
    )
    assert not_media == (
        422,
        {"error": "Validation failed: File content type is invalid, File is invalid"},
    )
    assert state.media.items == {}


def test_status_with_too_many_or_mixed_media_is_refused(alice: Client) -> None:
    images = [alice.upload(image(color=c))[1]["id"] for c in ("red", "blue", "green", "white")]
    extra = alice.upload(image(color="black"))[1]["id"]
    _, video = alice.upload(MP4)

    assert alice.status("five", [*images, extra]) == (
        422,
        {"error": "Cannot attach more than 4 files"},
    )
    assert alice.status("mixed", [images[0], video["id"]]) == (422, {"error": IMAGES_AND_VIDEO})


def test_uploads_are_counted_per_file_hash(
    served: tuple[MastodonStandIn, int], alice: Client
) -> None:
    state, _ = served
    data = image()

    alice.upload(data)
    alice.upload(data)
    alice.upload(image(color="blue"))
    status, listed = alice.send("GET", "/_stand_in/media")

    assert (state.media.upload_count(data), state.media.upload_count(image(color="blue"))) == (2, 1)
    assert status == 200 and sorted(m["uploads"] for m in listed) == [1, 2, 2]


def test_body_over_the_proxy_limit_answers_413(alice: Client) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", alice.port, timeout=5)
    try:
        connection.putrequest("POST", "/api/v2/media")
        connection.putheader("Authorization", f"Bearer {alice.token}")
        connection.putheader("Content-Length", str(MAX_BODY_BYTES + 1))
        connection.endheaders()
        answer = connection.getresponse()
        assert answer.status == 413
    finally:
        connection.close()


def test_parse_body_keeps_every_value_of_a_bracket_field() -> None:
    body = parse_body(b"status=a&media_ids[]=1&media_ids[]=2", {"content-type": "x"})

    assert body == {"status": "a", "media_ids[]": ["1", "2"]}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"\xff\xd8\xff\xe0rest", "image/jpeg"),
        (b"\x89PNG\r\n\x1a\nrest", "image/png"),
        (b"GIF89a....", "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
        (MP4, "video/mp4"),
        (b"<svg xmlns='http://www.w3.org/2000/svg'/>", None),
    ],
)
def test_sniff_reads_the_kind_from_magic_numbers(data: bytes, expected: str | None) -> None:
    assert sniff(data) == expected
