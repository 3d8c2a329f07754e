"""The calendar feed: the caller's scheduled and published posts as an RFC 5545 iCalendar at a
secret, revocable URL a calendar app subscribes to (``GET /v1/calendar-feeds/{token}``).

``POST /v1/me/calendar-feed`` creates the feed or rotates its token (the old URL stops working
in the same write); ``DELETE /v1/me/calendar-feed`` revokes it. The token is 32 random bytes
(``secrets.token_urlsafe``: 43 characters); only its SHA-256 is stored, and an unknown,
rotated or revoked token is a 404 like any missing resource.

The document is written with ``icalendar`` (RFC 5545): one ``VEVENT`` per post of the window
(``FEED_PAST_DAYS`` back to ``MAX_SCHEDULE_AHEAD_DAYS`` ahead) that is scheduled, publishing,
published or partially published; ``UID`` ``<schedule_id>@scheduled-posts``, ``DTSTART`` the
post's ``publish_at`` in UTC, a ``DURATION`` of 15 minutes (calendar apps draw a zero-length
event badly), ``SUMMARY`` the text's first line (at most 80 characters), ``DESCRIPTION`` the
status, the channels by name and the whole text, ``DTSTAMP`` the post's last change.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterable
from datetime import datetime, timedelta

from scheduled_posts.clock import format_instant
from scheduled_posts.data.calendar_feeds import CalendarFeedStore, FeedChanged
from scheduled_posts.errors import NotFoundError, StateConflictError
from scheduled_posts.lifecycle.states import PostStatus
from scheduled_posts.models.post import Post

#: The statuses a feed shows (a cancelled, missed or failed post is not on the calendar).
SHOWN = frozenset(
    {
        PostStatus.SCHEDULED,
        PostStatus.PUBLISHING,
        PostStatus.PUBLISHED,
        PostStatus.PARTIALLY_PUBLISHED,
    }
)
#: How far back the feed reaches (days): a month of what was published.
FEED_PAST_DAYS = 30
EVENT_MINUTES = 15
SUMMARY_CHARACTERS = 80
#: What a token looks like (``secrets.token_urlsafe(32)``), checked before any read.
FEED_ID_PATTERN = r"^[A-Za-z0-9_-]{43}$"
MEDIA_TYPE = "text/calendar; charset=utf-8"  # RFC 5545 section 8.1
PRODUCT_ID = "-//scheduled-posts//calendar feed//EN"


class CalendarFeedNotFoundError(NotFoundError):
    """No calendar feed for that token, or the caller has none."""


def token_hash(token: str) -> str:
    """The SHA-256 (hex) of a feed token: what is stored."""
    return hashlib.sha256(token.encode()).hexdigest()


def issue(owner: str, *, store: CalendarFeedStore, now: datetime) -> str:
    """Create the caller's feed, or rotate its token; the new token.

    Raises
    ------
    StateConflictError
        Another rotation changed the feed at the same time (409; try again).
    """
    token = secrets.token_urlsafe(32)
    try:
        store.replace(owner, old=store.current(owner), new=token_hash(token), now=now)
    except FeedChanged as exc:
        raise StateConflictError("the calendar feed changed meanwhile; try again") from exc
    return token


def revoke(owner: str, *, store: CalendarFeedStore, now: datetime) -> None:
    """Revoke the caller's feed: its URL answers 404 from now on.

    Raises
    ------
    CalendarFeedNotFoundError
        The caller has no feed (404).
    StateConflictError
        A rotation changed it at the same time (409).
    """
    current = store.current(owner)
    if current is None:
        raise CalendarFeedNotFoundError("no calendar feed")
    try:
        store.replace(owner, old=current, new=None, now=now)
    except FeedChanged as exc:
        raise StateConflictError("the calendar feed changed meanwhile; try again") from exc


def owner_of(token: str, *, store: CalendarFeedStore) -> str:
    """The owner of the feed ``token`` names.

    Raises
    ------
    CalendarFeedNotFoundError
        Malformed, unknown, rotated away or revoked (404, the same for each).
    """
    owner = store.owner_of(token_hash(token)) if re.fullmatch(FEED_ID_PATTERN, token) else None
    if owner is None:
        raise CalendarFeedNotFoundError("no such calendar feed")
    return owner


def window(now: datetime, ahead_days: int) -> tuple[datetime, datetime]:
    """The instants the feed covers: ``FEED_PAST_DAYS`` back, ``ahead_days`` ahead."""
    return now - timedelta(days=FEED_PAST_DAYS), now + timedelta(days=ahead_days + 1)


def _summary(content: str) -> str:
    first = content.strip().splitlines()[0] if content.strip() else ""
    return first if len(first) <= SUMMARY_CHARACTERS else first[: SUMMARY_CHARACTERS - 1] + "…"


def calendar_of(posts: Iterable[Post], channel_names: dict[str, str]) -> bytes:
    """The iCalendar document of ``posts`` (those with a :data:`SHOWN` status)."""
    from icalendar import Calendar, Event  # imported here: only the feed route needs it

    calendar = Calendar()
    calendar.add("prodid", PRODUCT_ID)
    calendar.add("version", "2.0")
    calendar.add("x-wr-calname", "Scheduled posts")
    for post in posts:
        if post.status not in SHOWN:
            continue
        names = ", ".join(channel_names.get(cid, cid) for cid in post.channel_ids)
        event = Event()
        event.add("uid", f"{post.schedule_id}@scheduled-posts")
        event.add("dtstamp", post.updated_at)
        event.add("dtstart", post.publish_at)
        event.add("duration", timedelta(minutes=EVENT_MINUTES))
        event.add("summary", _summary(post.content))
        event.add(
            "description",
            f"Status: {post.status.value}\nChannels: {names}\n"
            f"Publish at: {format_instant(post.publish_at)}\n\n{post.content}",
        )
        calendar.add_component(event)
    return bytes(calendar.to_ical())
