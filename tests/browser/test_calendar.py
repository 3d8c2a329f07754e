"""The content calendar in a real browser against the local stack (issue 15).

Each test signs in as its own user, so tests do not see each other's posts or channels.
Accessibility: axe-core (bundled by axe-playwright-python) on each view, no serious or
critical violation.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import time
import uuid
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit
from zoneinfo import ZoneInfo

import jwt
import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect

from local.config import LocalConfig
from local.emulation.receiver import Receiver
from local.token import make_token
from scheduled_posts.clock import format_instant, parse_instant
from tests.browser.conftest import JWT_SECRET, Stack

pytestmark = pytest.mark.browser

_axe = Axe()


def _assert_accessible(page: Any, view: str) -> None:
    results = _axe.run(page)
    assert results.response["passes"], "axe-core ran no check"
    bad = [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']]}"
        for v in results.response["violations"]
        if v["impact"] in ("serious", "critical")
    ]
    assert bad == [], f"{view}: {bad}"


def _sign_in(page: Any, user: str) -> None:
    page.get_by_label("User").fill(user)
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_role("button", name="New post")).to_be_visible()


def _user() -> str:
    return f"user-{uuid.uuid4().hex[:8]}"


def _channel(stack: Stack, user: str, url: str = "http://127.0.0.1:9/hook") -> str:
    reply = stack.client(user).request(
        "POST", "/v1/channels", {"platform": "webhook", "name": "Blog hook", "url": url}
    )
    assert reply.status == 201, reply.body
    return str(reply.body["channel_id"])


def _post(stack: Stack, user: str, channel_id: str, publish_at: datetime, content: str) -> dict:
    reply = stack.client(user).request(
        "POST",
        "/v1/scheduled-posts",
        {"content": content, "publish_at": format_instant(publish_at), "channel_ids": [channel_id]},
    )
    assert reply.status == 201, reply.body
    return dict(reply.body)


def _slot(page: Any, when: datetime, zone: str) -> Any:
    """The week view's day cell of ``when`` in ``zone``, moving to the next week if needed."""
    local = when.astimezone(ZoneInfo(zone))
    today = datetime.now(ZoneInfo(zone)).date()
    if local.date() - timedelta(days=local.weekday()) > today - timedelta(days=today.weekday()):
        page.get_by_role("button", name="Next").click()
    return page.locator(f'li.day[data-date="{local.date().isoformat()}"]')


def _transitions(zone: str, after: date) -> tuple[datetime, datetime]:
    """The next spring-forward and fall-back local dates' wall times in ``zone``.

    Returns (a wall time inside the gap, a wall time inside the overlap), naive.
    """
    tz = ZoneInfo(zone)
    gap = overlap = None
    day = after
    while gap is None or overlap is None:
        day += timedelta(days=1)
        before = datetime(day.year, day.month, day.day, tzinfo=tz).utcoffset()
        later = datetime(day.year, day.month, day.day, 12, tzinfo=tz).utcoffset()
        assert before is not None and later is not None
        if later > before and gap is None:
            gap = datetime(day.year, day.month, day.day, 2, 30)
        if later < before and overlap is None:
            overlap = datetime(day.year, day.month, day.day, 1, 30)
    return gap, overlap


