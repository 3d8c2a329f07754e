"""Recurring schedules on the page: create with a preview, pause, resume, end; and the calendar
drawing occurrences past the materialization horizon as planned. Each test signs in as its own
user."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Stack
from tests.browser.test_calendar import _assert_accessible, _channel, _sign_in, _user

pytestmark = pytest.mark.browser

ZONE = "Europe/Paris"


def test_create_preview_pause_resume_and_end_a_weekly_schedule(
    stack: Stack, open_page: Callable[..., Any], screenshot_dir: Path
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
    form.screenshot(path=str(screenshot_dir / "series-editor.png"))  # the README's picture
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


def _month_cells(page: Any, api: Any, series_id: str, zone: str, month: date) -> int:
    """Check that every occurrence of the series in the month view of ``month`` is drawn on
    its local day at its local time; return how many there were."""
    expect(page.locator("#range-title")).to_have_text(f"{month:%B %Y}")
    dates = page.locator("li.day").evaluate_all("(els) => els.map((e) => e.dataset.date)")
    occurrences = api.request(
        "GET", f"/v1/recurring-schedules/{series_id}/occurrences?limit=60"
    ).body["items"]
    seen = 0
    for occurrence in occurrences:
        local = datetime.fromisoformat(occurrence["occurrence_at"]).astimezone(ZoneInfo(zone))
        if local.date().isoformat() not in dates:
            continue
        day = page.locator(f'li.day[data-date="{local.date().isoformat()}"]')
        expect(day.locator(".post", has_text=local.strftime("%H:%M"))).to_have_count(1)
        seen += 1
    return seen


def test_create_a_new_york_series_see_it_across_the_month_then_edit_it_to_a_cron_rule(
    stack: Stack, open_page: Callable[..., Any]
) -> None:
    # Given a creator in Berlin with a channel, creating a Mon/Thu 09:30 New York series
    user = _user()
    _channel(stack, user)
    api = stack.client(user)
    page = open_page("Europe/Berlin")
    _sign_in(page, user)
    page.get_by_role("button", name="Recurring").click()
    form = page.locator("#series-form")
    form.get_by_label("Text of each post").fill("Weekly digest")
    form.get_by_label("Blog hook").check()
    form.get_by_label("Time zone").select_option("America/New_York")
    form.get_by_label("Mon").check()
    form.get_by_label("Thu").check()
    form.get_by_label("Times").fill("09:30")
    # Then the rule is said in plain words, and the preview is in Berlin time
    expect(form.locator("#series-summary")).to_have_text(
        "Every Monday and Thursday at 09:30, New York time (America/New_York)."
    )
    form.get_by_role("button", name="Preview").click()
    items = form.locator("#series-preview-list time")
    expect(items).to_have_count(5)
    for n in range(5):
        at = datetime.fromisoformat(str(items.nth(n).get_attribute("datetime")))
        berlin = at.astimezone(ZoneInfo("Europe/Berlin"))
        assert at.astimezone(ZoneInfo("America/New_York")).strftime("%a %H:%M") in (
            "Mon 09:30",
            "Thu 09:30",
        )
        expect(items.nth(n)).to_have_text(
            re.compile(
                rf"^{berlin:%a}, .*, {berlin:%H:%M} \(UTC\+0[12]:00\) — 09:30 in America/New_York$"
            )
        )
    _assert_accessible(page, "recurring form with a preview")
    form.get_by_role("button", name="Create schedule").click()
    row = page.get_by_role("row", name=re.compile("Weekly digest"))
    expect(row).to_contain_text("Mon, Thu at 09:30 (America/New_York)")
    series_id = api.request("GET", "/v1/recurring-schedules").body["items"][0]["series_id"]
    # When they look at this month and the next, Then every occurrence is on its Berlin day
    this_month = datetime.now(ZoneInfo("Europe/Berlin")).date().replace(day=1)
    next_month = (this_month + timedelta(days=32)).replace(day=1)
    page.get_by_role("button", name="Month").click()
    _month_cells(page, api, series_id, "Europe/Berlin", this_month)
    page.get_by_role("button", name="Next").click()
    assert _month_cells(page, api, series_id, "Europe/Berlin", next_month) >= 8
    # When they edit it to a cron rule at 11:00 with new text
    page.get_by_role("button", name="Recurring").click()
    page.get_by_role("button", name="Edit Weekly digest").click()
    expect(form.get_by_role("heading")).to_have_text('Edit "Weekly digest"')
    expect(form.get_by_label("Times")).to_have_value("09:30")
    form.get_by_label("Text of each post").fill("Edited digest")
    form.get_by_label("Cron rule", exact=True).check()
    form.get_by_label("Cron rule (five fields)").fill("0 11 * * 1,4")
    expect(form.locator("#series-summary")).to_have_text(
        "Every Monday and Thursday at 11:00, New York time (America/New_York)."
    )
    _assert_accessible(page, "recurring form, editing")
    form.get_by_role("button", name="Save changes").click()
    # Then the API holds the new rule and text, and the calendar follows
    row = page.get_by_role("row", name=re.compile("Edited digest"))
    expect(row).to_contain_text("cron 0 11 * * 1,4 (America/New_York)")
    series = api.request("GET", f"/v1/recurring-schedules/{series_id}").body
    assert (series["cron"], series["slots"], series["content"]) == (
        "0 11 * * 1,4",
        None,
        "Edited digest",
    )
    page.get_by_role("button", name="Month").click()
    expect(page.locator("li.day .post", has_text="Edited digest").first).to_be_visible()
    assert _month_cells(page, api, series_id, "Europe/Berlin", next_month) >= 8
    expect(page.locator("li.day .post", has_text="Weekly digest")).to_have_count(0)
