"""Threads and first comments in the compose dialog, in a real browser: a 3-part thread with a
first comment to a Mastodon channel (the stand-in) composed with "Add to thread", reordered and
trimmed by its buttons, counted per part, previewed, published now and shown part by part in the
post's detail; an edited draft's parts and comment back in the dialog; an empty part's 422 at
the part; a reply's own image and alt text, previewed under it and published with it. Each
test signs in as its own user."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from local.mastodon import Account, MastodonStandIn
from tests.browser.conftest import Stack
from tests.browser.test_calendar import _assert_accessible, _sign_in, _user
from tests.browser.test_media_page import _png

pytestmark = pytest.mark.browser


@pytest.fixture
def standin() -> Iterator[tuple[MastodonStandIn, str]]:
    standin = MastodonStandIn()
    with standin.serving() as instance:
        yield standin, instance


def _toots(stack: Stack, user: str, standin: MastodonStandIn, instance: str) -> Account:
    account = standin.add_account(f"thr{uuid.uuid4().hex[:8]}")
    reply = stack.client(user).request(
        "POST",
        "/v1/channels",
        {
            "platform": "mastodon",
            "name": "Toots",
            "instance_url": instance,
            "access_token": account.token,
        },
    )
    assert reply.status == 201, reply.body
    return account


def test_compose_thread_with_a_first_comment_publishes_each_part_shown_in_the_detail(
    stack: Stack, open_page: Callable[..., Any], standin: tuple[MastodonStandIn, str]
) -> None:
    # Given a creator with a Mastodon channel, writing part 1 of a thread
    user = _user()
    account = _toots(stack, user, *standin)
    page = open_page("Europe/Lisbon")
    _sign_in(page, user)
    page.get_by_role("button", name="New post").click()
    page.get_by_label("Content").fill("One: the idea")
    page.get_by_role("checkbox", name="Toots").check()
    # When they add three replies by keyboard, move the third up, and remove the last
    for text in ("Three: the proof", "Two: the detail", "Four: cut"):
        page.get_by_role("button", name="Add to thread").press("Enter")
        page.keyboard.type(text)  # the new part's box has the focus
    expect(page.get_by_label("Part 4 of 4")).to_have_value("Four: cut")
    page.get_by_role("button", name="Remove part 4").press("Enter")
    page.get_by_role("button", name="Move part 3 up").press("Enter")
    expect(page.get_by_label("Part 2 of 3")).to_have_value("Two: the detail")
    expect(page.get_by_label("Part 3 of 3")).to_have_value("Three: the proof")
    expect(page.get_by_role("button", name="Move part 2 down")).to_be_focused()
    # Then each part is counted on the channel's own rule
    expect(page.locator("#thread-parts li.thread-part").nth(1)).to_contain_text(
        "Toots: 16 / 500 characters"
    )
    # When they add a first comment, Then the preview shows the thread and the comment
    page.get_by_label("First comment").fill("The link: https://example.org/notes")
    expect(page.locator("#comment-counts")).to_contain_text("Toots: 33 / 500 characters")
    preview = page.get_by_role("region", name="Preview on Toots")
    expect(preview).to_contain_text("Part 2 of 3 · a reply to part 1")
    expect(preview).to_contain_text("Part 3 of 3 · a reply to part 2")
    expect(preview).to_contain_text("First comment · a reply to part 1")
    _assert_accessible(page, "compose with a thread and a first comment")
    page.get_by_label("Now").check()
    page.get_by_role("button", name="Schedule").click()
    expect(page.locator("#compose")).to_be_hidden()
    # Then the API has the replies in order and the comment
    post = stack.client(user).request("GET", "/v1/scheduled-posts").body["items"][0]
    assert post["content"] == "One: the idea"
    assert post["parts"] == [
        {"content": "Two: the detail", "media_ids": []},
        {"content": "Three: the proof", "media_ids": []},
    ]
    assert post["first_comment"] == {
        "content": "The link: https://example.org/notes",
        "delay_seconds": 0,
    }
    # When it is published, Then the detail shows 3/3 parts with their links and the comment
    page.locator(f'[data-schedule-id="{post["schedule_id"]}"]').click()
    detail = page.locator("#detail")
    expect(detail).to_contain_text("3/3 parts published", timeout=30_000)
    expect(detail.locator(".thread-facts")).to_contain_text("Two: the detail")
    statuses = standin[0].statuses_of(account)
    assert [s.text for s in statuses] == [
        "One: the idea",
        "Two: the detail",
        "Three: the proof",
        "The link: https://example.org/notes",
    ]
    assert [s.in_reply_to_id for s in statuses] == [
        None,
        statuses[0].id,
        statuses[1].id,
        statuses[0].id,
    ]
    for n in (1, 2, 3):
        link = detail.get_by_role("link", name=f"Part {n} on Toots")
        expect(link).to_have_attribute(
            "href", f"https://mastodon.local/@{account.username}/{statuses[n - 1].id}"
        )
    expect(detail).to_contain_text("First comment: ✓ Published")
    expect(detail.get_by_role("link", name="View the first comment on Toots")).to_have_attribute(
        "href", f"https://mastodon.local/@{account.username}/{statuses[3].id}"
    )
    _assert_accessible(page, "detail of a published thread")


def test_compose_thread_an_edited_draft_shows_its_parts_and_comment_and_saves_them(
    stack: Stack, open_page: Callable[..., Any], standin: tuple[MastodonStandIn, str]
) -> None:
    # Given a draft thread with a first comment 90 s after it, made through the API
    user = _user()
    _toots(stack, user, *standin)
    api = stack.client(user)
    channel_id = api.request("GET", "/v1/channels").body["items"][0]["channel_id"]
    made = api.request(
        "POST",
        "/v1/scheduled-posts",
        {
            "content": "Draft one",
            "channel_ids": [channel_id],
            "parts": [{"content": "Draft two"}, {"content": "Draft three"}],
            "first_comment": {"content": "Draft comment", "delay_seconds": 90},
        },
    )
    assert made.status == 201, made.body
    page = open_page("Europe/Lisbon")
    _sign_in(page, user)
    # When they open it, Then its parts and comment are in the dialog
    page.get_by_role("button", name="Drafts").click()
    page.get_by_role("button", name="Open draft Draft one").click()
    expect(page.get_by_label("Part 2 of 3")).to_have_value("Draft two")
    expect(page.get_by_label("Part 3 of 3")).to_have_value("Draft three")
    expect(page.get_by_label("First comment")).to_have_value("Draft comment")
    expect(page.get_by_label("Delay after the post")).to_have_value("1.5")
    # When they remove part 2 and the comment and save, Then the API has one reply, no comment
    page.get_by_role("button", name="Remove part 2").click()
    expect(page.get_by_label("Part 2 of 2")).to_have_value("Draft three")
    page.get_by_label("First comment").fill("")
    page.get_by_role("button", name="Save draft").click()
    expect(page.locator("#compose")).to_be_hidden()
    saved = api.request("GET", f"/v1/scheduled-posts/{made.body['schedule_id']}").body
    assert saved["parts"] == [{"content": "Draft three", "media_ids": []}]
    assert saved["first_comment"] is None


def test_compose_thread_an_empty_part_shows_the_apis_422_at_the_part(
    stack: Stack, open_page: Callable[..., Any], standin: tuple[MastodonStandIn, str]
) -> None:
    # Given a thread whose second reply was left blank
    user = _user()
    _toots(stack, user, *standin)
    page = open_page("Europe/Lisbon", expected_statuses=(422,))
    _sign_in(page, user)
    page.get_by_role("button", name="New post").click()
    page.get_by_label("Content").fill("Starts well")
    page.get_by_role("checkbox", name="Toots").check()
    page.get_by_role("button", name="Add to thread").click()
    page.keyboard.type("Goes on")
    page.get_by_role("button", name="Add to thread").click()
    page.keyboard.type("   ")
    # When they schedule it, Then the API's refusal is shown at part 3, and nothing is stored
    page.get_by_role("button", name="Schedule").click()
    third = page.locator("#thread-parts li.thread-part").nth(1)
    expect(third.locator(".error").first).to_contain_text("Part 3: ")
    expect(third.locator(".error").first).to_contain_text("blank")
    expect(page.locator("#compose-error")).to_contain_text(
        "Please correct the fields marked below."
    )
    expect(page.locator("#compose")).to_be_visible()
    assert stack.client(user).request("GET", "/v1/scheduled-posts").body["items"] == []


def test_compose_thread_a_reply_carries_its_own_image_and_alt_text_to_the_network(
    stack: Stack,
    open_page: Callable[..., Any],
    standin: tuple[MastodonStandIn, str],
    tmp_path: Path,
    screenshot_dir: Path,
) -> None:
    # Given a creator composing a 2-part thread to a Mastodon channel
    user = _user()
    account = _toots(stack, user, *standin)
    page = open_page("Europe/Lisbon")
    _sign_in(page, user)
    page.get_by_role("button", name="New post").click()
    page.get_by_label("Content").fill("One: the chart follows")
    page.get_by_role("checkbox", name="Toots").check()
    page.get_by_role("button", name="Add to thread").click()
    page.keyboard.type("Two: the chart")
    # When they add an image to part 2 alone and describe it
    path, _ = _png(tmp_path)
    chart = path.with_name("chart.png")
    path.rename(chart)
    page.get_by_label("Add media to part 2").set_input_files(str(chart))
    part = page.locator("#thread-parts li.thread-part").first
    expect(part.locator(".media-list li")).to_contain_text("Ready: image/png", timeout=15_000)
    alt = page.get_by_label("Part 2: Alt text for chart.png")
    alt.fill("A bar chart of the week")
    alt.press("Tab")
    # Then the preview shows the image under part 2 with its alt text, not under part 1
    preview = page.get_by_role("region", name="Preview on Toots")
    reply = preview.locator(".preview-reply").first
    expect(reply).to_contain_text("ALT: A bar chart of the week")
    expect(preview.locator(".preview-reply img")).to_have_count(1)
    page.locator("#compose").screenshot(path=str(screenshot_dir / "compose-thread-media.png"))
    _assert_accessible(page, "compose with an image on a reply")
    page.get_by_label("Now").check()
    page.get_by_role("button", name="Schedule").click()
    expect(page.locator("#compose")).to_be_hidden()
    # Then the API has the image on part 2 and none on part 1
    api = stack.client(user)
    post = api.request("GET", "/v1/scheduled-posts").body["items"][0]
    [media] = api.request("GET", "/v1/media").body["items"]
    assert (post["media_ids"], post["parts"]) == (
        [],
        [{"content": "Two: the chart", "media_ids": [media["media_id"]]}],
    )
    assert media["alt_text"] == "A bar chart of the week"
    # And on the network, part 2's status (a reply to part 1) carries it with its description
    page.locator(f'[data-schedule-id="{post["schedule_id"]}"]').click()
    expect(page.locator("#detail")).to_contain_text("2/2 parts published", timeout=30_000)
    one, two = standin[0].statuses_of(account)
    assert (one.media_ids, two.in_reply_to_id) == ((), one.id)
    [attachment] = [standin[0].media.items[i] for i in two.media_ids]
    assert attachment.description == "A bar chart of the week"


def test_compose_a_channels_own_replies_replace_the_posts_replies_there_only(
    stack: Stack, open_page: Callable[..., Any], standin: tuple[MastodonStandIn, str]
) -> None:
    # Given a creator with two Mastodon channels, writing a 2-part thread to both
    user = _user()
    toots = _toots(stack, user, *standin)
    other = standin[0].add_account(f"own{uuid.uuid4().hex[:8]}")
    reply = stack.client(user).request(
        "POST",
        "/v1/channels",
        {
            "platform": "mastodon",
            "name": "Quiet",
            "instance_url": standin[1],
            "access_token": other.token,
        },
    )
    assert reply.status == 201, reply.body
    quiet = str(reply.body["channel_id"])
    page = open_page("Europe/Lisbon")
    _sign_in(page, user)
    page.get_by_role("button", name="New post").click()
    page.get_by_label("Content").fill("One: for everyone")
    page.get_by_role("checkbox", name="Toots").check()
    page.get_by_role("checkbox", name="Quiet").check()
    page.get_by_role("button", name="Add to thread").click()
    page.keyboard.type("Two: the long version")
    # When they give Quiet two replies of its own by keyboard, then remove the second
    page.get_by_text("Own text for Quiet").click()
    for text in ("Two: the short version", "Three: cut"):
        page.get_by_role("button", name="Add a reply for Quiet only").press("Enter")
        page.keyboard.type(text)  # the new reply's box has the focus
    expect(page.get_by_label("Quiet's own part 3", exact=True)).to_have_value("Three: cut")
    page.get_by_role("button", name="Remove Quiet's own part 3").press("Enter")
    expect(page.get_by_role("button", name="Add a reply for Quiet only")).to_be_focused()
    # Then Quiet's reply is counted by its rules and previewed in place of the post's
    own = page.get_by_label("Quiet's own part 2", exact=True)
    expect(own).to_have_value("Two: the short version")
    quiet_own = page.locator("#variant-fields .own-replies", has_text="Quiet publishes")
    expect(quiet_own).to_contain_text("Quiet: 22 / 500")
    preview = page.get_by_role("region", name="Preview on Quiet")
    expect(preview).to_contain_text("Two: the short version")
    expect(preview).not_to_contain_text("Two: the long version")
    _assert_accessible(page, "compose with a channel's own replies")
    page.get_by_label("Now").check()
    page.get_by_role("button", name="Schedule").click()
    expect(page.locator("#compose")).to_be_hidden()
    # Then the API has Quiet's own parts, and each account got its own thread
    post = stack.client(user).request("GET", "/v1/scheduled-posts").body["items"][0]
    assert post["variants"][quiet]["parts"] == [
        {"content": "Two: the short version", "media_ids": []}
    ]
    page.locator(f'[data-schedule-id="{post["schedule_id"]}"]').click()
    expect(page.locator("#detail #detail-title")).to_contain_text("Published", timeout=30_000)
    texts = {
        name: [s.text for s in standin[0].statuses_of(account)]
        for name, account in (("Toots", toots), ("Quiet", other))
    }
    assert texts == {
        "Toots": ["One: for everyone", "Two: the long version"],
        "Quiet": ["One: for everyone", "Two: the short version"],
    }
