"""The event feed's rules: the caller's events after an opaque cursor, and one post's trail
(``docs/events.md``). The relay writes the feed (``logic/relay.py``); this module only reads."""

from __future__ import annotations

from dataclasses import dataclass

from scheduled_posts.data.event_feed import EventFeed, StoredEvent
from scheduled_posts.logic import posts as post_logic
from scheduled_posts.logic.cursor import CursorCodec
from scheduled_posts.logic.posts import PostDeps
from scheduled_posts.observability import tracer

#: What feed cursors are bound to besides the caller (a posts-list cursor is refused here).
FEED_QUERY = "events"


@dataclass(frozen=True)
class FeedPage:
    """Events oldest first; ``next_cursor`` resumes after the last one (None only when no
    cursor was given and there are no events)."""

    events: list[StoredEvent]
    next_cursor: str | None


@tracer.capture_method
def list_events(
    owner: str, *, after: str | None, limit: int, feed: EventFeed, codec: CursorCodec
) -> FeedPage:
    """Up to ``limit`` (1-100) of ``owner``'s events after the cursor ``after``.

    Raises
    ------
    InvalidCursorError
        The cursor was forged, altered, issued to another user or by another list (a 400).
    """
    position = codec.decode(after, owner=owner, query=FEED_QUERY) if after is not None else None
    page = feed.owner_events(owner, after=position, limit=limit)
    if not page.events:
        return FeedPage(events=[], next_cursor=after)
    last = page.events[-1].position
    return FeedPage(
        events=page.events, next_cursor=codec.encode(owner=owner, last_key=last, query=FEED_QUERY)
    )


@tracer.capture_method
def post_events(
    owner: str, schedule_id: str, *, feed: EventFeed, deps: PostDeps
) -> list[StoredEvent]:
    """The events of the caller's post in commit order.

    Raises
    ------
    PostNotFoundError
        Missing, another user's, or past its retention.
    """
    post_logic.get_post(owner, schedule_id, deps=deps)
    return feed.post_events(schedule_id, now_epoch=deps.clock.now().timestamp())