def test_calendar_post_from_api_shows_in_local_slot_and_turns_published(
    stack: Stack, open_page: Callable[..., Any], screenshot_dir: Path
) -> None:
    # Given a post created through the API, due in a few seconds, to a live webhook receiver
    user = _user()
    receiver = Receiver().start()
    try:
        channel_id = _channel(stack, user, receiver.url)
        publish_at = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=6)
        _post(stack, user, channel_id, publish_at, "Launch day\nmore details below")
        later = publish_at + timedelta(days=1, hours=3)
        _post(stack, user, channel_id, later, "A second post for tomorrow")
        zone = "America/New_York"
        page = open_page(zone)
        # When the user signs in
        _sign_in(page, user)
        expect(page.locator("#zone-name")).to_have_text(re.compile(r"^America/New_York \(UTC"))
        # Then the post sits in its local day with its local time, first line and channel
        cell = _slot(page, publish_at, zone)
        item = cell.locator(".post")
        local_time = publish_at.astimezone(ZoneInfo(zone)).strftime("%H:%M")
        expect(item.first).to_contain_text(local_time)
        expect(item.first).to_contain_text("Launch day")
        expect(item.first).not_to_contain_text("more details")
        expect(item.first).to_contain_text("To: Blog hook")
        # And it turns published without a reload (the page polls)
        expect(item.first.locator(".badge")).to_have_text(re.compile("Published"), timeout=30_000)
        assert len(receiver.snapshot()) == 1
        page.screenshot(path=str(screenshot_dir / "calendar-week.png"))
        _assert_accessible(page, "week view")
        # And its detail shows the lag, the delivery and the attempt
        item.first.get_by_role("button").click()
        detail = page.locator("#detail")
        expect(detail.locator("#detail-title")).to_contain_text("Published")
        expect(detail.locator("dl")).to_contain_text(re.compile(r"Publish lag\s*\d+\.\d{3} s"))
        expect(
            detail.locator("table").first.get_by_role("row", name=re.compile("Blog hook"))
        ).to_contain_text("Published")
        expect(detail.locator("table").nth(1)).to_contain_text("published")
        expect(detail.get_by_role("button", name="Cancel post")).to_be_hidden()
        page.screenshot(path=str(screenshot_dir / "calendar-post-detail.png"))
        _assert_accessible(page, "post detail")
        detail.get_by_role("button", name="Close").click()
        # And the month view lists it too
        page.get_by_role("button", name="Month").click()
        month_cell = page.locator(
            f'li.day[data-date="{publish_at.astimezone(ZoneInfo(zone)).date()}"]'
        )
        expect(month_cell).to_contain_text("Launch day")
        _assert_accessible(page, "month view")
        # And Previous / Next / Today move by a month here
        title = page.locator("#range-title")
        this_month = datetime.now(ZoneInfo(zone)).strftime("%B %Y")
        expect(title).to_have_text(this_month)
        page.get_by_role("button", name="Next").click()
        expect(title).not_to_have_text(this_month)
        page.get_by_role("button", name="Today").click()
        expect(title).to_have_text(this_month)
    finally:
        receiver.stop()


@pytest.mark.parametrize("zone", ["Asia/Kolkata", "America/New_York"])
def test_compose_in_browser_zone_stores_utc_instant(
    stack: Stack, open_page: Callable[..., Any], screenshot_dir: Path, zone: str
) -> None:
    # Given a user with a channel, in a browser set to `zone`
    user = _user()
    _channel(stack, user)
    page = open_page(zone)
    _sign_in(page, user)
    expect(page.locator("#zone-name")).to_have_text(
        re.compile(rf"^{zone} \(UTC[+\u2212]\d\d:\d\d\)$")
    )
    local_day = datetime.now(ZoneInfo(zone)).date() + timedelta(days=3)
    wall = f"{local_day.isoformat()}T09:30"
    # When they compose a post for 09:30 local time three days ahead
    page.get_by_role("button", name="New post").click()
    dialog = page.get_by_role("dialog", name="New post")
    dialog.get_by_label("Content").fill("Morning update: https://example.com/a-long-link")
    dialog.get_by_label("Publish at").fill(wall)
    expect(dialog.locator("#content-counts")).to_contain_text("Blog hook: 47 characters (no limit)")
    expect(dialog.locator("#publish-hint")).to_contain_text(zone)
    if zone == "Asia/Kolkata":
        page.screenshot(path=str(screenshot_dir / "calendar-compose.png"))
        _assert_accessible(page, "compose dialog")
    if zone == "Asia/Kolkata":
        dialog.get_by_role("button", name="Schedule", exact=True).click()
    else:  # keyboard only: Enter in a field submits the dialog's form
        dialog.get_by_label("Publish at").press("Enter")
    expect(dialog).to_be_hidden()
    # Then the API stored that wall time's UTC instant
    expected = datetime(
        local_day.year, local_day.month, local_day.day, 9, 30, tzinfo=ZoneInfo(zone)
    ).astimezone(UTC)
    items = stack.client(user).request("GET", "/v1/scheduled-posts").body["items"]
    assert [parse_instant(p["publish_at"]) for p in items] == [expected]


