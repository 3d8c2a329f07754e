"""The fault suite's outbox check (``tests/support/outbox_check.py``) over a hand-made commit
log: the lean write path's start marks (issue 16, W2) derive no second id, and an id derived by
two committed changes is still reported."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from scheduled_posts.lifecycle import transitions
from scheduled_posts.lifecycle.events import derive_events
from scheduled_posts.lifecycle.states import DeliveryStatus, PostStatus
from scheduled_posts.models.post import Delivery, Post
from tests.support.items import applied
from tests.support.outbox_check import expected_events

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
RETRY_AT = NOW + timedelta(seconds=30)
LEASE_END = NOW + timedelta(seconds=60)


def _images() -> list[dict[str, Any]]:
    """A one-channel post's item after each write: created, claimed (c1 marked started), c1 to
    retry, renewed for the retry (c1 marked started again), published (attempt folded in)."""
    created = Post(
        schedule_id="s1",
        owner="alice",
        status=PostStatus.SCHEDULED,
        content="hi",
        publish_at=NOW,
        channel_ids=["c1"],
        deliveries={"c1": Delivery(channel_id="c1")},
        created_at=NOW,
        updated_at=NOW,
    ).to_item()
    claimed = applied(
        created,
        transitions.claim(
            Post.from_item(created),
            lease_token="lease-1",
            lease_expires_at=LEASE_END,
            now=NOW,
            starting=("c1",),
        ),
    )
    waiting = Delivery(
        channel_id="c1", status=DeliveryStatus.RETRY_SCHEDULED, attempts=1, next_attempt_at=RETRY_AT
    )
    retry = applied(
        claimed,
        transitions.record_round(
            Post.from_item(claimed),
            deliveries={"c1": waiting},
            now=NOW,
            lease_expires_at=LEASE_END,
        ),
    )
    renewed = applied(
        retry,
        transitions.renew_lease(
            Post.from_item(retry),
            new_token="lease-2",
            lease_expires_at=LEASE_END,
            now=RETRY_AT,
            starting=("c1",),
        ),
    )
    return [created, claimed, retry, renewed]


def _log(images: list[dict[str, Any]]) -> list[tuple[str, list[Any]]]:
    olds: list[dict[str, Any] | None] = [None, *images[:-1]]
    return [
        (str(n), derive_events(o, i)) for n, (o, i) in enumerate(zip(olds, images, strict=True))
    ]


def test_outbox_expected_start_marks_derive_each_id_once() -> None:
    problems: list[str] = []
    expected, order = expected_events(_log(_images()), problems)
    assert problems == []
    # scheduled, claimed, retrying: the renewal's start mark adds nothing
    assert len(order["s1"]) == len(expected) == 3


def test_outbox_expected_reports_an_id_derived_by_two_committed_changes() -> None:
    # Given a commit log where the retry's write is committed twice (a real duplicate)
    log = _log(_images())
    log.insert(3, ("2b", log[2][1]))
    problems: list[str] = []
    # When the expected events are derived; then the duplicate is reported
    expected_events(log, problems)
    assert len(problems) == 1
    assert problems[0].startswith("outbox: two committed changes derive event")
