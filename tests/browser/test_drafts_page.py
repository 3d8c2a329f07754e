"""Drafts on the page, in a real browser: save a new post as a draft, find it under Drafts (not
on the calendar), edit it, then schedule it; delete another. Each test signs in as its own
user."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Stack
from tests.browser.test_calendar import _assert_accessible, _channel, _sign_in, _user

pytestmark = pytest.mark.browser


def test_save_a_draft_edit_it_then_schedule_it_and_delete_another(
    stack: Stack, open_page: Callable[..., Any]
) -> None:
    # Given a creator with a channel, writing a post they are not ready to schedule
    user = _user()
    _channel(stack, user)
    api = stack.client(user)
    page = open_page("Europe/Rome")
    _sign_in(page, user)
    for text in ("Half an idea", "Throw away"):
        page.get_by_role("button", name="New post").click()
        page.get_by_label("Content").fill(text)
        page.get_by_label("Save as draft").check()
        expect(page.get_by_role("button", name="Save draft")).to_be_visible()
        page.get_by_role("button", name="Save draft").click()
        expect(page.locator("#compose")).to_be_hidden()
    # Then both are drafts in the API, listed under Drafts, and none is on the calendar
    drafts = api.request("GET", "/v1/scheduled-posts?status=draft").body["items"]
    assert sorted(d["content"] for d in drafts) == ["Half an idea", "Throw away"]
    assert all(d["publish_at"] is None for d in drafts)
    expect(page.locator("#calendar .post")).to_have_count(0)
    page.get_by_role("button", name="Drafts").click()
    expect(page.locator("#draft-list li")).to_have_count(2)
    _assert_accessible(page, "drafts view")
    # When they open one, edit it and save it still as a draft
    page.get_by_role("button", name="Open draft Half an idea").click()
    expect(page.get_by_role("heading", name="Edit draft")).to_be_visible()
    page.get_by_label("Content").fill("A whole idea")
    page.get_by_role("button", name="Save draft").click()
    expect(page.locator("#draft-list")).to_contain_text("A whole idea")
    # When they open it again and choose to publish it now, Then it leaves the drafts
    page.get_by_role("button", name="Open draft A whole idea").click()
    page.get_by_label("Now").check()
    page.get_by_role("button", name="Schedule").click()
    expect(page.locator("#compose")).to_be_hidden()
    expect(page.locator("#draft-list li")).to_have_count(1)
    posts = api.request("GET", "/v1/scheduled-posts").body["items"]
    assert [p["content"] for p in posts] == ["A whole idea"]
    assert posts[0]["status"] in ("scheduled", "publishing", "published", "failed")
    # When they delete the other draft, Then it is gone for good
    page.get_by_role("button", name="Delete draft Throw away").click()
    page.get_by_role("dialog", name="Delete this draft?").get_by_role(
        "button", name="Delete draft"
    ).click()
    expect(page.locator("#draft-list")).to_contain_text(re.compile("No drafts"))
    assert api.request("GET", "/v1/scheduled-posts?status=draft").body["items"] == []
