"""Imports on the page, in a real browser: a CSV is checked (the dry run's problems by line),
the good rows imported, the progress followed until completed, and each row's result listed.
Each test signs in as its own user."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Stack
from tests.browser.test_calendar import _assert_accessible, _channel, _sign_in, _user

pytestmark = pytest.mark.browser

ZONE = "America/Chicago"


def _csv(tmp_path: Path, channel: str) -> tuple[Path, list[int]]:
    """A 20-row spreadsheet CSV to ``channel``; lines 6 and 16 are bad (an impossible date, no
    channel); row 9's text spans two lines (quoted), so later rows' lines are not their index."""
    start = datetime.now(ZoneInfo(ZONE)).date() + timedelta(days=3)
    lines = ["local_date,local_time,timezone,channels,content"]
    bad = []
    for n in range(20):
        day = (start + timedelta(days=n)).isoformat()
        text = f"Imported post {n + 1}"
        if n == 8:
            text = f'"Imported post {n + 1}\nwith a second line"'
        row = f"{day},09:30,{ZONE},{channel},{text}"
        if n == 4:
            row = f"2026-02-30,09:30,{ZONE},{channel},{text}"
        if n == 13:
            row = f"{day},09:30,{ZONE},,{text}"
        if n in (4, 13):
            bad.append(len("\n".join(lines).splitlines()) + 1)
        lines.append(row)
    path = tmp_path / "month.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, bad


def test_import_a_csv_shows_bad_rows_then_imports_the_good_ones_with_progress(
    stack: Stack, open_page: Callable[..., Any], tmp_path: Path
) -> None:
    # Given a creator with a channel and a 20-row CSV whose lines 6 and 16 are bad
    user = _user()
    path, bad = _csv(tmp_path, _channel(stack, user))
    assert bad == [6, 16]
    api = stack.client(user)
    page = open_page(ZONE)
    _sign_in(page, user)
    page.get_by_role("button", name="Imports").click()
    # When they choose the file, Then the check lists both bad rows by line, nothing is written
    page.get_by_label("File to import").set_input_files(str(path))
    problems = page.locator("#import-problems li")
    expect(problems).to_have_count(2)
    expect(problems.nth(0)).to_contain_text("Line 6")
    expect(problems.nth(0)).to_contain_text("local_date")
    expect(problems.nth(1)).to_contain_text("Line 16")
    expect(problems.nth(1)).to_contain_text("channels")
    expect(page.locator("#import-summary")).to_contain_text("20 rows: 2 with problems, 18 ready")
    assert api.request("GET", "/v1/scheduled-posts").body["items"] == []
    _assert_accessible(page, "imports view, checked")
    # When they import the good rows, Then the progress reaches 18 of 18 and completes
    page.get_by_role("button", name="Import the 18 good rows").click()
    state = page.locator("#import-state")
    expect(state).to_contain_text("Completed: 18 of 18 rows done, 18 imported", timeout=30_000)
    expect(page.locator("#import-progress")).to_have_attribute("value", "18")
    # And each row's result is listed under the file's own line numbers (the bad ones absent)
    results = page.locator("#import-results li")
    expect(results).to_have_count(18)
    shown = [int(re.findall(r"^Line (\d+)", x)[0]) for x in results.all_inner_texts()]
    assert shown == [n for n in range(2, 23) if n not in (6, 11, 16)], shown
    # And the API holds the 18 posts, at 09:30 Chicago time
    posts = api.request("GET", "/v1/scheduled-posts?limit=100").body["items"]
    assert len(posts) == 18
    assert sorted(p["content"] for p in posts) == sorted(
        ["Imported post 9\nwith a second line"]
        + [f"Imported post {n}" for n in range(1, 21) if n not in (5, 9, 14)]
    )
    _assert_accessible(page, "imports view, completed")
    # When they open a row's post, Then its detail shows the imported text
    page.get_by_role("button", name="Open the post of line 22").click()
    expect(page.locator("#detail")).to_contain_text("Imported post 20")
    expect(page.locator("#detail")).to_contain_text("09:30")
    page.locator("#detail").get_by_role("button", name="Close").click()
    # When the same view is shown on a 390 px phone, Then it fits without sideways scrolling
    page.set_viewport_size({"width": 390, "height": 844})
    expect(results.first).to_be_visible()
    assert page.evaluate(
        "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    )
    _assert_accessible(page, "imports view at 390 px")
