"""The event feed's rules: the caller's events after an opaque cursor, and one post's trail
(``docs/events.md``). The relay writes the feed (``logic/relay.py``); this module only reads."""

from __future__ import annotations

from dataclasses import dataclass

from scheduled_posts.clock import Clock
from scheduled_posts.data.event_feed import EventFeed, StoredEvent
from scheduled_posts.feed_order import readable
from scheduled_posts.logic import post_reads
from scheduled_posts.logic.cursor import FEED_QUERY, CursorCodec
from scheduled_posts.logic.posts import PostDeps
from scheduled_posts.observability import tracer


@dataclass(frozen=True)
class FeedPage:
    """Events oldest first; ``next_cursor`` resumes after the last one (None only when no
    cursor was given and there are no events)."""

    events: list[StoredEvent]
    next_cursor: str | None


@tracer.capture_method
def list_events(
    owner: str,
    *,
    after: str | None,
    limit: int,
    feed: EventFeed,
    codec: CursorCodec,
    clock: Clock | None = None,
) -> FeedPage:
    """Up to ``limit`` (1-100) of ``owner``'s events after the cursor ``after``, in feed
    position order, never one that an event stored later could precede (``feed_order.py``):
    a poller following ``next_cursor`` sees every event once.

    Raises
    ------
    InvalidCursorError
        The cursor was forged, altered, issued to another user or by another list, or comes
        from the feed's earlier order (a 400).

    ``clock`` defaults to the feed's.
    """
    key = codec.decode(after, owner=owner, query=FEED_QUERY) if after is not None else None
    position = int(key) if key is not None else None
    page = feed.owner_events(owner, after=position, limit=limit)
    count = readable(
        [e.placed for e in page.events],
        after=position,
        now_epoch=(clock or feed.clock).now().timestamp(),
    )
    if count == 0:
        return FeedPage(events=[], next_cursor=after)
    events = page.events[:count]
    last = str(events[-1].position)
    return FeedPage(
        events=events, next_cursor=codec.encode(owner=owner, last_key=last, query=FEED_QUERY)
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
    post_reads.get_post(owner, schedule_id, deps=deps)
    return feed.post_events(schedule_id, now_epoch=deps.clock.now().timestamp())
