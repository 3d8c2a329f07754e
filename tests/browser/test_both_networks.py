"""One creator, both networks, from the page alone, in a real browser: a Mastodon channel (the
stand-in) and a Bluesky channel (an account on the reference PDS) connected in the Channels
view, then one post to both composed in the dialog with an image and its alt text, a Bluesky
text of its own that publishes without the image and so carries a link card frozen from a
loopback page (thumb included), published now and read back from each network: the stand-in's
status and the PDS's ``listRecords``."""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from playwright.sync_api import expect

from local.bluesky import LocalPds, list_posts
from local.mastodon import MastodonStandIn
from tests.browser.conftest import Stack
from tests.browser.test_calendar import _assert_accessible, _sign_in, _user
from tests.browser.test_media_page import _png
from tests.support.link_site import LinkSite, og_page

pytestmark = pytest.mark.browser


@pytest.fixture
def site() -> Iterator[LinkSite]:
    thumb = io.BytesIO()
    Image.new("RGB", (60, 30), (20, 90, 200)).save(thumb, format="PNG")
    with LinkSite().serving() as served:
        served.html("/launch", og_page("Launch notes", "What is new this week", "/thumb.png"))
        served.pages["/thumb.png"] = (200, {"Content-Type": "image/png"}, thumb.getvalue())
        yield served


def test_connect_both_networks_then_one_post_with_an_image_and_a_bluesky_card_reaches_each(
    stack: Stack,
    open_page: Callable[..., Any],
    local_pds: LocalPds,
    site: LinkSite,
    tmp_path: Path,
) -> None:
    user = _user()
    standin = MastodonStandIn()
    toots = standin.add_account("both")
    sky = local_pds.create_account(f"both{user[-8:]}")
    with standin.serving() as instance:
        # Given a signed-in creator who connects Mastodon and Bluesky in the Channels view
        page = open_page("Europe/Lisbon")
        _sign_in(page, user)
        page.get_by_role("button", name="Channels").click()
        page.get_by_role("radio", name="Mastodon").check()
        page.get_by_label("Name", exact=True).fill("Toots")
        page.get_by_label("Mastodon instance URL").fill(instance)
        page.get_by_label("Access token").fill(toots.token)
        page.get_by_role("button", name="Add channel").click()
        expect(page.get_by_role("row", name=re.compile("Toots"))).to_contain_text("Active")
        page.get_by_role("radio", name="Bluesky").check()
        page.get_by_label("Name", exact=True).fill("Sky")
        page.get_by_label("Bluesky handle").fill(sky.handle)
        page.get_by_label("App password").fill(sky.app_password)
        page.get_by_label("PDS URL").fill(local_pds.url)
        page.get_by_role("button", name="Add channel").click()
        row = page.get_by_role("row", name=re.compile("Sky"))
        expect(row).to_contain_text("Active")
        expect(row).to_contain_text("300")  # Bluesky's grapheme limit shown
        _assert_accessible(page, "channels view with both networks")
        # When they compose one post to both with an image and alt text, and a Bluesky text of
        # its own with a link, published there without the image
        page.get_by_role("button", name="Week").click()
        page.get_by_role("button", name="New post").click()
        page.get_by_label("Content").fill("Our new chart, described for everyone")
        page.get_by_role("checkbox", name="Toots").check()
        page.get_by_role("checkbox", name="Sky").check()
        page.get_by_label("Add images").set_input_files(str(_png(tmp_path)[0]))
        expect(page.locator("#media-list li").first).to_contain_text("Ready", timeout=15_000)
        alt = page.get_by_label("Alt text for red.png")
        alt.fill("A red square on white")
        alt.press("Tab")
        page.get_by_text("Own text for Sky").click()
        link = site.url("/launch")
        page.get_by_label("Own text for Sky").fill(f"Launch notes: {link}")
        page.get_by_label("Publish on Sky without the post's media").check()
        # Then Mastodon's preview shows the image, Bluesky's the card to come instead
        expect(page.get_by_role("region", name="Preview on Toots")).to_contain_text(
            "ALT: A red square on white"
        )
        skeet = page.get_by_role("region", name="Preview on Sky")
        expect(skeet).to_contain_text(f"A link card for {link}")
        expect(skeet.locator("img")).to_have_count(0)
        _assert_accessible(page, "compose to both networks")
        page.get_by_label("Now").check()
        page.get_by_role("button", name="Schedule").click()
        expect(page.locator("#compose")).to_be_hidden()
        # Then the post names the image, Sky's variant none, and the card frozen from the page
        api = stack.client(user)
        post = api.request("GET", "/v1/scheduled-posts").body["items"][0]
        uploads = {m["media_id"]: m for m in api.request("GET", "/v1/media").body["items"]}
        channels = {
            c["name"]: c["channel_id"] for c in api.request("GET", "/v1/channels").body["items"]
        }
        [image] = post["media_ids"]  # the other upload is the card's thumb, made by the service
        assert uploads[image]["alt_text"] == "A red square on white"
        assert post["link_card"]["thumb"]["media_id"] in uploads
        assert post["variants"][channels["Sky"]]["media_ids"] == []
        assert post["link_card"]["title"] == "Launch notes"
        # When it is published, Then the detail says so
        page.locator(f'[data-schedule-id="{post["schedule_id"]}"]').click()
        detail = page.locator("#detail")
        expect(detail.locator("#detail-title")).to_contain_text("Published", timeout=30_000)
        # And the stand-in holds one status with the image and its description
        [status] = standin.statuses_of(toots)
        assert status.text == "Our new chart, described for everyone"
        [attachment] = [standin.media.items[i] for i in status.media_ids]
        assert attachment.description == "A red square on white"
        # And the PDS holds one record: Sky's own text with the external embed and its thumb
        [record] = list_posts(local_pds.url, sky.did)
        value = record["value"]
        assert value["text"] == f"Launch notes: {link}"
        external = value["embed"]["external"]
        assert value["embed"]["$type"] == "app.bsky.embed.external"
        assert (external["uri"], external["title"], external["description"]) == (
            link,
            "Launch notes",
            "What is new this week",
        )
        assert external["thumb"]["mimeType"] == "image/png"
