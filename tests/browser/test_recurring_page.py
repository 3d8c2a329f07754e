"""Recurring schedules on the page: create with a preview, pause, resume, end; and the calendar
drawing occurrences past the materialization horizon as planned. Each test signs in as its own
user."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Stack
from tests.browser.test_calendar import _assert_accessible, _channel, _sign_in, _user

pytestmark = pytest.mark.browser

ZONE = "Europe/Paris"


def test_create_preview_pause_resume_and_end_a_weekly_schedule(
    stack: Stack, open_page: Callable[..., Any]
) -> None:
    # Given a creator with a channel, on the Recurring view
    user = _user()
    _channel(stack, user)
    page = open_page(ZONE, expected_statuses=(422,))
    _sign_in(page, user)
    page.get_by_role("button", name="Recurring").click()
    expect(page.locator("#series-rows")).to_contain_text("No recurring schedules yet.")
    form = page.locator("#series-form")
    form.get_by_label("Text of each post").fill("Weekly digest")
    form.get_by_label("Blog hook").check()
    form.get_by_label("Time zone").select_option(ZONE)
    form.get_by_label("Mon").check()
    form.get_by_label("Fri").check()
    form.get_by_label("Times").fill("10:30")
    # When they preview it, Then five Monday/Friday 10:30 Paris occurrences are listed
    form.get_by_role("button", name="Preview").click()
    items = form.locator("#series-preview-list li")
    expect(items).to_have_count(5)
    texts = items.all_inner_texts()
    assert all(re.match(r"(Mon|Fri), .*, 10:30 \(UTC\+0[12]:00\)", x) for x in texts), texts
    # When a time is malformed, Then the service's words are shown and nothing is created
    form.get_by_label("Times").fill("25:00")
    form.get_by_role("button", name="Create schedule").click()
    expect(form.locator("#series-error")).not_to_be_empty()
    assert stack.client(user).request("GET", "/v1/recurring-schedules").body["items"] == []
    # When they create it, Then it is listed active with its rule and next occurrences
    form.get_by_label("Times").fill("10:30")
    form.get_by_role("button", name="Create schedule").click()
    row = page.get_by_role("row", name=re.compile("Weekly digest"))
    expect(row).to_contain_text("active")
    expect(row).to_contain_text("Mon, Fri at 10:30 (Europe/Paris)")
    _assert_accessible(page, "recurring view")
    # When they pause, resume and end it, Then the API agrees at each step
    api = stack.client(user)
    page.get_by_role("button", name="Pause Weekly digest").click()
    expect(row).to_contain_text("paused")
    assert api.request("GET", "/v1/recurring-schedules").body["items"][0]["status"] == "paused"
    page.get_by_role("button", name="Resume Weekly digest").click()
    expect(row).to_contain_text("active")
    page.get_by_role("button", name="End Weekly digest").click()
    page.get_by_role("dialog", name="End this recurring schedule?").get_by_role(
        "button", name="End schedule"
    ).click()
    expect(row).to_contain_text("cancelled")
    expect(page.get_by_role("button", name="End Weekly digest")).to_have_count(0)
    assert api.request("GET", "/v1/recurring-schedules").body["items"][0]["status"] == "cancelled"


def test_week_shows_every_occurrence_past_the_materialization_horizon_as_planned(
    stack: Stack, open_page: Callable[..., Any]
) -> None:
    # Given a daily series (its posts exist only for the next 48 h)
    user = _user()
    channel = _channel(stack, user)
    noon = datetime.now(ZoneInfo(ZONE)).replace(hour=12, minute=0, second=0, microsecond=0)
    body = {
        "content": "Daily note",
        "channel_ids": [channel],
        "timezone": ZONE,
        "slots": [{"days": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], "times": ["12:00"]}],
    }
    api = stack.client(user)
    assert api.request("POST", "/v1/recurring-schedules", body).status == 201
    # When the creator looks at next week
    page = open_page(ZONE)
    _sign_in(page, user)
    page.get_by_role("button", name="Next").click()
    # Then every day of it shows the series at 12:00, those not yet posts marked planned
    monday = (noon + timedelta(days=7 - noon.weekday())).date()
    for n in range(7):
        day = page.locator(f'li.day[data-date="{(monday + timedelta(days=n)).isoformat()}"]')
        expect(day.locator(".post")).to_have_count(1)
        expect(day.locator(".post")).to_contain_text("12:00")
        expect(day.locator(".post")).to_contain_text("Daily note")
    last = page.locator(f'li.day[data-date="{(monday + timedelta(days=6)).isoformat()}"] .post')
    expect(last).to_contain_text("Planned")
    horizon = datetime.now(UTC) + timedelta(days=2)
    posts = api.request("GET", "/v1/scheduled-posts").body["items"]
    assert all(datetime.fromisoformat(p["publish_at"]) <= horizon for p in posts)