def test_compose_on_dst_days_names_the_gap_and_asks_about_the_overlap(
    stack: Stack, open_page: Callable[..., Any]
) -> None:
    # Given a New York user composing a post
    user = _user()
    _channel(stack, user)
    page = open_page("America/New_York")
    _sign_in(page, user)
    gap, overlap = _transitions("America/New_York", datetime.now(UTC).date())
    page.get_by_role("button", name="New post").click()
    dialog = page.get_by_role("dialog", name="New post")
    dialog.get_by_label("Content").fill("DST check")
    # When the time falls in the spring-forward gap, Then it is refused, never shifted
    dialog.get_by_label("Publish at").fill(gap.strftime("%Y-%m-%dT%H:%M"))
    expect(dialog.locator("#publish-error")).to_contain_text("does not exist in America/New_York")
    expect(dialog.locator("#publish-error")).to_contain_text(gap.strftime("%Y-%m-%d") + " 03:00")
    dialog.get_by_role("button", name="Schedule", exact=True).click()
    expect(dialog).to_be_visible()
    # When it falls in the fall-back overlap, Then the user must choose which one
    dialog.get_by_label("Publish at").fill(overlap.strftime("%Y-%m-%dT%H:%M"))
    expect(dialog.get_by_role("group", name=re.compile("happens twice"))).to_be_visible()
    dialog.get_by_role("button", name="Schedule", exact=True).click()
    expect(dialog.locator("#publish-error")).to_have_text("Choose which of the two times you mean.")
    assert stack.client(user).request("GET", "/v1/scheduled-posts").body["items"] == []
    # And Escape closes the dialog, giving focus back to the page
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()


def test_edit_after_concurrent_change_reloads_with_message_then_cancel(
    stack: Stack, open_page: Callable[..., Any]
) -> None:
    # Given a post open for editing in the browser
    user = _user()
    channel_id = _channel(stack, user)
    publish_at = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=2)
    post = _post(stack, user, channel_id, publish_at, "Original text")
    page = open_page("Asia/Kolkata", poll_ms=60_000, expected_statuses=(412,))
    _sign_in(page, user)
    _slot(page, publish_at, "Asia/Kolkata").get_by_role("button").first.click()
    detail = page.locator("#detail")
    expect(detail).to_contain_text("Original text")
    detail.get_by_role("button", name="Edit").click()
    dialog = page.get_by_role("dialog", name="Edit post")
    # When someone else changes it meanwhile
    reply = stack.client(user).request(
        "PATCH",
        f"/v1/scheduled-posts/{post['schedule_id']}",
        {"content": "Changed elsewhere"},
        headers={"If-Match": f'"{post["version"]}"'},
    )
    assert reply.status == 200, reply.body
    dialog.get_by_label("Content").fill("My edit")
    dialog.get_by_role("button", name="Save changes").click()
    # Then the page says so and shows the latest version instead of overwriting it
    expect(dialog.locator("#compose-error")).to_contain_text("changed elsewhere")
    expect(dialog.get_by_label("Content")).to_have_value("Changed elsewhere")
    got = stack.client(user).request("GET", f"/v1/scheduled-posts/{post['schedule_id']}").body
    assert got["content"] == "Changed elsewhere"
    dialog.get_by_role("button", name="Close").click()
    # When the user cancels the post and confirms
    _slot(page, publish_at, "Asia/Kolkata").get_by_role("button").first.click()
    detail.get_by_role("button", name="Cancel post").click()
    confirm = page.get_by_role("dialog", name="Cancel this post?")
    confirm.get_by_role("button", name="Cancel post").click()
    # Then it is cancelled, on the page and in the API
    expect(detail.locator("#detail-title")).to_contain_text("Cancelled")
    got = stack.client(user).request("GET", f"/v1/scheduled-posts/{post['schedule_id']}").body
    assert got["status"] == "cancelled"


