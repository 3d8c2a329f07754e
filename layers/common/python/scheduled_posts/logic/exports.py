"""The posts an export reads: every page of the caller's posts in a range (``list_posts``)."""

from __future__ import annotations

from scheduled_posts.clock import format_instant
from scheduled_posts.errors import ValidationFailedError
from scheduled_posts.logic.calendar_feed import window
from scheduled_posts.logic.cursor import CursorCodec
from scheduled_posts.logic.post_reads import list_posts
from scheduled_posts.logic.posts import PostDeps
from scheduled_posts.models.post import Post

#: Most posts one export answers: the Lambda response payload is 6 MB at most (Lambda quotas,
#: "Invocation payload"), and a post's CSV row is at most about 1.2 kB.
MAX_EXPORT_POSTS = 4000


def export_posts(
    owner: str, *, from_: str | None, to: str | None, deps: PostDeps, codec: CursorCodec
) -> list[Post]:
    """The caller's posts with ``publish_at`` in ``[from_, to)``, in ``publish_at`` order.

    Raises
    ------
    ValidationFailedError
        A bound is not an RFC 3339 instant, or more than :data:`MAX_EXPORT_POSTS` posts fall
        in the range (422 naming ``from``/``to`` and the limit: export a shorter range).
    """
    found: list[Post] = []
    cursor: str | None = None
    while True:
        page = list_posts(
            owner, status=None, from_=from_, to=to, limit=100, cursor=cursor, codec=codec, deps=deps
        )
        found.extend(page.posts)
        if len(found) > MAX_EXPORT_POSTS:
            raise ValidationFailedError(
                "too many posts for one export",
                [
                    {
                        "loc": ["query", "from"],
                        "msg": f"more than {MAX_EXPORT_POSTS} posts in the range: "
                        "give a shorter range with from and to",
                        "type": "export_too_large",
                    }
                ],
            )
        if page.next_cursor is None:
            return found
        cursor = page.next_cursor


def feed_posts(
    owner: str, *, deps: PostDeps, codec: CursorCodec
) -> tuple[list[Post], dict[str, str]]:
    """The posts of the calendar feed's window and ``channel_id -> name`` of the owner's
    channels (at most :data:`MAX_EXPORT_POSTS` posts, the earliest first)."""
    start, end = window(deps.clock.now(), deps.settings.MAX_SCHEDULE_AHEAD_DAYS)
    posts: list[Post] = []
    cursor: str | None = None
    while len(posts) < MAX_EXPORT_POSTS:
        page = list_posts(
            owner,
            status=None,
            from_=format_instant(start),
            to=format_instant(end),
            limit=100,
            cursor=cursor,
            codec=codec,
            deps=deps,
        )
        posts.extend(page.posts)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    names = {c.channel_id: c.name for c in deps.channels.list(owner)}
    return posts[:MAX_EXPORT_POSTS], names
