"""The calendar's tools in a real browser: the channel filter, drag to another day, and a post's
event history in its detail. Each test signs in as its own user."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect

from local.emulation.receiver import Receiver
from scheduled_posts.clock import parse_instant
from tests.browser.conftest import Stack
from tests.browser.test_calendar import _channel, _post, _sign_in, _slot, _user

pytestmark = pytest.mark.browser

#: A zone without DST, so "the same wall time a day later" is exactly 24 h later.
ZONE = "Asia/Tokyo"


def test_channel_filter_shows_only_that_channels_posts(
    stack: Stack, open_page: Callable[..., Any]
) -> None:
    # Given two channels with a post each on the same day
    user = _user()
    blog = _channel(stack, user, "http://127.0.0.1:9/blog")
    shop_body = {"platform": "webhook", "name": "Shop", "url": "http://127.0.0.1:9/s"}
    shop = stack.client(user).request("POST", "/v1/channels", shop_body).body["channel_id"]
    at = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=2)
    _post(stack, user, blog, at, "For the blog")
    _post(stack, user, shop, at + timedelta(minutes=1), "For the shop")
    page = open_page(ZONE)
    _sign_in(page, user)
    day = _slot(page, at, ZONE)
    expect(day.locator(".post")).to_have_count(2)
    # When the creator shows only the shop's posts, Then only its post is on the calendar
    page.get_by_label("Show").select_option(label="Shop")
    expect(day.locator(".post")).to_have_count(1)
    expect(day.locator(".post")).to_contain_text("For the shop")
    # When they show all channels again, Then both are back
    page.get_by_label("Show").select_option(label="All channels")
    expect(day.locator(".post")).to_have_count(2)


def test_status_filter_shows_only_posts_in_that_status(
    stack: Stack, open_page: Callable[..., Any]
) -> None:
    # Given two scheduled posts on one day, one of which the creator cancels
    user = _user()
    blog = _channel(stack, user, "http://127.0.0.1:9/blog")
    at = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=2)
    _post(stack, user, blog, at, "Still on")
    off = _post(stack, user, blog, at + timedelta(minutes=1), "Called off")
    assert (
        stack.client(user).request("DELETE", f"/v1/scheduled-posts/{off['schedule_id']}").status
        == 200
    )
    page = open_page(ZONE)
    _sign_in(page, user)
    day = _slot(page, at, ZONE)
    expect(day.locator(".post")).to_have_count(2)
    # When they show only cancelled posts, Then only that one is on the calendar
    page.get_by_label("Status", exact=True).select_option(label="Cancelled")
    expect(day.locator(".post")).to_have_count(1)
    expect(day.locator(".post")).to_contain_text("Called off")
    # When they show only scheduled ones, Then only the other
    page.get_by_label("Status", exact=True).select_option(label="Scheduled")
    expect(day.locator(".post")).to_contain_text("Still on")
    expect(day.locator(".post")).to_have_count(1)
    page.get_by_label("Status", exact=True).select_option(label="Every status")
    expect(day.locator(".post")).to_have_count(2)


def test_drag_a_post_to_another_day_keeps_its_wall_time(
    stack: Stack, open_page: Callable[..., Any]
) -> None:
    # Given a scheduled post two days ahead, and a neighbouring day of the same week
    user = _user()
    channel = _channel(stack, user)
    at = datetime.now(UTC).replace(second=0, microsecond=0) + timedelta(days=2, hours=1)
    post = _post(stack, user, channel, at, "Move me")
    local_day = at.astimezone(ZoneInfo(ZONE)).date()
    step = -1 if local_day.isoweekday() == 7 else 1
    target = local_day + timedelta(days=step)
    page = open_page(ZONE)
    _sign_in(page, user)
    item = _slot(page, at, ZONE).locator(".post").first
    expect(item).to_contain_text("Move me")
    # When the creator drags it onto the neighbouring day
    item.drag_to(page.locator(f'li.day[data-date="{target.isoformat()}"]'))
    # Then it sits there, at the same wall time, and the API has it one day later or earlier
    moved = page.locator(f'li.day[data-date="{target.isoformat()}"] .post')
    expect(moved).to_contain_text("Move me")
    got = stack.client(user).request("GET", f"/v1/scheduled-posts/{post['schedule_id']}").body
    assert parse_instant(got["publish_at"]) == at + timedelta(days=step)
    assert got["version"] == post["version"] + 1


def test_move_to_another_day_by_keyboard_keeps_its_wall_time(
    stack: Stack, open_page: Callable[..., Any]
) -> None:
    # Given a scheduled post two days ahead
    user = _user()
    channel = _channel(stack, user)
    at = datetime.now(UTC).replace(second=0, microsecond=0) + timedelta(days=2, hours=1)
    post = _post(stack, user, channel, at, "Move me by keys")
    target = at.astimezone(ZoneInfo(ZONE)).date() + timedelta(days=3)
    page = open_page(ZONE)
    _sign_in(page, user)
    item = _slot(page, at, ZONE).locator(".post").first
    expect(item).to_contain_text("Move me by keys")
    # When the creator opens it with the keyboard and moves it three days on, without a mouse
    item.get_by_role("button").first.focus()
    page.keyboard.press("Enter")
    day = page.get_by_label("Move to another day, at the same time")
    expect(day).to_be_visible()
    day.focus()
    day.fill(target.isoformat())
    for _ in range(5):  # Tab walks the date field's segments (and its picker) first
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.textContent") == "Move to that day":
            break
    expect(page.get_by_role("button", name="Move to that day")).to_be_focused()
    page.keyboard.press("Enter")
    # Then the API has it three days later at the same wall time, and the page says where
    expect(page.locator("#status")).to_contain_text("Moved")
    got = stack.client(user).request("GET", f"/v1/scheduled-posts/{post['schedule_id']}").body
    assert parse_instant(got["publish_at"]).astimezone(ZoneInfo(ZONE)).replace(tzinfo=None) == (
        at.astimezone(ZoneInfo(ZONE)).replace(tzinfo=None) + timedelta(days=3)
    )


def test_drag_after_a_concurrent_edit_says_so_and_shows_the_post_as_it_is_now(
    stack: Stack, open_page: Callable[..., Any]
) -> None:
    # Given a scheduled post on the calendar, which someone edits elsewhere meanwhile
    user = _user()
    channel = _channel(stack, user)
    at = datetime.now(UTC).replace(second=0, microsecond=0) + timedelta(days=2, hours=1)
    post = _post(stack, user, channel, at, "Move me")
    local_day = at.astimezone(ZoneInfo(ZONE)).date()
    step = -1 if local_day.isoweekday() == 7 else 1
    target = local_day + timedelta(days=step)
    page = open_page(ZONE, poll_ms=60_000, expected_statuses=(412,))
    _sign_in(page, user)
    item = _slot(page, at, ZONE).locator(".post").first
    expect(item).to_contain_text("Move me")
    api = stack.client(user)
    path = f"/v1/scheduled-posts/{post['schedule_id']}"
    edited = api.request(
        "PATCH", path, {"content": "Edited elsewhere"}, headers={"If-Match": f'"{post["version"]}"'}
    )
    assert edited.status == 200, edited.body
    # When the creator drags the post as the page still shows it
    item.drag_to(page.locator(f'li.day[data-date="{target.isoformat()}"]'))
    # Then the page says it changed meanwhile and shows it as it is now, where it was
    expect(page.locator("#status")).to_contain_text("changed elsewhere meanwhile")
    expect(_slot(page, at, ZONE).locator(".post").first).to_contain_text("Edited elsewhere")
    # And the drag overwrote nothing: the API has the other edit at the old instant
    got = api.request("GET", path).body
    assert (got["content"], parse_instant(got["publish_at"])) == ("Edited elsewhere", at)
    assert got["version"] == post["version"] + 1


def test_detail_shows_the_posts_event_history(stack: Stack, open_page: Callable[..., Any]) -> None:
    # Given a post that publishes to a webhook
    user = _user()
    receiver = Receiver().start()
    try:
        channel = _channel(stack, user, receiver.url)
        at = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=3)
        _post(stack, user, channel, at, "With a history")
        page = open_page(ZONE)
        _sign_in(page, user)
        item = _slot(page, at, ZONE).locator(".post").first
        expect(item.locator(".badge")).to_have_text(re.compile("Published"), timeout=30_000)
        # When the creator opens it, Then its history lists what happened, in order
        item.get_by_role("button").click()
        history = page.locator("#detail .history li")
        expect(history.filter(has_text="post published")).to_have_count(1, timeout=15_000)
        texts = history.all_inner_texts()
        wanted = ("post scheduled", "post claimed", "delivery published", "post published")
        kinds = [k for line in texts for k in wanted if k in line]
        assert kinds == ["post scheduled", "post claimed", "delivery published", "post published"]
        assert any("Blog hook" in line for line in texts if "delivery published" in line)
    finally:
        receiver.stop()
