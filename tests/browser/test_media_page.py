"""Media on the page, in a real browser: a PNG chosen in the compose dialog is uploaded through
the API's pre-signed form to the embedded AWS's S3, probed, given alt text, and published with
the post; a file whose bytes are not what it claims is refused with the service's reason; a
file too big for a chosen network is refused before anything is uploaded.
Each test signs in as its own user."""

from __future__ import annotations

import hashlib
import io
import random
import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from playwright.sync_api import expect

from local.bluesky import LocalPds
from local.emulation.receiver import Receiver
from tests.browser.conftest import Stack
from tests.browser.test_calendar import _assert_accessible, _channel, _sign_in, _slot, _user

pytestmark = pytest.mark.browser

ZONE = "Europe/Dublin"


def _png(tmp_path: Path) -> tuple[Path, bytes]:
    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), (200, 30, 30)).save(buffer, format="PNG")
    path = tmp_path / "red.png"
    path.write_bytes(buffer.getvalue())
    return path, buffer.getvalue()


def test_upload_a_png_with_alt_text_and_publish_it_to_a_webhook(
    stack: Stack, open_page: Callable[..., Any], tmp_path: Path
) -> None:
    # Given a creator with a webhook channel, composing a post
    user = _user()
    receiver = Receiver().start()
    try:
        _channel(stack, user, receiver.url)
        page = open_page(ZONE)
        _sign_in(page, user)
        page.get_by_role("button", name="New post").click()
        page.get_by_label("Content").fill("A red square")
        # When they choose a PNG (its upload to S3 held back a moment), Then a progress bar
        # shows while it goes, then it is probed ready with its size
        held: list[Any] = []
        to_storage = re.compile(r"^http://127\.0\.0\.1:\d+/(?!v1/)")
        page.route(
            to_storage,
            lambda route: (
                held.append(route) if route.request.method == "POST" else route.continue_()
            ),
        )
        path, data = _png(tmp_path)
        storage_post = lambda r: r.method == "POST" and bool(to_storage.match(r.url))  # noqa: E731
        with page.expect_request(storage_post):
            page.get_by_label("Add images").set_input_files(str(path))
        expect(page.get_by_label("Upload of red.png")).to_be_visible()
        page.wait_for_function("() => true")  # a round trip: the held route is handed over
        assert len(held) == 1, held
        held[0].continue_()
        page.unroute(to_storage)
        item = page.locator("#media-list li").first
        expect(item).to_contain_text(re.compile(r"Ready: image/png, 64\u00d748"), timeout=15_000)
        expect(page.get_by_label("Upload of red.png")).to_have_count(0)
        # And it asks for alt text until it has one
        expect(item.locator(".alt-nudge")).to_be_visible()
        # When they give it alt text and post it now
        alt = page.get_by_label("Alt text for red.png")
        alt.fill("A red square on white")
        alt.press("Tab")
        expect(item.locator(".alt-nudge")).to_be_hidden()
        _assert_accessible(page, "compose with an image")
        api = stack.client(user)
        media = api.request("GET", "/v1/media").body["items"]
        assert [m["alt_text"] for m in media] == ["A red square on white"]
        page.get_by_label("Now").check()
        page.get_by_role("button", name="Schedule").click()
        expect(page.locator("#compose")).to_be_hidden()
        # Then the post names the upload and the webhook receives the image with its alt text
        post = api.request("GET", "/v1/scheduled-posts").body["items"][0]
        assert post["media_ids"] == [media[0]["media_id"]]
        day = _slot(page, datetime.fromisoformat(post["publish_at"]), ZONE)
        expect(day.locator(".post .badge")).to_have_text(re.compile("Published"), timeout=30_000)
        [delivery] = receiver.snapshot()
        assert [(m["alt_text"], m["sha256"]) for m in delivery.media] == [
            ("A red square on white", hashlib.sha256(data).hexdigest())
        ]
        # And the post's detail lists the image with its alt text, and the channel's status
        day.locator(".post").first.get_by_role("button").click()
        detail = page.locator("#detail")
        expect(detail.locator(".detail-media li")).to_have_text(
            "image/png, 64\u00d748 \u2014 Alt text: A red square on white"
        )
        expect(detail.get_by_role("row", name=re.compile("^Blog hook"))).to_contain_text(
            "Published"
        )
        _assert_accessible(page, "post detail with media")
    finally:
        receiver.stop()


def test_a_file_that_is_not_what_it_claims_is_refused_with_the_reason(
    stack: Stack, open_page: Callable[..., Any], tmp_path: Path
) -> None:
    # Given a creator composing a post
    user = _user()
    _channel(stack, user)
    page = open_page(ZONE)
    _sign_in(page, user)
    page.get_by_role("button", name="New post").click()
    page.get_by_label("Content").fill("Not an image")
    # When they choose a text file named .png, Then the probe refuses it with a reason
    fake = tmp_path / "notes.png"
    fake.write_bytes(b"these are not the pixels you are looking for\n" * 20)
    page.get_by_label("Add images").set_input_files(str(fake))
    item = page.locator("#media-list li").first
    expect(item).to_contain_text("Refused", timeout=15_000)
    assert item.inner_text().split("Refused", 1)[1].strip(": ")
    # And the post cannot be scheduled with it until it is removed
    page.get_by_role("button", name="Schedule").click()
    expect(page.locator("#media-error")).to_contain_text("Remove the files")
    assert stack.client(user).request("GET", "/v1/scheduled-posts").body["items"] == []
    page.get_by_role("button", name="Remove notes.png").click()
    expect(page.locator("#media-list li")).to_have_count(0)


def test_a_file_too_big_for_a_chosen_network_is_refused_before_any_upload(
    stack: Stack, open_page: Callable[..., Any], tmp_path: Path, local_pds: LocalPds
) -> None:
    # Given a creator with a Bluesky channel (its image size limit in its limits), composing to it
    user = _user()
    sky = local_pds.create_account(f"big{user[-8:]}")
    reply = stack.client(user).request(
        "POST",
        "/v1/channels",
        {
            "platform": "bluesky",
            "name": "Sky",
            "service_url": local_pds.url,
            "handle": sky.handle,
            "app_password": sky.app_password,
        },
    )
    assert reply.status == 201, reply.body
    limit = reply.body["limits"]["image_size_limit"]
    page = open_page(ZONE)
    _sign_in(page, user)
    page.get_by_role("button", name="New post").click()
    page.get_by_label("Content").fill("A big picture")
    page.get_by_role("checkbox", name="Sky").check()
    # When they choose a PNG larger than that (random pixels do not compress)
    path = tmp_path / "big.png"
    Image.frombytes("RGB", (1000, 1000), random.Random(7).randbytes(1000 * 1000 * 3)).save(path)
    assert path.stat().st_size > limit
    page.get_by_label("Add images").set_input_files(str(path))
    # Then it is refused by the page with the network's limit, and nothing reached the service
    item = page.locator("#media-list li").first
    expect(item).to_contain_text(f"Refused: too big for Sky: {path.stat().st_size:,} bytes")
    expect(item).to_contain_text(f"at most {limit:,}; nothing was uploaded")
    assert stack.client(user).request("GET", "/v1/media").body["items"] == []
    _assert_accessible(page, "compose with a file too big for Bluesky")
