"""Reading scheduled posts: one post, its attempt history, the caller's list (``docs/api.md``).

Another user's post is a 404, like a missing or expired one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from scheduled_posts import keys
from scheduled_posts.clock import format_instant
from scheduled_posts.errors import ValidationFailedError
from scheduled_posts.lifecycle import outcomes
from scheduled_posts.logic.cursor import CursorCodec, query_fingerprint
from scheduled_posts.logic.post_checks import field_error
from scheduled_posts.logic.posts import PostDeps, owned_post
from scheduled_posts.models.api import parse_rfc3339
from scheduled_posts.models.post import Attempt, Post, PostStatus
from scheduled_posts.observability import tracer

_ONE_MS = timedelta(milliseconds=1)


@dataclass(frozen=True)
class PostListPage:
    """A page of posts; ``next_cursor`` is ``None`` only at the end of the list."""

    posts: list[Post]
    next_cursor: str | None


@tracer.capture_method
def get_post(owner: str, schedule_id: str, *, deps: PostDeps) -> Post:
    """The caller's post.

    Raises
    ------
    PostNotFoundError
        Missing, another user's, or past its retention.
    """
    return owned_post(owner, schedule_id, deps, deps.clock.now())


@tracer.capture_method
def list_attempts(owner: str, schedule_id: str, *, deps: PostDeps) -> list[Attempt]:
    """The delivery attempts of the caller's post, in start order.

    Raises
    ------
    PostNotFoundError
        Missing, another user's, or past its retention.
    """
    now = deps.clock.now()
    post = owned_post(owner, schedule_id, deps, now)
    return outcomes.merge_attempts(deps.posts.list_attempts(schedule_id, now=now), post)


def _parse_bound(value: str | None, name: str) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_rfc3339(value)
    except (ValueError, OverflowError) as exc:
        raise ValidationFailedError(
            "the request is not valid",
            [field_error(["query", name], str(exc), "datetime_from_rfc3339")],
        ) from exc


@tracer.capture_method
def _bounds(from_: str | None, to: str | None) -> tuple[datetime | None, datetime | None]:
    """``from``/``to`` as instants (None: open); 422 naming both when ``from`` is later."""
    start, end = _parse_bound(from_, "from"), _parse_bound(to, "to")
    if start is not None and end is not None and start > end:
        raise ValidationFailedError(
            "from is later than to",
            [
                field_error(["query", "from"], "must not be later than to", "from_after_to"),
                field_error(["query", "to"], "must not be earlier than from", "from_after_to"),
            ],
        )
    return start, end


def list_posts(
    owner: str,
    *,
    status: PostStatus | None,
    from_: str | None,
    to: str | None,
    limit: int,
    cursor: str | None,
    codec: CursorCodec,
    deps: PostDeps,
    channel_id: str | None = None,
    series_id: str | None = None,
) -> PostListPage:
    """The caller's posts ordered by ``(publish_at, schedule_id)``; ``from_`` inclusive, ``to``
    exclusive, at most ``limit`` (1-100) per page; ``channel_id`` keeps the posts that name
    that channel; ``series_id``: only that recurring schedule's occurrences (none when
    the series is another user's).

    Raises
    ------
    ValidationFailedError
        ``from``/``to`` not RFC 3339 instants with an offset, or ``from`` after ``to``.
    InvalidCursorError
        The cursor was forged, altered, issued to another user or for other filters.
    """
    start, end = _bounds(from_, to)
    fingerprint = query_fingerprint(
        status.value if status else None,
        format_instant(start) if start else None,
        format_instant(end) if end else None,
        channel_id,
    ) + (f"|series={series_id}" if series_id else "")
    after = codec.decode(cursor, owner=owner, query=fingerprint) if cursor is not None else None
    lower = format_instant(start) if start else None
    upper = None
    if end is not None:
        try:
            upper = f"{format_instant(end - _ONE_MS)}#{keys.SK_HIGH}"
        except OverflowError:
            return PostListPage(posts=[], next_cursor=None)
    if lower is not None and upper is not None and lower > upper:
        return PostListPage(posts=[], next_cursor=None)
    page = deps.posts.query_owner(
        owner,
        lower=lower,
        upper=upper,
        after=after,
        status=status,
        now=deps.clock.now(),
        limit=limit + 1,
        channel_id=channel_id,
        series_id=series_id,
    )
    posts, last_key = page.posts, page.last_key
    if len(posts) > limit:
        posts = posts[:limit]
        last_key = keys.order_key(posts[-1].publish_at, posts[-1].schedule_id)
    encoded = codec.encode(owner=owner, last_key=last_key, query=fingerprint) if last_key else None
    return PostListPage(posts=posts, next_cursor=encoded)