def test_add_channel_shows_signing_secret_once(stack: Stack, open_page: Callable[..., Any]) -> None:
    # Given a signed-in user on the channels view
    user = _user()
    page = open_page("Asia/Kolkata")
    expect(page.get_by_label("User")).to_be_focused()
    _assert_accessible(page, "sign-in view")
    _sign_in(page, user)
    page.get_by_role("button", name="Channels").click()
    # When they add a webhook channel
    page.get_by_label("Name", exact=True).fill("Newsletter")
    page.get_by_label("Webhook URL").fill("http://127.0.0.1:9/newsletter")
    page.get_by_role("button", name="Add channel").click()
    # Then the secret is shown once, with a copy button, and the channel is listed
    secret = page.locator("#secret-value")
    expect(secret).to_have_text(re.compile(r"\S{16,}"))
    expect(page.get_by_role("button", name="Copy secret")).to_be_visible()
    expect(page.get_by_role("row", name=re.compile("Newsletter"))).to_be_visible()
    _assert_accessible(page, "channels view")
    shown = secret.inner_text()
    page.get_by_role("button", name="I stored it").click()
    expect(page.locator("#secret-box")).to_be_hidden()
    assert shown not in page.content()
    # When they rotate it, Then a new secret is shown once
    page.get_by_role("button", name="Rotate secret of Newsletter").click()
    page.get_by_role("dialog", name="Rotate the signing secret?").get_by_role(
        "button", name="Rotate"
    ).click()
    expect(secret).to_have_text(re.compile(r"\S{16,}"))
    assert secret.inner_text() != shown
    channels = stack.client(user).request("GET", "/v1/channels").body["items"]
    assert [c["name"] for c in channels] == ["Newsletter"]
    assert all("signing_secret" not in c for c in channels)


def test_oidc_sign_in_uses_code_flow_with_pkce_and_keeps_tokens_in_memory(
    stack: Stack, open_page: Callable[..., Any]
) -> None:
    # Given the page configured as deployed ("auth": "oidc"), with a stand-in identity provider
    # on the page's own origin (Playwright routes; the CSP allows only 'self' here)
    authority = f"{stack.url}/idp"
    access_token = make_token("oidc-user", LocalConfig(jwt_secret=JWT_SECRET))
    seen: dict[str, dict[str, str]] = {}

    def config(route: Any) -> None:
        body = {"auth": "oidc", "api_base": "", "authority": authority, "client_id": "cal"}
        route.fulfill(status=200, content_type="application/json", body=json.dumps(body))

    def provider(route: Any) -> None:
        url = urlsplit(route.request.url)
        if url.path.endswith("/.well-known/openid-configuration"):
            route.fulfill(
                status=200,
                content_type="application/json",
                body=json.dumps(
                    {
                        "issuer": authority,
                        "authorization_endpoint": f"{authority}/authorize",
                        "token_endpoint": f"{authority}/token",
                        "response_types_supported": ["code"],
                    }
                ),
            )
        elif url.path.endswith("/authorize"):
            query = dict(parse_qsl(url.query))
            seen["authorize"] = query
            target = f"{query['redirect_uri']}?code=the-code&state={query['state']}"
            route.fulfill(status=302, headers={"location": target})
        elif url.path.endswith("/token"):
            form = dict(parse_qsl(route.request.post_data or ""))
            seen["token"] = form
            now = int(time.time())
            id_token = jwt.encode(
                {"iss": authority, "aud": "cal", "sub": "oidc-user", "email": "ada@example.com",
                 "iat": now, "exp": now + 3600},
                "id-token-test-key-long-enough-for-hs256",
                algorithm="HS256",
            )  # fmt: skip
            route.fulfill(
                status=200,
                content_type="application/json",
                body=json.dumps(
                    {
                        "access_token": access_token,
                        "id_token": id_token,
                        "token_type": "Bearer",
                        "expires_in": 3600,
                    }
                ),
            )
        else:
            route.fulfill(status=404, body="")

    page = open_page("Asia/Kolkata", navigate=False)
    page.route(f"{stack.url}/config.json", config)
    page.route(f"{authority}/**", provider)
    page.goto(f"{stack.url}/")
    # When the user presses Sign in (no User field in a deployment)
    expect(page.get_by_label("User")).to_be_hidden()
    page.get_by_role("button", name="Sign in", exact=True).click()
    # Then they come back signed in, through the authorization-code flow with PKCE (RFC 7636)
    expect(page.locator("#account-name")).to_have_text("ada@example.com")
    expect(page.get_by_role("button", name="New post")).to_be_visible()
    authorize, token = seen["authorize"], seen["token"]
    assert (authorize["response_type"], authorize["code_challenge_method"]) == ("code", "S256")
    assert token["grant_type"] == "authorization_code" and token["code"] == "the-code"
    digest = hashlib.sha256(token["code_verifier"].encode()).digest()
    assert base64.urlsafe_b64encode(digest).rstrip(b"=").decode() == authorize["code_challenge"]
    assert "code=" not in page.url
    # And the tokens are in memory only
    stored = page.evaluate("JSON.stringify([{...localStorage}, {...sessionStorage}])")
    assert access_token not in stored and "ada@example.com" not in stored
    # When the user reloads, Then the page goes back through the provider by itself (its
    # session signs them in again) and they are signed in, still with nothing stored
    seen.clear()
    page.reload()
    expect(page.locator("#account-name")).to_have_text("ada@example.com")
    assert seen["token"]["code"] == "the-code" and "code=" not in page.url
    stored = page.evaluate("JSON.stringify([{...localStorage}, {...sessionStorage}])")
    assert access_token not in stored and "ada@example.com" not in stored
    # When they sign out and reload, Then the page stays on its sign-in button
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("button", name="Sign in", exact=True)).to_be_visible()
    seen.clear()
    page.reload()
    expect(page.get_by_role("button", name="Sign in", exact=True)).to_be_visible()
    assert "authorize" not in seen


