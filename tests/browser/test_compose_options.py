"""Network options and the Bluesky link card in the compose dialog, in a real browser: a post to
a Mastodon channel (the stand-in) and a Bluesky channel (the reference PDS) with Mastodon's
visibility, content warning and sensitive flag and Bluesky's languages and tags; the card the
service froze from a loopback page shown in Bluesky's options, then removed (``link_card:
null``). Each test signs in as its own user."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from local.bluesky import LocalPds
from local.mastodon import MastodonStandIn
from tests.browser.conftest import Stack
from tests.browser.test_calendar import _assert_accessible, _sign_in, _user
from tests.browser.test_media_page import _png
from tests.support.link_site import LinkSite, og_page

pytestmark = pytest.mark.browser


@pytest.fixture
def site() -> Iterator[LinkSite]:
    with LinkSite().serving() as served:
        served.html("/launch", og_page("Launch notes", "What is new this week", None))
        yield served


def _channels(stack: Stack, user: str, instance: str, standin: Any, pds: LocalPds) -> list[str]:
    name = f"opt{uuid.uuid4().hex[:8]}"
    toots = standin.add_account(name)
    sky = pds.create_account(name)
    client = stack.client(user)
    ids = []
    for body in (
        {"platform": "mastodon", "name": "Toots", "instance_url": instance},
        {"platform": "bluesky", "name": "Sky", "service_url": pds.url, "handle": sky.handle},
    ):
        secret = (
            {"access_token": toots.token}
            if body["platform"] == "mastodon"
            else {"app_password": sky.app_password}
        )
        reply = client.request("POST", "/v1/channels", {**body, **secret})
        assert reply.status == 201, reply.body
        ids.append(str(reply.body["channel_id"]))
    return ids


def test_network_options_previews_and_the_link_card_removed(
    stack: Stack,
    open_page: Callable[..., Any],
    local_pds: LocalPds,
    site: LinkSite,
    tmp_path: Path,
) -> None:
    standin = MastodonStandIn()
    with standin.serving() as instance:
        # Given a creator with a Mastodon and a Bluesky channel, writing a post with a link
        user = _user()
        toots, sky = _channels(stack, user, instance, standin, local_pds)
        api = stack.client(user)
        page = open_page("Europe/Madrid")
        _sign_in(page, user)
        page.get_by_role("button", name="New post").click()
        page.get_by_label("Content").fill(f"Read the notes {site.url('/launch')}")
        page.get_by_role("checkbox", name="Toots").check()
        page.get_by_role("checkbox", name="Sky").check()
        # When they set Mastodon's and Bluesky's options in each channel's own panel
        page.get_by_text("Options for Toots").click()
        page.get_by_label("Visibility").select_option("unlisted")
        page.get_by_label("CW:").fill("Long read")
        page.get_by_label("Mark the media sensitive").check()
        page.get_by_text("Options for Sky").click()
        page.get_by_label("Languages of the text").fill("en, pt-BR")
        page.get_by_label("Extra hashtags").fill("#news, launch")
        expect(page.locator("#variant-fields")).to_contain_text("the service makes it")
        # Then each network's preview shows the post as that network will
        toot = page.get_by_role("region", name="Preview on Toots")
        expect(toot).to_contain_text("Mastodon · Quiet public")
        expect(toot.locator("summary")).to_contain_text("Long read")
        expect(toot.get_by_text("Read the notes")).to_be_hidden()  # behind "Show more"
        toot.locator("summary").click()
        expect(toot.get_by_text("Read the notes")).to_be_visible()
        skeet = page.get_by_role("region", name="Preview on Sky")
        expect(skeet).to_contain_text("Bluesky · Languages: en, pt-BR")
        expect(skeet).to_contain_text(f"A link card for {site.url('/launch')}")
        expect(skeet).to_contain_text("Tags: #news #launch")
        _assert_accessible(page, "compose with network options")
        page.get_by_role("button", name="Schedule").click()
        expect(page.locator("#compose")).to_be_hidden()
        # Then the post carries each channel's options, and the card frozen from the page
        post = api.request("GET", "/v1/scheduled-posts").body["items"][0]
        assert {k: v for k, v in post["variants"][toots].items() if v is not None} == {
            "visibility": "unlisted",
            "spoiler_text": "Long read",
            "sensitive": True,
        }
        assert {k: v for k, v in post["variants"][sky].items() if v is not None} == {
            "langs": ["en", "pt-BR"],
            "tags": ["news", "launch"],
        }
        assert post["link_card"]["title"] == "Launch notes"
        # When they edit it, Then the options are back and Sky's panel shows the card
        page.locator(f'[data-schedule-id="{post["schedule_id"]}"]').click()
        page.locator("#detail").get_by_role("button", name="Edit").click()
        expect(page.get_by_label("Visibility")).to_have_value("unlisted")
        expect(page.get_by_label("Extra hashtags")).to_have_value("news, launch")
        card = page.locator("#variant-fields .link-card")
        expect(card).to_contain_text("Launch notes")
        expect(card).to_contain_text("What is new this week")
        skeet = page.get_by_role("region", name="Preview on Sky")
        expect(skeet.locator(".preview-card")).to_contain_text("Launch notes")
        # When they remove the card and save, Then the post has no card and keeps its options
        card.get_by_role("button", name="Remove the link card").click()
        expect(card).to_contain_text("will be removed when you save")
        expect(skeet.locator(".preview-card")).to_have_count(0)
        page.get_by_role("button", name="Save changes").click()
        expect(page.locator("#compose")).to_be_hidden()
        saved = api.request("GET", f"/v1/scheduled-posts/{post['schedule_id']}").body
        assert saved["link_card"] is None
        assert saved["variants"][sky]["tags"] == ["news", "launch"]
        assert saved["variants"][toots]["visibility"] == "unlisted"
        # When they start a post with an image and alt text, Then both previews show it
        page.get_by_role("button", name="New post").click()
        page.get_by_label("Content").fill("A red square")
        page.get_by_role("checkbox", name="Toots").check()
        page.get_by_role("checkbox", name="Sky").check()
        page.get_by_label("Add images").set_input_files(str(_png(tmp_path)[0]))
        expect(page.locator("#media-list li").first).to_contain_text("Ready", timeout=15_000)
        alt = page.get_by_label("Alt text for red.png")
        alt.fill("A red square on white")
        alt.press("Tab")
        for name in ("Toots", "Sky"):
            region = page.get_by_role("region", name=f"Preview on {name}")
            expect(region.get_by_role("img", name="A red square on white")).to_be_visible()
            expect(region).to_contain_text("ALT: A red square on white")
        expect(
            page.get_by_role("region", name="Preview on Sky").locator(".preview-card")
        ).to_have_count(0)
        _assert_accessible(page, "compose previews with an image")
        page.set_viewport_size({"width": 390, "height": 844})
        assert page.locator("#compose").evaluate("(el) => el.scrollWidth <= el.clientWidth")
        _assert_accessible(page, "compose previews at 390 px")
