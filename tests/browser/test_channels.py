"""The channels view in a real browser: Mastodon and Bluesky channels, status, reconnect.

The Mastodon stand-in (``local/mastodon.py``) serves on 127.0.0.1 for the test; the local stack
allows loopback destinations. Each test signs in as its own user.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from playwright.sync_api import expect

from local.mastodon import Account, MastodonStandIn
from scheduled_posts.clock import format_instant
from tests.browser.conftest import Stack
from tests.browser.test_calendar import _assert_accessible, _sign_in, _slot, _user

pytestmark = pytest.mark.browser


def test_add_mastodon_channel_shows_refusal_by_the_field_then_status_and_reconnect(
    stack: Stack, open_page: Callable[..., Any]
) -> None:
    standin = MastodonStandIn()
    account = standin.add_account("alice")
    with standin.serving() as instance:
        # Given a signed-in creator on the channels view, choosing Mastodon
        user = _user()
        page = open_page("Europe/Berlin", expected_statuses=(422,))
        _sign_in(page, user)
        page.get_by_role("button", name="Channels").click()
        page.get_by_role("radio", name="Mastodon").check()
        expect(page.get_by_label("Webhook URL")).to_be_hidden()
        page.get_by_label("Name", exact=True).fill("Toots")
        page.get_by_label("Mastodon instance URL").fill(instance)
        expect(page.get_by_role("link", name="Development page")).to_have_attribute(
            "href", f"{instance}/settings/applications"
        )
        # When the token is one the instance refuses, Then its words stand by the token field
        page.get_by_label("Access token").fill("not-a-token")
        page.get_by_role("button", name="Add channel").click()
        expect(page.locator("#channel-access_token-error")).to_contain_text(
            re.compile("Access token: .*refused", re.IGNORECASE)
        )
        assert stack.client(user).request("GET", "/v1/channels").body["items"] == []
        # When the token is right, Then the channel is listed active with its limits, no secret
        page.get_by_label("Access token").fill(account.token)
        page.get_by_role("button", name="Add channel").click()
        row = page.get_by_role("row", name=re.compile("Toots"))
        expect(row).to_contain_text("Active")
        expect(row).to_contain_text("500 characters")
        expect(row).to_contain_text("alice")
        expect(page.locator("#secret-box")).to_be_hidden()
        _assert_accessible(page, "channels view with a Mastodon channel")
        channel = stack.client(user).request("GET", "/v1/channels").body["items"][0]
        assert channel["platform"] == "mastodon"

        # Given the instance revokes the token and a post to the channel then fails
        standin.revoke(account.token)
        due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=2)
        body = {
            "content": "Hello",
            "publish_at": format_instant(due),
            "channel_ids": [channel["channel_id"]],
        }
        stack.client(user).request("POST", "/v1/scheduled-posts", body)
        page.get_by_role("button", name="Week").click()
        item = _slot(page, due, "Europe/Berlin").locator(".post").first
        expect(item.locator(".badge")).to_have_text(re.compile("Failed"), timeout=30_000)
        # When the creator opens the channels view again, Then it says it needs reconnecting
        page.get_by_role("button", name="Channels").click()
        expect(row).to_contain_text("Needs reconnecting")
        # When they reconnect it with a new token of the same account, Then it is active again
        fresh = secrets.token_hex(16)
        standin.accounts[fresh] = Account(id=account.id, username=account.username, token=fresh)
        page.get_by_role("button", name="Reconnect Toots").click()
        dialog = page.get_by_role("dialog", name="Reconnect Toots")
        dialog.get_by_label("New access token").fill(fresh)
        dialog.get_by_role("button", name="Reconnect").click()
        expect(dialog).to_be_hidden()
        expect(row).to_contain_text("Active")
        got = stack.client(user).request("GET", f"/v1/channels/{channel['channel_id']}").body
        assert got["status"] == "active"


def test_bluesky_fields_are_asked_for_with_the_app_password_hint(
    stack: Stack, open_page: Callable[..., Any]
) -> None:
    # Given a signed-in creator choosing Bluesky
    user = _user()
    page = open_page("Asia/Tokyo", expected_statuses=(422, 502))
    _sign_in(page, user)
    page.get_by_role("button", name="Channels").click()
    page.get_by_role("radio", name="Bluesky").check()
    # Then handle, app password (with where to make one) and the PDS URL are asked for
    expect(page.get_by_label("Bluesky handle")).to_be_visible()
    expect(page.get_by_label("App password")).to_have_attribute("type", "password")
    expect(page.get_by_role("link", name=re.compile("App passwords"))).to_have_attribute(
        "href", "https://bsky.app/settings/app-passwords"
    )
    expect(page.get_by_label("PDS URL")).to_have_value("https://bsky.social")
    # When the PDS cannot be reached, Then the service's refusal is shown and nothing is stored
    page.get_by_label("Name", exact=True).fill("Sky")
    page.get_by_label("Bluesky handle").fill("alice.test")
    page.get_by_label("App password").fill("aaaa-bbbb-cccc-dddd")
    page.get_by_label("PDS URL").fill("http://127.0.0.1:9")
    page.get_by_role("button", name="Add channel").click()
    expect(page.locator("#channel-error")).not_to_be_empty()
    assert stack.client(user).request("GET", "/v1/channels").body["items"] == []
    _assert_accessible(page, "channels view, Bluesky chosen")


def test_posting_slots_then_a_post_takes_the_next_free_slot(
    stack: Stack, open_page: Callable[..., Any]
) -> None:
    # Given a creator with a webhook channel, on the channels view
    user = _user()
    stack.client(user).request(
        "POST",
        "/v1/channels",
        {"platform": "webhook", "name": "Queue", "url": "http://127.0.0.1:9/q"},
    )
    page = open_page("America/New_York", expected_statuses=(404, 422))
    _sign_in(page, user)
    page.get_by_role("button", name="Channels").click()
    # When they give it Tuesday and Thursday 09:00 slots in Berlin
    page.get_by_role("button", name="Posting slots of Queue").click()
    dialog = page.get_by_role("dialog", name="Posting slots of Queue")
    dialog.get_by_label("Time zone").select_option("Europe/Berlin")
    dialog.get_by_label("Tuesday").check()
    dialog.get_by_label("Thursday").check()
    dialog.get_by_label("Times").fill("09:00")
    dialog.get_by_role("button", name="Save slots").click()
    # Then the next slots are listed free, each a Tuesday or Thursday at 09:00 Berlin time
    slots = dialog.locator("#slots-next li")
    expect(slots).to_have_count(6)
    expect(slots.first).to_contain_text("free")
    texts = slots.all_inner_texts()
    assert all(re.match(r"(Tue|Thu), .*, 09:00 \(UTC\+0[12]:00\)", s) for s in texts), texts
    _assert_accessible(page, "posting slots dialog")
    dialog.get_by_role("button", name="Close").click()
    queue = stack.client(user).request("GET", "/v1/channels").body["items"][0]
    first = stack.client(user).request("GET", f"/v1/channels/{queue['channel_id']}/queue?count=1")
    # When they write a post for the next free queue slot
    page.get_by_role("button", name="New post").click()
    page.get_by_label("Content").fill("Queued from the page")
    page.get_by_label("Next free queue slot").check()
    expect(page.get_by_label("Publish at")).to_be_disabled()
    page.get_by_role("button", name="Schedule").click()
    expect(page.locator("#compose")).to_be_hidden()
    # Then the post holds that slot
    posts = stack.client(user).request("GET", "/v1/scheduled-posts").body["items"]
    assert [p["publish_at"] for p in posts] == [first.body["slots"][0]["at"]]
    assert posts[0]["queue_slot"] is not None


def test_compose_own_text_for_a_channel_and_a_language(
    stack: Stack, open_page: Callable[..., Any]
) -> None:
    standin = MastodonStandIn()
    account = standin.add_account("carol")
    with standin.serving() as instance:
        # Given a creator with a webhook and a Mastodon channel (500 characters)
        user = _user()
        client = stack.client(user)
        hook = {"platform": "webhook", "name": "Hook", "url": "http://127.0.0.1:9/h"}
        client.request("POST", "/v1/channels", hook)
        toots = {
            "platform": "mastodon",
            "name": "Toots",
            "instance_url": instance,
            "access_token": account.token,
        }
        mastodon_id = client.request("POST", "/v1/channels", toots).body["channel_id"]
        page = open_page("Europe/Lisbon")
        _sign_in(page, user)
        # When they write 600 characters for both, Then Mastodon's count is over its limit
        page.get_by_role("button", name="New post").click()
        long_text = "word " * 120
        page.get_by_label("Content").fill(long_text)
        page.get_by_role("checkbox", name="Toots").check()
        counts = page.locator("#content-counts")
        expect(counts.locator("li.over").filter(has_text="Toots")).to_have_count(1)
        # When they give Mastodon its own short text and a language, Then it fits and saves
        page.get_by_text("Own text for Toots").click()
        page.get_by_label("Own text for Toots").fill("The short version")
        expect(counts.locator("li.over").filter(has_text="Toots")).to_have_count(0)
        page.get_by_label("Language").fill("en")
        page.get_by_role("button", name="Schedule").click()
        expect(page.locator("#compose")).to_be_hidden()
        post = client.request("GET", "/v1/scheduled-posts").body["items"][0]
        assert post["content"] == long_text
        assert post["language"] == "en"
        assert post["variants"][mastodon_id]["content"] == "The short version"
        effective = {d["channel_id"]: d for d in post["deliveries"]}
        assert effective[mastodon_id]["content"] == "The short version"
        # When they open it for editing, Then the own text is there, open
        _slot(page, datetime.fromisoformat(post["publish_at"]), "Europe/Lisbon").locator(
            ".post"
        ).first.get_by_role("button").click()
        page.locator("#detail").get_by_role("button", name="Edit").click()
        expect(page.get_by_label("Own text for Toots")).to_have_value("The short version")
        expect(page.get_by_label("Language")).to_have_value("en")