def test_failed_post_retry_failed_channels_publishes_it(
    stack: Stack, open_page: Callable[..., Any]
) -> None:
    # Given a post whose webhook refuses it for good (a 4xx is not retried by the worker)
    user = _user()
    answer = {"status": 422}
    receiver = Receiver(status_for=lambda _payload: answer["status"]).start()
    try:
        channel_id = _channel(stack, user, receiver.url)
        publish_at = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=3)
        post = _post(stack, user, channel_id, publish_at, "Refused at first")
        page = open_page("America/New_York")
        _sign_in(page, user)
        item = _slot(page, publish_at, "America/New_York").locator(".post").first
        expect(item.locator(".badge")).to_have_text(re.compile("Failed"), timeout=30_000)
        item.get_by_role("button").click()
        detail = page.locator("#detail")
        expect(detail.locator("table").first).to_contain_text("http_422")
        # When the destination accepts again and the user retries the failed channels
        answer["status"] = 200
        detail.get_by_role("button", name="Retry failed channels").click()
        # Then the open detail follows the post to published, without a reload
        expect(detail.locator("#detail-title")).to_contain_text("Published", timeout=30_000)
        expect(detail.get_by_role("button", name="Retry failed channels")).to_be_hidden()
        assert len(receiver.snapshot()) == 1
        # And its attempts are numbered as the API numbers them, one row per attempt
        path = f"/v1/scheduled-posts/{post['schedule_id']}/attempts"
        numbers = [str(a["attempt"]) for a in stack.client(user).request("GET", path).body["items"]]
        rows = detail.locator("table").nth(1).locator("tbody tr")
        expect(rows).to_have_count(len(numbers))
        assert len(numbers) == 2
        assert rows.locator("td:first-child").all_inner_texts() == numbers
    finally:
        receiver.stop()


#: Where the page keeps a local-stack session across reloads (web/js/auth.js).
SESSION_KEY = "scheduled-posts.session"


def test_sign_in_never_prefills_a_user_and_reload_keeps_the_session(
    stack: Stack, open_page: Callable[..., Any]
) -> None:
    # Given the sign-in screen, Then no user name is filled in and no account bar is shown
    user = _user()
    page = open_page("Asia/Kolkata", expected_statuses=(401,))
    expect(page.get_by_label("User")).to_have_value("")
    expect(page.locator("#account")).to_be_hidden()
    expect(page.get_by_role("button", name="Sign out")).to_be_hidden()
    _sign_in(page, user)
    expect(page.locator("#account-name")).to_have_text(user)
    # When they sign out, Then the next person at this browser is not offered their name
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("User")).to_have_value("")
    _sign_in(page, user)
    # When the creator reloads the page, Then they are still signed in, as themselves
    page.reload()
    expect(page.get_by_role("button", name="New post")).to_be_visible()
    expect(page.locator("#account-name")).to_have_text(user)
    expect(page.get_by_label("User")).to_be_hidden()
    # When they sign out, Then the session is gone from the tab and the field is empty again
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("User")).to_be_visible()
    expect(page.get_by_label("User")).to_have_value("")
    expect(page.locator("#account")).to_be_hidden()
    assert page.evaluate("Object.keys(sessionStorage)") == []
    page.reload()
    expect(page.get_by_label("User")).to_be_visible()
    expect(page.get_by_role("button", name="New post")).to_be_hidden()
    # When the stored token is refused (a restarted stack, another secret), Then the page
    # forgets it and asks to sign in, never showing an empty calendar
    page.evaluate(
        "([key, until]) => sessionStorage.setItem(key, JSON.stringify("
        "{user: 'mallory', accessToken: 'not-a-token', expiresAt: until}))",
        [SESSION_KEY, (time.time() + 3600) * 1000],
    )
    page.reload()
    expect(page.get_by_label("User")).to_be_visible()
    expect(page.locator("#status")).to_contain_text("sign in again")
    expect(page.get_by_role("button", name="New post")).to_be_hidden()
    assert page.evaluate("Object.keys(sessionStorage)") == []


