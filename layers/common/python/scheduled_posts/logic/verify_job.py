"""Scheduled verification: every ``VERIFY_INTERVAL_SECONDS`` (``functions/verifier``), read back
the network deliveries published in the last ``VERIFY_WINDOW_HOURS`` that were never verified or
were last verified more than ``VERIFY_REVERIFY_SECONDS`` ago (decision "Scheduled verification").

Each run:

1. Reads the due-index entries with ``publish_at`` in ``[now - VERIFY_WINDOW_HOURS, now]``
   (every hour bucket x every write shard, one Query each, as the reconciler) and BatchGets
   those posts (100 per call).
2. Chooses the due deliveries (:func:`due_deliveries`, pure): ``published`` with a
   ``remote_id``, ``published_at`` in the window, ``verified_at`` absent or older than the
   re-verify interval. Posts are taken oldest check first (never verified first), at most
   ``VERIFY_MAX_POSTS_PER_RUN`` posts with a read to make.
3. Plans the reads with the on-demand code (``logic/verify.plan_reads``: webhooks, private
   statuses, ``needs_reauthorization`` channels are never read) and applies them
   (``logic/verify.apply_reads``: the same writes, metric and outbox event as ``POST .../verify``).
   A channel with ``rate_limit_per_minute`` pays one slot of the current minute per read
   (``RateLimitStore.take_slot``); when the minute is full the read is deferred to a later run.

One post's or owner's failure (a read that raises, a refused write) never stops the run: it is
logged and counted in ``failures``, and the run goes on with the other posts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from scheduled_posts import keys
from scheduled_posts.clock import Clock, epoch_seconds, format_instant
from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.data.due_index import DueIndex
from scheduled_posts.data.rate_limit import RateLimitStore
from scheduled_posts.data.reconcile import ReconcileStore
from scheduled_posts.data.verifications import VerificationStore
from scheduled_posts.lifecycle.states import DeliveryStatus
from scheduled_posts.logic.rate_limit import COUNTER_TTL_SECONDS, minute_start
from scheduled_posts.logic.verify import (
    PlannedRead,
    Reader,
    apply_reads,
    plan_reads,
    read_on_network,
)
from scheduled_posts.models.post import Channel, Post
from scheduled_posts.observability import logger
from scheduled_posts.platforms.http import OutboundHttp
from scheduled_posts.platforms.readback import Seen
from scheduled_posts.settings import Settings


@dataclass(frozen=True)
class VerifyJobDeps:
    """Collaborators of a run (the :class:`~scheduled_posts.logic.verify.ReadBack` three, the
    window's reads, the rate-limit counters and the clock)."""

    channels: ChannelRepository
    store: VerificationStore
    http: OutboundHttp
    due_index: DueIndex
    posts: ReconcileStore
    rate_limits: RateLimitStore
    clock: Clock

    @classmethod
    def from_settings(cls, settings: Settings, clock: Clock) -> VerifyJobDeps:
        """The production collaborators (the process's boto3 resource, lazily)."""
        table = settings.POSTS_TABLE_NAME
        return cls(
            channels=ChannelRepository(posts_table_name=table),
            store=VerificationStore(posts_table_name=table),
            http=OutboundHttp.from_settings(settings),
            due_index=DueIndex(settings.DUE_INDEX_TABLE_NAME),
            posts=ReconcileStore(table),
            rate_limits=RateLimitStore(table),
            clock=clock,
        )


@dataclass
class VerifyRunResult:
    """One run: due-index entries read, posts read back, reads by outcome (``present``,
    ``missing``, ``changed``, ``unknown``), reads deferred by the rate limit, failures."""

    entries_read: int = 0
    posts_verified: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    deferred: int = 0
    failures: int = 0


def due_deliveries(post: Post, *, now: datetime, settings: Settings) -> set[str]:
    """The channel ids of ``post`` whose delivery is due for a read (module docstring, step 2)."""
    since = now - timedelta(hours=settings.VERIFY_WINDOW_HOURS)
    stale = now - timedelta(seconds=settings.VERIFY_REVERIFY_SECONDS)
    return {
        channel_id
        for channel_id, d in post.deliveries.items()
        if d.status == DeliveryStatus.PUBLISHED
        and d.remote_id
        and d.published_at is not None
        and d.published_at >= since
        and (d.verified_at is None or d.verified_at <= stale)
    }


def _last_check(post: Post, due: set[str]) -> tuple[str, str]:
    """Sort key: the oldest ``verified_at`` of the due deliveries ("" when one was never
    verified, so those come first), then the id (a stable order)."""
    checks = [post.deliveries[c].verified_at for c in due]
    stamps = ["" if c is None else format_instant(c) for c in checks]
    return (min(stamps, default=""), post.schedule_id)


class VerifyJob:
    """See the module docstring; ``reader`` (default: the network's) is for tests."""

    def __init__(
        self, settings: Settings, deps: VerifyJobDeps, reader: Reader | None = None
    ) -> None:
        self.settings = settings
        self.deps = deps
        self.reader = reader

    def run(self) -> VerifyRunResult:
        """One run (steps 1-3).

        Raises
        ------
        botocore.exceptions.ClientError
            From reading the window (the next run reads it again); a failure of one post or
            owner is counted in ``failures`` instead.
        """
        result = VerifyRunResult()
        now = self.deps.clock.now()
        schedule_ids = self._window(now)
        result.entries_read = len(schedule_ids)
        posts = self.deps.posts.batch_get_posts(schedule_ids)
        due = {
            sid: due_deliveries(post, now=now, settings=self.settings)
            for sid, post in posts.items()
            if not post.is_expired(now)
        }
        candidates = sorted(
            (posts[sid] for sid, channels in due.items() if channels),
            key=lambda post: _last_check(post, due[post.schedule_id]),
        )
        channels: dict[str, dict[str, Channel]] = {}  # owner -> channels read so far
        for post in candidates:
            if result.posts_verified >= self.settings.VERIFY_MAX_POSTS_PER_RUN:
                break
            try:
                self._verify(post, due[post.schedule_id], channels, now, result)
            except Exception:  # one post never stops the run (module docstring)
                result.failures += 1
                logger.exception("verification failed", extra={"schedule_id": post.schedule_id})
        return result

    def _window(self, now: datetime) -> list[str]:
        start = now - timedelta(hours=self.settings.VERIFY_WINDOW_HOURS)
        low, high = format_instant(start), f"{format_instant(now)}#{keys.SK_HIGH}"
        hour = start.replace(minute=0, second=0, microsecond=0)
        ids: list[str] = []
        while hour <= now:
            for shard in range(self.settings.WRITE_SHARD_COUNT):
                for page in self.deps.due_index.query_bucket(
                    keys.due_bucket(hour, shard), low, high
                ):
                    ids.extend(e.schedule_id for e in page.entries)
            hour += timedelta(hours=1)
        return list(dict.fromkeys(ids))

    def _verify(
        self,
        post: Post,
        due: set[str],
        channels: dict[str, dict[str, Channel]],
        now: datetime,
        result: VerifyRunResult,
    ) -> None:
        if post.owner not in channels:
            channels[post.owner] = {}
        known = channels[post.owner]
        missing = [c for c in post.channel_ids if c not in known]
        if missing:
            known.update(self.deps.channels.get_many(post.owner, missing))
        planned = [r for r in plan_reads(post, known) if r.channel_id in due]
        if not planned:
            return
        result.posts_verified += 1
        seen = apply_reads(
            post, planned, deps=self.deps, reader=self._limited(now, result), now=now
        )
        for outcome in seen.values():
            result.outcomes[outcome] = result.outcomes.get(outcome, 0) + 1

    def _limited(self, now: datetime, result: VerifyRunResult) -> Reader:
        """The reader, paying one rate-limit slot of the current minute per read of a limited
        channel; a full minute defers the read (``unknown``: nothing is written)."""
        read = self.reader or read_on_network(self.deps.http)
        minute = minute_start(now)
        label, expires_at = (
            keys.rate_minute(minute),
            epoch_seconds(minute) + 60 + COUNTER_TTL_SECONDS,
        )

        def limited(planned: PlannedRead) -> Seen:
            limit = planned.rate_limit_per_minute
            if limit is not None and not self.deps.rate_limits.take_slot(
                planned.channel_id, label, limit=limit, expires_at=expires_at
            ):
                result.deferred += 1
                return "unknown"
            return read(planned)

        return limited


def verify_recent(settings: Settings, clock: Clock) -> VerifyRunResult:
    """One production run (the Lambda's entry)."""
    return VerifyJob(settings, VerifyJobDeps.from_settings(settings, clock)).run()
