"""What a delivery round writes: published attempts folded into the post item in the completing
round, rows for every other attempt (issue 16, W2). Pure: no moto."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from scheduled_posts.data.post_store import render_change
from scheduled_posts.lifecycle import transitions
from scheduled_posts.lifecycle.outcomes import ChannelRound
from scheduled_posts.lifecycle.states import DeliveryStatus, PostStatus
from scheduled_posts.logic.round import _fold
from scheduled_posts.models.post import Attempt, Delivery, Post

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _published(cid: str) -> ChannelRound:
    delivery = Delivery(
        channel_id=cid,
        status=DeliveryStatus.PUBLISHED,
        attempts=1,
        published_at=T0 + timedelta(seconds=1),
        lag_seconds=1.0,
        started_at=T0,  # the lease write's mark, carried by the post read back
    )
    attempt = Attempt(
        channel_id=cid,
        attempt=1,
        started_at=T0,
        finished_at=T0 + timedelta(seconds=1),
        outcome="published",
        http_status=200,
        lag_seconds=1.0,
    )
    return ChannelRound(delivery, attempt)


def _retryable(cid: str) -> ChannelRound:
    delivery = Delivery(
        channel_id=cid,
        status=DeliveryStatus.RETRY_SCHEDULED,
        attempts=1,
        next_attempt_at=T0 + timedelta(seconds=30),
        started_at=T0,
    )
    attempt = Attempt(channel_id=cid, attempt=1, started_at=T0, outcome="retryable")
    return ChannelRound(delivery, attempt)


def test_fold_completing_round_keeps_the_published_attempt_on_the_item_without_a_row() -> None:
    changed, rows = _fold({"c1": _published("c1")}, completing=True)
    assert rows == []
    assert changed["c1"].started_at == T0
    assert changed["c1"].http_status == 200


def test_fold_round_with_channels_still_owed_writes_every_row_and_drops_the_marks() -> None:
    changed, rows = _fold({"c1": _published("c1"), "c2": _retryable("c2")}, completing=False)
    assert [r.channel_id for r in rows] == ["c1", "c2"]
    assert changed["c1"].started_at is None and changed["c2"].started_at is None


def test_render_change_removes_a_top_level_none_instead_of_storing_null() -> None:
    # Given a completion whose post has no status reason
    post = Post(
        schedule_id="s1",
        owner="alice",
        status=PostStatus.PUBLISHING,
        content="hi",
        publish_at=T0,
        channel_ids=["c1"],
        created_at=T0,
        updated_at=T0,
        lease_token="t",
    )
    completion = type(
        "C",
        (),
        {
            "status": PostStatus.PUBLISHED,
            "published_at": T0,
            "publish_lag_seconds": 0.5,
            "status_reason": None,
            "expires_at": 9,
        },
    )()
    change = transitions.complete(post, deliveries={}, completion=completion, now=T0)
    # When rendered
    rendered = render_change(change)
    # Then status_reason is removed, and no value placeholder holds None
    assert "status_reason" in rendered["ExpressionAttributeNames"].values()
    assert "REMOVE" in rendered["UpdateExpression"]
    assert None not in rendered["ExpressionAttributeValues"].values()
