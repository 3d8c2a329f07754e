"""Exports: the posts CSV (formulas escaped, re-readable) and the calendar feed (RFC 5545,
parsed back with ``ical``, a parser we did not write; secret, rotatable, revocable URL)."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

import pytest
from ical.calendar_stream import IcsCalendarStream

from scheduled_posts.logic.post_csv import COLUMNS, unescape_cell
from tests.support.api import ApiClient, text_of

FAR = "2026-11-30T09:30:00Z"
LATER = "2026-12-05T18:00:00Z"


@pytest.fixture
def channel(alice: ApiClient) -> str:
    return alice.create_channel("Team blog")


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_the_csv_export_lists_posts_in_order_with_formulas_escaped(
    alice: ApiClient, channel: str
) -> None:
    tricky = '=HYPERLINK("https://evil.example","click")'
    first = alice.schedule(FAR, [channel], content="line one\nline two, with a comma")
    second = alice.schedule(LATER, [channel], content=tricky)

    answer = alice.get("/v1/scheduled-posts/export.csv")
    assert answer.status == 200
    assert answer.headers["Content-Type"].startswith("text/csv")
    text = text_of(answer)
    assert text.splitlines()[0] == ",".join(COLUMNS)
    rows = _rows(text)
    assert [r["schedule_id"] for r in rows] == [first["schedule_id"], second["schedule_id"]]
    assert rows[0]["content"] == "line one\nline two, with a comma"
    assert rows[0]["publish_at"] == "2026-11-30T09:30:00.000Z"
    assert rows[0]["channels"] == channel
    assert rows[1]["content"] == "'" + tricky  # a spreadsheet shows text, runs nothing
    assert unescape_cell(rows[1]["content"]) == tricky  # and it reads back to the same text


def test_the_csv_export_keeps_to_its_range_and_refuses_a_bad_bound(
    alice: ApiClient, channel: str
) -> None:
    alice.schedule(FAR, [channel])
    later = alice.schedule(LATER, [channel])
    ranged = alice.get("/v1/scheduled-posts/export.csv", query={"from": "2026-12-01T00:00:00Z"})
    assert [r["schedule_id"] for r in _rows(text_of(ranged))] == [later["schedule_id"]]
    bad = alice.get("/v1/scheduled-posts/export.csv", query={"from": "tomorrow"})
    assert bad.status == 422
    assert bad.json["errors"][0]["loc"] == ["query", "from"]


def test_the_csv_export_is_the_callers_own(alice: ApiClient, bob: ApiClient, channel: str) -> None:
    alice.schedule(FAR, [channel])
    assert _rows(text_of(bob.get("/v1/scheduled-posts/export.csv"))) == []


def _feed(path: str) -> tuple[int, str]:
    answer = ApiClient(None).get(path)  # no JWT: the token is the credential
    return answer.status, text_of(answer) if answer.status == 200 else ""


def test_the_calendar_feed_parses_with_an_independent_parser(
    alice: ApiClient, channel: str
) -> None:
    scheduled = alice.schedule(FAR, [channel], content="Launch day\nmore words")
    cancelled = alice.schedule(LATER, [channel], content="never mind")
    alice.delete(f"/v1/scheduled-posts/{cancelled['schedule_id']}")
    feed = alice.post("/v1/me/calendar-feed")
    assert feed.status == 201
    assert feed.json["url"].endswith(feed.json["path"])

    status, text = _feed(feed.json["path"])
    assert status == 200
    calendar = IcsCalendarStream.calendar_from_ics(text)
    [event] = calendar.events  # the cancelled post is not on the calendar
    assert event.uid == f"{scheduled['schedule_id']}@scheduled-posts"
    assert event.summary == "Launch day"
    assert event.dtstart == datetime(2026, 11, 30, 9, 30, tzinfo=UTC)
    assert "Status: scheduled" in (event.description or "")
    assert "Channels: Team blog" in (event.description or "")


def test_rotating_the_feed_retires_the_old_url_and_revoking_answers_404(
    alice: ApiClient, channel: str
) -> None:
    alice.schedule(FAR, [channel])
    old = alice.post("/v1/me/calendar-feed").json["path"]
    new = alice.post("/v1/me/calendar-feed").json["path"]
    assert old != new
    assert _feed(old)[0] == 404
    assert _feed(new)[0] == 200
    assert alice.delete("/v1/me/calendar-feed").status == 204
    assert _feed(new)[0] == 404
    assert alice.delete("/v1/me/calendar-feed").status == 404


def test_a_feed_shows_only_its_owners_posts_and_a_made_up_token_is_404(
    alice: ApiClient, bob: ApiClient, channel: str
) -> None:
    alice.schedule(FAR, [channel])
    bobs = bob.post("/v1/me/calendar-feed").json["path"]
    assert IcsCalendarStream.calendar_from_ics(_feed(bobs)[1]).events == []
    assert _feed("/v1/calendar-feeds/" + "A" * 43)[0] == 404
    assert _feed("/v1/calendar-feeds/short")[0] == 404
