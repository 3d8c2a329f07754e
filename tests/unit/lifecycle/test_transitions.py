"""Every arrow of the post state diagram as a pure function: its changes, its guard, and the
states it refuses to start from (no moto, no I/O)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from scheduled_posts.clock import format_instant
from scheduled_posts.lifecycle import drafts, transitions
from scheduled_posts.lifecycle.arrows import ARROWS, Guard, TransitionRefused
from scheduled_posts.lifecycle.outcomes import Completion
from scheduled_posts.lifecycle.reasons import StatusReason
from scheduled_posts.lifecycle.states import DeliveryStatus, PostStatus
from scheduled_posts.lifecycle.waiting import (
    WAITING_MARGIN_SECONDS,
    cancel_waiting,
    edit_waiting,
    waiting_for_next_attempt,
)
from scheduled_posts.models.post import Attempt, Delivery, Post

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
LEASE_END = NOW + timedelta(seconds=60)


def post(status: PostStatus, **kw: object) -> Post:
    fields: dict[str, object] = {
        "schedule_id": "s1",
        "owner": "alice",
        "status": status,
        "content": "hi",
        "publish_at": NOW,
        "channel_ids": ["c1", "c2"],
        "version": 3,
        "created_at": NOW,
        "updated_at": NOW,
        "shard": 2,
    }
    fields.update(kw)
    return Post.model_validate(fields)


def published(cid: str) -> Delivery:
    return Delivery(channel_id=cid, status=DeliveryStatus.PUBLISHED, attempts=1)


def done(status: PostStatus = PostStatus.PUBLISHED) -> Completion:
    return Completion(status, NOW, 1.5, None, 2_000_000_000)


def refused_from(arrow: str) -> list[PostStatus]:
    return [s for s in PostStatus if str(s) not in ARROWS[arrow].sources]


# Each arrow: a function call given a post in some state (the arrow's refusals are derived).
CALLS = {
    "claim": lambda p: transitions.claim(p, lease_token="t", lease_expires_at=LEASE_END, now=NOW),
    "miss": lambda p: transitions.miss(p, reason="late", now=NOW, expires_at=1),
    "renew_lease": lambda p: transitions.renew_lease(
        p, new_token="t2", lease_expires_at=LEASE_END, now=NOW
    ),
    "take_over": lambda p: transitions.renew_lease(
        p, new_token="t2", lease_expires_at=LEASE_END, now=NOW, take_over=True
    ),
    "hand_back_lease": lambda p: transitions.hand_back_lease(p, now=NOW),
    "use_rate_slot": lambda p: transitions.use_rate_slot(
        p, channel_id="c1", slot="2026-12-01T12:01", now=NOW
    ),
    "record_round": lambda p: transitions.record_round(
        p, deliveries={}, now=NOW, lease_expires_at=LEASE_END
    ),
    "complete": lambda p: transitions.complete(p, deliveries={}, completion=done(), now=NOW),
    "fail_dead_lettered": lambda p: transitions.fail_dead_lettered(
        p, deliveries={}, last_error="boom", now=NOW, expires_at=1
    ),
    "reopen": lambda p: transitions.reopen(
        p,
        deliveries={},
        lease_token="t",
        lease_expires_at=LEASE_END,
        reason=StatusReason.RETRY_REQUESTED,
        now=NOW,
    ),
    "edit": lambda p: transitions.edit(p, p.model_copy(update={"status": PostStatus.SCHEDULED})),
    "cancel": lambda p: transitions.cancel(
        p, p.model_copy(update={"status": PostStatus.CANCELLED})
    ),
    "cancel_waiting": lambda p: cancel_waiting(
        p, p.model_copy(update={"status": PostStatus.CANCELLED}), now=NOW
    ),
    "edit_waiting": lambda p: edit_waiting(
        p, p.model_copy(update={"lease_token": "t2"}), now=NOW, attempts=[]
    ),
    "reschedule_missed": lambda p: transitions.reschedule_missed(
        p, p.model_copy(update={"status": PostStatus.SCHEDULED})
    ),
    "revive_occurrence": lambda p: transitions.revive_occurrence(
        p.model_copy(update={"series_id": "r1"}),
        p.model_copy(update={"status": PostStatus.SCHEDULED, "series_id": "r1"}),
    ),
    "edit_draft": lambda p: drafts.edit_draft(p, p.model_copy(update={"content": "new"})),
    "schedule_draft": lambda p: drafts.schedule_draft(
        p, p.model_copy(update={"status": PostStatus.SCHEDULED})
    ),
    "delete_draft": drafts.check_delete_draft,
}


def test_every_arrow_but_create_has_a_function() -> None:
    assert set(CALLS) == set(ARROWS) - {"create", "create_draft"}


@pytest.mark.parametrize(
    ("arrow", "status"), [(a, s) for a in CALLS for s in refused_from(a)], ids=str
)
def test_transition_from_a_state_without_that_arrow_is_refused(
    arrow: str, status: PostStatus
) -> None:
    with pytest.raises(TransitionRefused) as caught:
        CALLS[arrow](post(status, lease_token="t"))
    assert (caught.value.arrow, caught.value.status) == (arrow, status)


def test_claim_sets_publishing_with_lease_guarded_by_status_and_version() -> None:
    change = CALLS["claim"](post(PostStatus.SCHEDULED))
    assert change.guard == Guard(PostStatus.SCHEDULED, version=3)
    assert change.target == PostStatus.PUBLISHING
    assert change.sets[("status",)] == "publishing"
    assert change.sets[("lease_token",)] == "t"
    assert change.sets[("lease_shard",)] == "LEASE#2"
    assert change.sets[("lease_expires_at",)].startswith("2026-12-01T12:01:00")


def test_claim_marks_the_starting_attempts_on_the_item() -> None:
    # Given a post with a delivery map for c1 only
    scheduled = post(PostStatus.SCHEDULED).model_copy(
        update={"deliveries": {"c1": Delivery(channel_id="c1")}}
    )
    # When claimed with both channels starting
    change = transitions.claim(
        scheduled,
        lease_token="t",
        lease_expires_at=NOW + timedelta(minutes=1),
        now=NOW,
        starting=("c1", "c2"),
    )
    # Then c1's start is set in place and c2 gets a whole map carrying it
    assert change.sets[("deliveries", "c1", "started_at")].startswith("2026-12-01T12:00:00")
    assert change.sets[("deliveries", "c2")]["started_at"].startswith("2026-12-01T12:00:00")
    assert change.sets[("deliveries", "c2")]["status"] == "pending"


def test_miss_sets_reason_and_ttl_guarded_by_status_and_version() -> None:
    change = CALLS["miss"](post(PostStatus.SCHEDULED))
    assert change.guard == Guard(PostStatus.SCHEDULED, version=3)
    assert (change.sets[("status",)], change.sets[("status_reason",)]) == ("missed", "late")
    assert change.sets[("expires_at",)] == 1


@pytest.mark.parametrize("arrow", ["renew_lease", "take_over"])
def test_renew_and_take_over_replace_the_token_guarded_by_the_old_one(arrow: str) -> None:
    change = CALLS[arrow](post(PostStatus.PUBLISHING, lease_token="old"))
    assert change.arrow == arrow
    assert change.guard == Guard(PostStatus.PUBLISHING, lease_token="old")
    assert change.sets[("lease_token",)] == "t2"
    assert ("status",) not in change.sets


def test_hand_back_lease_expires_the_holders_lease_now_and_keeps_its_token() -> None:
    change = CALLS["hand_back_lease"](post(PostStatus.PUBLISHING, lease_token="old"))
    assert change.guard == Guard(PostStatus.PUBLISHING, lease_token="old")
    assert change.sets[("lease_expires_at",)] == format_instant(NOW)
    assert ("lease_token",) not in change.sets
    assert ("status",) not in change.sets


def test_use_rate_slot_clears_the_slot_guarded_by_the_token_and_the_slot_itself() -> None:
    change = CALLS["use_rate_slot"](post(PostStatus.PUBLISHING, lease_token="old"))
    path = ("deliveries", "c1", "rate_slot")
    assert change.guard == Guard(
        PostStatus.PUBLISHING, lease_token="old", paths=((path, "2026-12-01T12:01"),)
    )
    assert change.sets[path] is None
    assert ("status",) not in change.sets


def test_record_round_writes_changed_deliveries_and_extends_the_lease() -> None:
    change = transitions.record_round(
        post(PostStatus.PUBLISHING, lease_token="t"),
        deliveries={"c1": published("c1")},
        now=NOW,
        lease_expires_at=LEASE_END,
    )
    assert change.guard == Guard(PostStatus.PUBLISHING, lease_token="t")
    assert change.sets[("deliveries", "c1")]["status"] == "published"
    assert ("lease_expires_at",) in change.sets
    assert change.removes == ()


@pytest.mark.parametrize(
    "status", [PostStatus.PUBLISHED, PostStatus.PARTIALLY_PUBLISHED, PostStatus.FAILED]
)
def test_complete_finishes_and_drops_the_lease(status: PostStatus) -> None:
    change = transitions.complete(
        post(PostStatus.PUBLISHING, lease_token="t"),
        deliveries={},
        completion=done(status),
        now=NOW,
    )
    assert change.target == status
    assert change.sets[("status",)] == status.value
    assert change.sets[("expires_at",)] == 2_000_000_000
    assert set(change.removes) == {"lease_shard", "lease_expires_at"}


@pytest.mark.parametrize(
    "status", [PostStatus.SCHEDULED, PostStatus.PUBLISHING, PostStatus.CANCELLED]
)
def test_complete_to_a_non_finished_status_is_refused(status: PostStatus) -> None:
    with pytest.raises(TransitionRefused):
        transitions.complete(
            post(PostStatus.PUBLISHING), deliveries={}, completion=done(status), now=NOW
        )


def test_fail_dead_lettered_while_scheduled_is_guarded_by_version_only() -> None:
    change = CALLS["fail_dead_lettered"](post(PostStatus.SCHEDULED, lease_token="x"))
    assert change.guard == Guard(PostStatus.SCHEDULED, version=3)
    assert change.sets[("status_reason",)] == StatusReason.DEAD_LETTERED.value


def test_fail_dead_lettered_while_publishing_is_guarded_by_the_lease_too() -> None:
    change = CALLS["fail_dead_lettered"](post(PostStatus.PUBLISHING, lease_token="x"))
    assert change.guard == Guard(PostStatus.PUBLISHING, version=3, lease_token="x")
    assert set(change.removes) == {"lease_shard", "lease_expires_at"}


def test_reopen_for_redrive_also_requires_the_dead_lettered_reason() -> None:
    change = transitions.reopen(
        post(PostStatus.FAILED),
        deliveries={"c1": Delivery(channel_id="c1")},
        lease_token="t",
        lease_expires_at=LEASE_END,
        reason=StatusReason.REOPENED_BY_REDRIVE,
        now=NOW,
        expected_reason=StatusReason.DEAD_LETTERED,
    )
    assert change.guard == Guard(
        PostStatus.FAILED, version=3, status_reason=StatusReason.DEAD_LETTERED.value
    )
    assert change.sets[("status",)] == "publishing"
    assert change.sets[("deliveries", "c1")]["status"] == "pending"
    assert change.removes == ("expires_at",)


def test_edit_replaces_every_attribute_but_the_key_guarded_by_the_old_version() -> None:
    old = post(PostStatus.SCHEDULED)
    change = transitions.edit(old, old.model_copy(update={"version": 4, "content": "new"}))
    assert change.guard == Guard(PostStatus.SCHEDULED, version=3)
    assert (change.sets[("version",)], change.sets[("content",)]) == (4, "new")
    assert ("pk",) not in change.sets


def test_edit_to_a_cancelled_post_is_refused() -> None:
    old = post(PostStatus.SCHEDULED)
    with pytest.raises(TransitionRefused):
        transitions.edit(old, old.model_copy(update={"status": PostStatus.CANCELLED}))


def test_reschedule_missed_removes_the_ttl_guarded_by_missed() -> None:
    old = post(PostStatus.MISSED, expires_at=5)
    change = transitions.reschedule_missed(
        old, old.model_copy(update={"status": PostStatus.SCHEDULED, "expires_at": None})
    )
    assert change.guard == Guard(PostStatus.MISSED, version=3)
    assert "expires_at" in change.removes
    assert ("expires_at",) not in change.sets


def test_reschedule_missed_removes_the_missed_reason_instead_of_storing_null() -> None:
    old = post(PostStatus.MISSED, status_reason="missed by 2 h")
    new = old.model_copy(update={"status": PostStatus.SCHEDULED, "status_reason": None})
    change = transitions.reschedule_missed(old, new)
    assert "status_reason" in change.removes
    assert ("status_reason",) not in change.sets


def test_revive_occurrence_schedules_again_guarded_by_cancelled_and_version() -> None:
    old = post(PostStatus.CANCELLED, series_id="r1", expires_at=5)
    new = old.model_copy(update={"status": PostStatus.SCHEDULED, "version": 4, "expires_at": None})

    change = transitions.revive_occurrence(old, new)

    assert change.guard == Guard(PostStatus.CANCELLED, version=3)
    assert change.sets[("status",)] == "scheduled"
    assert "expires_at" in change.removes


def test_revive_occurrence_the_owner_cancelled_is_refused() -> None:
    old = post(PostStatus.CANCELLED, series_id="r1", detached=True)

    with pytest.raises(TransitionRefused):
        transitions.revive_occurrence(old, old.model_copy(update={"status": PostStatus.SCHEDULED}))


# -- a post waiting for its next attempt ---------------------------------------------------------


def retrying(cid: str, wait_seconds: float) -> Delivery:
    return Delivery(
        channel_id=cid,
        status=DeliveryStatus.RETRY_SCHEDULED,
        attempts=1,
        next_attempt_at=NOW + timedelta(seconds=wait_seconds),
    )


def waiting(*deliveries: Delivery, token: str | None = "t") -> Post:
    return post(
        PostStatus.PUBLISHING,
        lease_token=token,
        lease_expires_at=NOW + timedelta(hours=1),
        deliveries={d.channel_id: d for d in deliveries},
    )


def cancelled(p: Post) -> Post:
    return p.model_copy(
        update={"status": PostStatus.CANCELLED, "version": 4, "lease_expires_at": None}
    )


def test_cancel_waiting_guarded_by_status_version_and_lease_token_removes_the_lease() -> None:
    old = waiting(published("c1"), retrying("c2", 3600))
    change = cancel_waiting(old, cancelled(old), now=NOW)
    assert change.guard == Guard(PostStatus.PUBLISHING, version=3, lease_token="t")
    assert (change.target, change.sets[("status",)]) == (PostStatus.CANCELLED, "cancelled")
    assert {"lease_shard", "lease_expires_at"} <= set(change.removes)
    assert not {("lease_shard",), ("lease_expires_at",)} & set(change.sets)


@pytest.mark.parametrize(
    "deliveries",
    [
        (retrying("c1", 3600), retrying("c2", -1)),  # one is due: a round may be running
        (retrying("c1", WAITING_MARGIN_SECONDS),),  # within the clock-skew margin
        (Delivery(channel_id="c1"),),  # pending, never tried: due now
        (published("c1"),),  # nothing owed
    ],
    ids=["one-due", "within-margin", "pending", "nothing-owed"],
)
def test_cancel_waiting_refused_unless_every_owed_delivery_waits(
    deliveries: tuple[Delivery, ...],
) -> None:
    old = waiting(*deliveries)
    assert not waiting_for_next_attempt(old, NOW)
    with pytest.raises(TransitionRefused):
        cancel_waiting(old, cancelled(old), now=NOW)


def test_cancel_waiting_refused_without_a_lease_token() -> None:
    old = waiting(retrying("c1", 3600), token=None)
    with pytest.raises(TransitionRefused):
        cancel_waiting(old, cancelled(old), now=NOW)


@pytest.mark.parametrize(
    ("error", "status"),
    [("timeout: hooks.example.com: no answer in 10 s", None), ("http_500", 500)],
    ids=["timeout", "500"],
)
def test_cancel_waiting_refused_when_an_owed_channels_attempt_may_have_published(
    error: str, status: int | None
) -> None:
    old = waiting(retrying("c1", 3600))
    answered = Attempt(
        channel_id="c1",
        attempt=1,
        started_at=NOW - timedelta(seconds=10),
        outcome="retryable",
        http_status=status,
        error=error,
    )
    with pytest.raises(TransitionRefused):
        cancel_waiting(old, cancelled(old), now=NOW, attempts=[answered])


def test_cancel_waiting_allowed_when_only_a_published_channel_reached_the_network() -> None:
    old = waiting(published("c1"), retrying("c2", 3600))
    sent = [
        Attempt(channel_id="c1", attempt=1, started_at=NOW, outcome="published", http_status=200),
        Attempt(channel_id="c2", attempt=1, started_at=NOW, outcome="retryable", http_status=503),
    ]
    change = cancel_waiting(old, cancelled(old), now=NOW, attempts=sent)
    assert change.target == PostStatus.CANCELLED


def edited(p: Post, token: str | None = "t2") -> Post:
    return p.model_copy(update={"content": "new text", "version": 4, "lease_token": token})


def attempt(outcome: str, http_status: int | None = None, error: str | None = None) -> Attempt:
    return Attempt(
        channel_id="c1",
        attempt=1,
        started_at=NOW - timedelta(seconds=10),
        outcome=outcome,
        http_status=http_status,
        error=error,
    )


def test_edit_waiting_guarded_by_status_version_and_the_old_token_sets_the_new_one() -> None:
    old = waiting(retrying("c1", 3600))
    change = edit_waiting(
        old, edited(old), now=NOW, attempts=[attempt("retryable", 503, "http_503")]
    )
    assert change.guard == Guard(PostStatus.PUBLISHING, version=3, lease_token="t")
    assert change.target == PostStatus.PUBLISHING
    assert change.sets[("status",)] == "publishing"
    assert (change.sets[("content",)], change.sets[("version",)]) == ("new text", 4)
    assert change.sets[("lease_token",)] == "t2"
    assert change.sets[("deliveries",)]["c1"]["next_attempt_at"].startswith("2026-12-01T13:00")


@pytest.mark.parametrize(
    "answered",
    [
        attempt("rate_limited", 429, "http_429: mastodon rate limit: slow down"),
        attempt("retryable", 503, "http_503"),
        attempt("retryable", None, "connect_failed: hooks.example.com: refused"),
        attempt("retryable", None, "dns_error: no such host"),
        attempt("retryable", None, "destination_refused: private address"),
        attempt("rate_limited", None, "rate_limited: mastodon rate limit spent until 13:00"),
        attempt("skipped"),
    ],
    ids=["429", "503", "connect-failed", "dns-error", "destination-refused", "budget", "skipped"],
)
def test_edit_waiting_allowed_after_attempts_that_published_nothing(answered: Attempt) -> None:
    old = waiting(retrying("c1", 3600))
    change = edit_waiting(old, edited(old), now=NOW, attempts=[answered])
    assert change.arrow == "edit_waiting"


@pytest.mark.parametrize(
    "answered",
    [
        attempt("retryable", None, "timeout: hooks.example.com: no answer in 10 s"),
        attempt("retryable", None, "connection_lost: reset after sending"),
        attempt("retryable", None, "tls_error: handshake"),
        attempt("retryable", 500, "http_500"),
        attempt("retryable", 502, "http_502"),
        attempt("retryable", None, "delivery already in progress in another invocation"),
        attempt("started"),
        attempt("published", 200),
        attempt("failed", 400, "http_400"),
    ],
    ids=["timeout", "lost", "tls", "500", "502", "in-progress", "started", "published", "400"],
)
def test_edit_waiting_refused_when_an_attempt_may_have_published(answered: Attempt) -> None:
    old = waiting(retrying("c1", 3600))
    with pytest.raises(TransitionRefused):
        edit_waiting(old, edited(old), now=NOW, attempts=[answered])


@pytest.mark.parametrize(
    "deliveries",
    [
        (retrying("c1", 3600), retrying("c2", -1)),
        (retrying("c1", WAITING_MARGIN_SECONDS),),
        (Delivery(channel_id="c1"),),
        (published("c1"),),
    ],
    ids=["one-due", "within-margin", "pending", "nothing-owed"],
)
def test_edit_waiting_refused_unless_every_owed_delivery_waits(
    deliveries: tuple[Delivery, ...],
) -> None:
    old = waiting(*deliveries)
    with pytest.raises(TransitionRefused):
        edit_waiting(old, edited(old), now=NOW, attempts=[])


@pytest.mark.parametrize("token", [None, "t"], ids=["no-token", "same-token"])
def test_edit_waiting_refused_without_a_new_lease_token(token: str | None) -> None:
    old = waiting(retrying("c1", 3600))
    with pytest.raises(TransitionRefused):
        edit_waiting(old, edited(old, token), now=NOW, attempts=[])