def test_hidden_attribute_wins_over_every_display_rule(
    stack: Stack, open_page: Callable[..., Any]
) -> None:
    # Given the page's stylesheet, When any element carries `hidden`, Then it is not displayed
    page = open_page("Asia/Kolkata")
    expect(page.get_by_label("User")).to_be_visible()
    shown = page.evaluate(
        "() => [...document.querySelectorAll('[hidden]')]"
        ".filter((el) => getComputedStyle(el).display !== 'none').map((el) => el.id || el.tagName)"
    )
    assert shown == []


#: In the page: what sticks out (see :func:`_spills`), as short strings.
_SPILLS_JS = """() => {
  const bad = [];
  const root = document.documentElement;
  if (root.scrollWidth > root.clientWidth) bad.push(`page ${root.scrollWidth}`);
  for (const cell of document.querySelectorAll('#calendar li.day')) {
    const box = cell.getBoundingClientRect();
    const day = cell.dataset.date;
    for (const el of [cell, ...cell.querySelectorAll('.post-open')]) {
      if (el.scrollWidth > el.clientWidth) bad.push(`${day} ${el.className} scrolls`);
    }
    for (const el of cell.querySelectorAll('*')) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5) {
        bad.push(`${day} ${el.tagName}.${el.className} [${r.left}, ${r.right}]`);
      }
    }
  }
  return bad;
}"""


def _spills(page: Any) -> list[str]:
    """What sticks out at the current width: a page wider than the viewport, an element of a
    day cell outside the cell, a cell or post button whose content is wider than it."""
    return list(page.evaluate(_SPILLS_JS))


def test_phone_width_month_and_channels_neither_overlap_nor_scroll_sideways(
    stack: Stack, open_page: Callable[..., Any], screenshot_dir: Path
) -> None:
    # Given a creator with a long-named channel and three posts on one day, on a 390 px phone
    user = _user()
    reply = stack.client(user).request(
        "POST",
        "/v1/channels",
        {
            "platform": "webhook",
            "name": "Company newsletter for all subscribers",
            "url": "http://127.0.0.1:9/hooks/a-very-long-path-segment-without-any-break-at-all",
        },
    )
    assert reply.status == 201, reply.body
    channel_id = str(reply.body["channel_id"])
    zone = "America/New_York"
    first = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=2)
    for n in range(3):
        _post(stack, user, channel_id, first + timedelta(minutes=n), f"Announcement{n}" * 6)
    page = open_page(zone, poll_ms=60_000)
    page.set_viewport_size({"width": 390, "height": 844})
    _sign_in(page, user)
    # Then the week view fits
    expect(page.locator(".grid-week .post").first).to_be_visible()
    assert _spills(page) == []
    page.screenshot(path=str(screenshot_dir / "mobile-week.png"))  # the README's picture
    _assert_accessible(page, "week view at 390 px")
    # When they switch to the month view, Then each post stays inside its own day
    page.get_by_role("button", name="Month").click()
    local = first.astimezone(ZoneInfo(zone))
    if local.month != datetime.now(ZoneInfo(zone)).month:
        page.get_by_role("button", name="Next").click()
    cell = page.locator(f'.grid-month li.day[data-date="{local.date().isoformat()}"]')
    expect(cell.locator(".post")).to_have_count(3)
    assert _spills(page) == []
    # And each post still names its status and first line to a screen reader
    expect(cell.get_by_role("button").first).to_have_accessible_name(
        re.compile(r"\d\d:\d\d.*Scheduled.*Announcement0")
    )
    _assert_accessible(page, "month view at 390 px")
    # And its detail fits the dialog
    cell.get_by_role("button").first.click()
    detail = page.locator("#detail")
    expect(detail.locator("#detail-title")).to_contain_text("Scheduled")
    assert detail.evaluate("(el) => el.scrollWidth <= el.clientWidth")
    _assert_accessible(page, "post detail at 390 px")
    detail.get_by_role("button", name="Close").click()
    # When they open the Channels view, Then its table fits without sideways scrolling
    page.get_by_role("button", name="Channels").click()
    expect(page.get_by_role("row", name=re.compile("Company newsletter"))).to_be_visible()
    assert _spills(page) == []
    assert page.locator("#channels table").evaluate(
        "(el) => el.getBoundingClientRect().right <= document.documentElement.clientWidth"
    )
    _assert_accessible(page, "channels view at 390 px")
    # And the Drafts, Recurring, Imports and Account views fit too, each without a serious
    # or critical axe violation at this width
    for view in ("Drafts", "Recurring", "Imports", "Account"):
        page.get_by_role("button", name=view, exact=True).click()
        expect(page.locator("h2", has_text=view).first).to_be_visible()
        assert _spills(page) == [], view
        assert page.evaluate(
            "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"
        ), view
        _assert_accessible(page, f"{view} view at 390 px")


