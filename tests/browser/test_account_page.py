"""The Account view in a real browser: notification endpoints (the secret shown once, rotate,
delete), the CSV download, the calendar feed and its revocation, and erasure. Each test signs
in as its own user."""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from local.emulation.receiver import Receiver
from tests.browser.conftest import Stack
from tests.browser.test_calendar import _assert_accessible, _channel, _post, _sign_in, _user

pytestmark = pytest.mark.browser


def test_notification_endpoint_secret_once_then_rotate_and_delete(
    stack: Stack, open_page: Callable[..., Any]
) -> None:
    # Given a signed-in creator on the Account view
    user = _user()
    page = open_page("Europe/Madrid")
    _sign_in(page, user)
    page.get_by_role("button", name="Account").click()
    expect(page.locator("#endpoint-rows")).to_contain_text("No notification endpoints yet.")
    # When they add an endpoint for failures only
    page.get_by_label("Endpoint URL").fill("http://127.0.0.1:9/notify")
    expect(page.get_by_label("post.failed")).to_be_visible()
    for box in page.locator("#endpoint-types input").all():
        box.uncheck()
    page.get_by_label("post.failed").check()
    page.get_by_role("button", name="Add endpoint").click()
    # Then its Standard Webhooks secret is shown once and the endpoint is listed
    secret = page.locator("#endpoint-secret-value")
    expect(secret).to_have_text(re.compile(r"^whsec_\S+$"))
    row = page.get_by_role("row", name=re.compile(re.escape("127.0.0.1:9") + ".notify"))
    expect(row).to_contain_text("post.failed")
    _assert_accessible(page, "account view")
    shown = secret.inner_text()
    page.get_by_role("button", name="I stored it").click()
    assert shown not in page.content()
    listed = stack.client(user).request("GET", "/v1/notification-endpoints").body["items"]
    assert [e["event_types"] for e in listed] == [["post.failed"]]
    # When they rotate and then delete it, Then a new secret shows and the list empties
    page.get_by_role("button", name="Rotate secret of http://127.0.0.1:9/notify").click()
    page.get_by_role("dialog", name="Rotate the signing secret?").get_by_role(
        "button", name="Rotate"
    ).click()
    expect(secret).to_have_text(re.compile(r"^whsec_\S+$"))
    assert secret.inner_text() != shown
    page.get_by_role("button", name="Delete http://127.0.0.1:9/notify").click()
    page.get_by_role("dialog", name="Delete this endpoint?").get_by_role(
        "button", name="Delete endpoint"
    ).click()
    expect(page.locator("#endpoint-rows")).to_contain_text("No notification endpoints yet.")
    assert stack.client(user).request("GET", "/v1/notification-endpoints").body["items"] == []


def test_csv_download_calendar_feed_revoke_and_erasure(
    stack: Stack, open_page: Callable[..., Any]
) -> None:
    # Given a creator with a scheduled post
    user = _user()
    receiver = Receiver().start()
    try:
        channel = _channel(stack, user, receiver.url)
        at = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=3)
        _post(stack, user, channel, at, "In the export")
        page = open_page("Europe/Madrid")
        _sign_in(page, user)
        page.get_by_role("button", name="Account").click()
        # When they download the CSV, Then the file has the post
        with page.expect_download() as info:
            page.get_by_role("button", name="Download posts as CSV").click()
        csv_text = Path(info.value.path()).read_text(encoding="utf-8")
        assert "In the export" in csv_text
        assert csv_text.splitlines()[0].startswith("publish_at")
        # When they create the calendar feed, Then its URL serves iCalendar without a token
        page.get_by_role("button", name="Create calendar feed").click()
        feed = page.locator("#feed-url")
        expect(feed).to_have_text(re.compile(r"^http://127\.0\.0\.1:\d+/v1/calendar-feeds/\S+$"))
        with urllib.request.urlopen(feed.inner_text(), timeout=10) as answer:
            assert b"BEGIN:VCALENDAR" in answer.read()
        # When they revoke it, Then the URL answers 404
        url = feed.inner_text()
        page.get_by_role("button", name="Revoke calendar feed").click()
        expect(page.locator("#feed-url-line")).to_be_hidden()
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url, timeout=10)
        assert refused.value.code == 404
        # When they erase the account, Then the service says so and holds no post of theirs
        page.get_by_role("button", name="Erase my account").click()
        page.get_by_role("dialog", name="Erase your account?").get_by_role(
            "button", name="Erase my account"
        ).click()
        expect(page.locator("#erase-status")).to_contain_text(re.compile("erase|Erasure"))
        erasure = stack.client(user).request("GET", "/v1/me/erasure").body
        assert erasure["status"] in ("pending", "done")
    finally:
        receiver.stop()
