"""Account export and erasure (decision "Erasure is synchronous and resumable"): unpublished posts
are private data.

* :func:`export_account` -> ``GET /v1/me/export``: everything the service holds about the caller
  (posts with their deliveries, attempts, recurring schedules, channels without secrets or
  credentials, notification endpoints without signing secrets, media with a short-lived
  download link to each ready upload) as one JSON document.
* :func:`erase_account` -> ``DELETE /v1/me``: records the request, ends every recurring schedule
  through the normal series delete (so the materializer writes no more occurrences), cancels
  every ``scheduled`` post through the normal cancel path (so a dispatch message already in the
  queue finds a cancelled post and publishes nothing), then deletes every item of the caller in
  every table and their uploads' objects in the media bucket
  (``data/account.py`` lists where they live: the event feed and each post's trail too), not
  leaving them to TTL, and last the request itself. From the request on, the relay stores and
  sends no event of the caller (the feed counter refuses, ``data/feed_sequence.py``), and after
  ``done`` none of anything created before it. A post already ``publishing`` is deleted too;
  a delivery in flight at that moment may still reach its destination (its lease writes then
  fail).
* :func:`erasure_status` -> ``GET /v1/me/erasure``: ``pending`` while the request is recorded,
  ``done`` once nothing of the erasure is left to do.

An erasure interrupted half-way (a timeout, a throttled write) stays ``pending``; repeating
``DELETE /v1/me`` resumes it: every step is idempotent. A create racing an erasure may leave a
post behind; the caller sees ``done`` only after the pass that found nothing left.
"""

from __future__ import annotations

import contextlib
from typing import Any

from scheduled_posts.clock import format_instant
from scheduled_posts.data.account import AccountStore
from scheduled_posts.errors import StateConflictError, VersionConflictError
from scheduled_posts.lifecycle import outcomes
from scheduled_posts.logic.post_edits import cancel_post
from scheduled_posts.logic.posts import PostDeps
from scheduled_posts.logic.series import SeriesDeps, delete_series, series_out
from scheduled_posts.models.api import AttemptOut, PostOut
from scheduled_posts.models.channel_api import ChannelOut
from scheduled_posts.models.notifications import NotificationEndpointOut
from scheduled_posts.models.post import PostStatus
from scheduled_posts.observability import logger

#: How many times an erasure re-reads the caller's posts and series before giving up for this
#: request (a create racing the erasure adds some after the first read).
ERASE_PASSES = 3
#: How long an export's media download links are valid, in seconds (15 minutes: the export is
#: read at once; a later export signs new ones).
EXPORT_LINK_SECONDS = 900


def export_account(
    owner: str, *, store: AccountStore, deps: PostDeps, series_deps: SeriesDeps
) -> dict[str, Any]:
    """The caller's data: ``{"subject", "exported_at", "posts": [PostOut + "attempts"],
    "recurring_schedules": [SeriesOut], "channels": [ChannelOut], "notification_endpoints":
    [NotificationEndpointOut], "media": [ExportMedia]}`` (no signing secret, no network
    credentials or session: ``ChannelOut`` and ``NotificationEndpointOut`` have no field for
    them)."""
    posts = []
    for post in store.posts(owner):
        body = PostOut.of(post).model_dump(mode="json")
        # Rows merged with the attempts kept on the post item (decision "The round's attempts live
        # on the post item where they can").
        attempts = outcomes.merge_attempts(store.attempts(post.schedule_id), post)
        body["attempts"] = [AttemptOut.of(a).model_dump(mode="json") for a in attempts]
        posts.append(body)
    now = deps.clock.now()
    series = [series_out(s, now=now).model_dump(mode="json") for s in store.series(owner)]
    channels = [ChannelOut.of(c).model_dump(mode="json") for c in store.channels(owner)]
    endpoints = [
        NotificationEndpointOut.of(e).model_dump(mode="json")
        for e in store.notification_endpoints(owner)
    ]
    return {
        "subject": owner,
        "exported_at": format_instant(now),
        "posts": posts,
        "recurring_schedules": series,
        "channels": channels,
        "notification_endpoints": endpoints,
        "media": _export_media(owner, store),
    }


def _export_media(owner: str, store: AccountStore) -> list[dict[str, Any]]:
    """The caller's uploads, each ``ready`` one with a download link valid
    :data:`EXPORT_LINK_SECONDS`."""
    return [
        media.model_copy(
            update={
                "download_url": store.media_download_url(
                    media.media_id, expires_seconds=EXPORT_LINK_SECONDS
                )
                if media.status == "ready"
                else None
            }
        ).model_dump(mode="json")
        for media in store.media(owner)
    ]


def erase_account(
    owner: str, *, store: AccountStore, deps: PostDeps, series_deps: SeriesDeps
) -> str:
    """Erase ``owner`` (see the module docstring); returns the status afterwards (``done``, or
    ``pending`` when posts or series kept appearing through :data:`ERASE_PASSES` passes)."""
    store.request_erasure(owner, requested_at=format_instant(deps.clock.now()))
    for _ in range(ERASE_PASSES):
        series = store.series(owner)
        for one in series:
            # Changed meanwhile (409/412): its item is deleted below all the same, after which
            # the materializer's condition on it fails and it writes nothing more.
            with contextlib.suppress(StateConflictError, VersionConflictError):
                delete_series(owner, one.series_id, if_match=None, deps=series_deps)
        posts = store.posts(owner)
        for post in posts:
            if post.status == PostStatus.SCHEDULED:
                # Claimed meanwhile (409): deleted below all the same.
                with contextlib.suppress(StateConflictError):
                    cancel_post(owner, post.schedule_id, deps=deps)
            store.delete_post(post)
        for one in store.series(owner):  # read again: the delete moved their index entries
            store.delete_series(one)
        # The objects first: their keys come from the media items deleted next.
        store.delete_media_objects(owner)
        store.delete_owner_items(owner)
        store.delete_owner_feed(owner)
        if not posts and not series:
            now = deps.clock.now()
            store.complete_erasure(owner, erased_at=format_instant(now), now_epoch=now.timestamp())
            logger.info("account erased")
            return "done"
    return "pending"


def erasure_status(owner: str, *, store: AccountStore) -> str:
    """``pending`` while an erasure of ``owner`` is recorded, else ``done``."""
    return "pending" if store.erasure_requested(owner) else "done"
