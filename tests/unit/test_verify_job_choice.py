"""Which deliveries the scheduled verification reads (``logic/verify_job.due_deliveries``,
decision "Scheduled verification"): published with a remote id, published within
``VERIFY_WINDOW_HOURS``, never verified or verified more than ``VERIFY_REVERIFY_SECONDS`` ago."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from scheduled_posts.lifecycle.states import DeliveryStatus, PostStatus
from scheduled_posts.logic.verify_job import due_deliveries
from scheduled_posts.models.post import Delivery, Post
from scheduled_posts.settings import Settings

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
SETTINGS = Settings(VERIFY_WINDOW_HOURS=6, VERIFY_REVERIFY_SECONDS=3600)


def _post(**deliveries: Delivery) -> Post:
    return Post(
        schedule_id="s1",
        owner="alice",
        status=PostStatus.PUBLISHED,
        content="hi",
        publish_at=NOW - timedelta(hours=1),
        channel_ids=list(deliveries),
        deliveries=deliveries,
        version=1,
        created_at=NOW,
        updated_at=NOW,
        shard=0,
    )


def _published(ago: timedelta, verified_ago: timedelta | None = None, **kw: object) -> Delivery:
    return Delivery.model_validate(
        {
            "channel_id": "c",
            "status": DeliveryStatus.PUBLISHED,
            "remote_id": "1",
            "published_at": NOW - ago,
            "verified_at": None if verified_ago is None else NOW - verified_ago,
            **kw,
        }
    )


def test_due_deliveries_unverified_or_stale_within_the_window() -> None:
    post = _post(
        fresh=_published(timedelta(minutes=10)),
        stale=_published(timedelta(hours=3), verified_ago=timedelta(hours=1)),
        recent=_published(timedelta(hours=3), verified_ago=timedelta(minutes=59)),
        old=_published(timedelta(hours=6, seconds=1)),
        edge=_published(timedelta(hours=6)),
    )
    assert due_deliveries(post, now=NOW, settings=SETTINGS) == {"fresh", "stale", "edge"}


def test_due_deliveries_never_a_failed_or_remote_less_delivery() -> None:
    post = _post(
        failed=_published(timedelta(minutes=5), status=DeliveryStatus.FAILED),
        no_remote=_published(timedelta(minutes=5), remote_id=None),
        finding=_published(timedelta(minutes=5), verification="missing"),
    )
    assert due_deliveries(post, now=NOW, settings=SETTINGS) == {"finding"}