def test_cancelled_post_detail_says_when_it_was_cancelled(
    stack: Stack, open_page: Callable[..., Any]
) -> None:
    # Given a post cancelled through the API
    user = _user()
    channel_id = _channel(stack, user)
    publish_at = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=3)
    post = _post(stack, user, channel_id, publish_at, "Called off")
    reply = stack.client(user).request("DELETE", f"/v1/scheduled-posts/{post['schedule_id']}")
    assert reply.status == 200, reply.body
    cancelled_at = reply.body["updated_at"]
    page = open_page("America/New_York", poll_ms=60_000)
    _sign_in(page, user)
    # When the creator opens its detail
    _slot(page, publish_at, "America/New_York").get_by_role("button").first.click()
    facts = page.locator("#detail dl")
    # Then it says it was cancelled, and when, instead of "not yet" published
    expect(page.locator("#detail-title")).to_contain_text("Cancelled")
    expect(facts).to_contain_text(re.compile(r"Cancelled\s*\w{3},? \d+ \w{3} \d{4},? \d\d:\d\d"))
    expect(facts.locator(f'time[datetime="{cancelled_at}"]')).to_be_visible()
    expect(facts).not_to_contain_text("not yet")
    expect(facts).not_to_contain_text("Published")


def test_post_detail_numbers_attempts_as_the_api_does(
    stack: Stack, open_page: Callable[..., Any]
) -> None:
    # Given a post whose attempts the API numbers per channel: a retried channel's 1 and 2,
    # another channel's 1, in start order
    user = _user()
    channel_id = _channel(stack, user)
    publish_at = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=3)
    post = _post(stack, user, channel_id, publish_at, "Retried once")
    start = datetime.now(UTC).replace(microsecond=0)

    def attempt(channel: str, number: int, minutes: int, outcome: str, status: int) -> dict:
        at = format_instant(start + timedelta(minutes=minutes))
        return {"channel_id": channel, "attempt": number, "started_at": at, "finished_at": at,
                "outcome": outcome, "http_status": status, "error": None}  # fmt: skip

    items = [
        attempt(channel_id, 1, 0, "failed", 422),
        attempt("ch_other", 1, 0, "published", 200),
        attempt(channel_id, 2, 5, "published", 200),
    ]
    page = open_page("America/New_York", poll_ms=60_000, navigate=False)
    page.route(
        f"{stack.url}/v1/scheduled-posts/{post['schedule_id']}/attempts",
        lambda route: route.fulfill(
            status=200, content_type="application/json", body=json.dumps({"items": items})
        ),
    )
    page.goto(f"{stack.url}/?poll_ms=60000")
    _sign_in(page, user)
    # When the creator opens its detail
    _slot(page, publish_at, "America/New_York").get_by_role("button").first.click()
    rows = page.locator("#detail table").nth(1).locator("tbody tr")
    # Then each attempt carries the API's own number, never the row's position
    expect(rows).to_have_count(3)
    assert rows.locator("td:first-child").all_inner_texts() == ["1", "1", "2"]
    expect(rows.nth(2)).to_contain_text("Blog hook")
