"""The pure derivation of outcome events from a post item's old and new images: every arrow of
the state diagram, the delivery events of a round, stable ids, and the schemas of
``docs/events.md`` (no moto, no I/O)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from scheduled_posts.event_docs import rewrite, schemas_in
from scheduled_posts.lifecycle import transitions
from scheduled_posts.lifecycle.events import derive_events
from scheduled_posts.lifecycle.outcomes import Completion
from scheduled_posts.lifecycle.reasons import StatusReason
from scheduled_posts.lifecycle.states import DeliveryStatus, PostStatus
from scheduled_posts.lifecycle.waiting import edit_waiting
from scheduled_posts.models.events import BaseEvent, EventType, event_body, event_schemas
from scheduled_posts.models.post import Delivery, Post
from tests.support.items import applied

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
LATER = NOW + timedelta(seconds=5)
LEASE_END = NOW + timedelta(seconds=60)
DOC = Path(__file__).resolve().parents[3] / "docs" / "events.md"
SCHEMAS = schemas_in(DOC.parent / "events")


def item(status: PostStatus = PostStatus.SCHEDULED, **kw: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "schedule_id": "s1",
        "owner": "alice",
        "status": status,
        "content": "hi",
        "publish_at": NOW,
        "channel_ids": ["c1", "c2"],
        "deliveries": {"c1": Delivery(channel_id="c1"), "c2": Delivery(channel_id="c2")},
        "version": 3,
        "created_at": NOW,
        "updated_at": NOW,
        "shard": 2,
    }
    fields.update(kw)
    return Post.model_validate(fields).to_item()


def post(raw: dict[str, Any]) -> Post:
    return Post.from_item(raw)


def publishing(token: str = "lease-1") -> dict[str, Any]:
    old = item()
    return applied(
        old,
        transitions.claim(post(old), lease_token=token, lease_expires_at=LEASE_END, now=NOW),
    )


def checked(old: dict[str, Any] | None, new: dict[str, Any]) -> list[BaseEvent]:
    """The events of (old, new), each validated against its schema in docs/events.md."""
    events = derive_events(old, new)
    for event in events:
        jsonschema.validate(event_body(event), SCHEMAS[event.type])  # type: ignore[attr-defined]
    return events


def types(events: list[BaseEvent]) -> list[str]:
    return [e.type for e in events]  # type: ignore[attr-defined]


def delivered(status: DeliveryStatus, cid: str, **kw: Any) -> Delivery:
    return Delivery(channel_id=cid, status=status, attempts=1, **kw)


def test_docs_events_md_shows_the_schemas_of_the_models() -> None:
    assert event_schemas() == SCHEMAS, "run `make openapi` to rewrite docs/events.md"
    assert set(SCHEMAS) == {str(t) for t in EventType}
    doc = DOC.read_text(encoding="utf-8")
    assert rewrite(doc) == doc, "run `make openapi` to rewrite docs/events.md's schema links"


def test_derive_insert_of_a_scheduled_post_is_post_scheduled() -> None:
    (event,) = checked(None, item(version=1))
    assert event.type == EventType.POST_SCHEDULED  # type: ignore[attr-defined]
    assert (event.owner, event.schedule_id, event.occurred_at) == ("alice", "s1", NOW)


def test_derive_edit_is_post_updated_with_the_new_version() -> None:
    old = item()
    new_post = post(old).model_copy(update={"content": "bye", "version": 4, "updated_at": LATER})
    new = applied(old, transitions.edit(post(old), new_post))
    (event,) = checked(old, new)
    assert (event.type, event.version, event.occurred_at) == (  # type: ignore[attr-defined]
        EventType.POST_UPDATED,
        4,
        LATER,
    )


def test_derive_edit_of_a_waiting_post_is_post_updated_alone() -> None:
    # Given a post whose channels wait for a retry (delivery.retrying already reported)
    old = publishing()
    retry_at = NOW + timedelta(hours=1)
    waits = {
        cid: delivered(DeliveryStatus.RETRY_SCHEDULED, cid, next_attempt_at=retry_at)
        for cid in ("c1", "c2")
    }
    change = transitions.record_round(
        post(old), deliveries=waits, now=NOW, lease_expires_at=retry_at
    )
    mid = applied(old, change)
    # When its owner edits it (new text, version + 1, a new lease token)
    waiting = post(mid)
    new_post = waiting.model_copy(
        update={"content": "bye", "version": 4, "updated_at": LATER, "lease_token": "lease-2"}
    )
    new = applied(mid, edit_waiting(waiting, new_post, now=LATER, attempts=[]))
    # Then post.updated alone, still publishing (no second delivery.retrying)
    (event,) = checked(mid, new)
    assert (event.type, event.version, event.status) == (  # type: ignore[attr-defined]
        EventType.POST_UPDATED,
        4,
        "publishing",
    )


def test_derive_cancel_is_post_cancelled_and_nothing_else() -> None:
    old = item()
    skipped = {c: Delivery(channel_id=c, status=DeliveryStatus.SKIPPED) for c in ("c1", "c2")}
    update = {"status": PostStatus.CANCELLED, "version": 4, "deliveries": skipped}
    new = applied(old, transitions.cancel(post(old), post(old).model_copy(update=update)))
    assert types(checked(old, new)) == [EventType.POST_CANCELLED]


def test_derive_miss_is_post_missed_with_its_reason() -> None:
    old = item()
    new = applied(old, transitions.miss(post(old), reason="late", now=LATER, expires_at=9))
    (event,) = checked(old, new)
    assert (event.type, event.status_reason) == (EventType.POST_MISSED, "late")  # type: ignore[attr-defined]


def test_derive_reschedule_of_a_missed_post_is_post_scheduled() -> None:
    old = item(PostStatus.MISSED)
    update = {"status": PostStatus.SCHEDULED, "version": 4}
    change = transitions.reschedule_missed(post(old), post(old).model_copy(update=update))
    assert types(checked(old, applied(old, change))) == [EventType.POST_SCHEDULED]


def test_derive_claim_is_post_claimed() -> None:
    old = item()
    assert types(checked(old, publishing())) == [EventType.POST_CLAIMED]


@pytest.mark.parametrize("take_over", [False, True])
def test_derive_lease_renewal_or_take_over_reports_nothing(take_over: bool) -> None:
    old = publishing()
    change = transitions.renew_lease(
        post(old), new_token="lease-2", lease_expires_at=LEASE_END, now=LATER, take_over=take_over
    )
    assert checked(old, applied(old, change)) == []


def test_derive_lease_renewal_marking_a_retrying_delivery_started_reports_nothing() -> None:
    # Given a post whose c2 waits for a retry, recorded under lease-1 (delivery.retrying)
    old = publishing()
    retry_at = NOW + timedelta(seconds=30)
    waiting = {"c2": delivered(DeliveryStatus.RETRY_SCHEDULED, "c2", next_attempt_at=retry_at)}
    mid = applied(
        old,
        transitions.record_round(
            post(old), deliveries=waiting, now=NOW, lease_expires_at=LEASE_END
        ),
    )
    (retrying,) = checked(old, mid)
    # When the lease holder renews to start the retry, marking c2 started (issue 16, W2)
    change = transitions.renew_lease(
        post(mid), new_token="lease-2", lease_expires_at=LEASE_END, now=retry_at, starting=("c2",)
    )
    marked = applied(mid, change)
    # Then the mark is on the item, but the write derives no event (not the retrying one again)
    assert marked["deliveries"]["c2"]["started_at"]
    assert retrying.type == EventType.DELIVERY_RETRYING  # type: ignore[attr-defined]
    assert checked(mid, marked) == []


def test_derive_claim_marking_deliveries_started_is_post_claimed_alone() -> None:
    old = item()
    change = transitions.claim(
        post(old), lease_token="lease-1", lease_expires_at=LEASE_END, now=NOW, starting=("c1", "c3")
    )
    assert types(checked(old, applied(old, change))) == [EventType.POST_CLAIMED]


def test_derive_start_mark_moved_with_an_outcome_still_reports_the_outcome() -> None:
    # Given a started retry of c2; when the round records it failed and clears the mark
    old = item(
        PostStatus.PUBLISHING,
        lease_token="lease-1",
        deliveries={
            "c1": delivered(DeliveryStatus.PUBLISHED, "c1", published_at=NOW, lag_seconds=1.0),
            "c2": delivered(DeliveryStatus.RETRY_SCHEDULED, "c2", started_at=NOW),
        },
    )
    failed = {"c2": Delivery(channel_id="c2", status=DeliveryStatus.FAILED, attempts=2)}
    change = transitions.record_round(
        post(old), deliveries=failed, now=LATER, lease_expires_at=LEASE_END
    )
    # Then the outcome is reported
    assert types(checked(old, applied(old, change))) == [EventType.DELIVERY_FAILED]


def test_derive_round_with_one_published_and_one_retry_is_two_delivery_events() -> None:
    old = publishing()
    retry_at = NOW + timedelta(seconds=30)
    deliveries = {
        "c1": delivered(DeliveryStatus.PUBLISHED, "c1", published_at=LATER, lag_seconds=5.0),
        "c2": delivered(DeliveryStatus.RETRY_SCHEDULED, "c2", next_attempt_at=retry_at),
    }
    change = transitions.record_round(
        post(old), deliveries=deliveries, now=LATER, lease_expires_at=LEASE_END
    )
    published, retrying = checked(old, applied(old, change))
    assert published.type == EventType.DELIVERY_PUBLISHED  # type: ignore[attr-defined]
    assert published.channel.lag_seconds == 5.0  # type: ignore[attr-defined]
    assert retrying.type == EventType.DELIVERY_RETRYING  # type: ignore[attr-defined]
    assert retrying.next_attempt_at == retry_at  # type: ignore[attr-defined]


def test_derive_a_second_429_wait_at_the_same_attempt_is_a_new_retrying_event() -> None:
    first = NOW + timedelta(seconds=30)
    old = publishing()
    holder = post(old)
    one = {"c2": delivered(DeliveryStatus.RETRY_SCHEDULED, "c2", next_attempt_at=first)}
    mid = applied(
        old, transitions.record_round(holder, deliveries=one, now=NOW, lease_expires_at=LEASE_END)
    )
    two = {"c2": one["c2"].model_copy(update={"next_attempt_at": first + timedelta(seconds=60)})}
    new = applied(
        mid,
        transitions.record_round(post(mid), deliveries=two, now=LATER, lease_expires_at=LEASE_END),
    )
    (a,), (b,) = checked(old, mid), checked(mid, new)
    assert a.event_id != b.event_id


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (PostStatus.PUBLISHED, EventType.POST_PUBLISHED),
        (PostStatus.PARTIALLY_PUBLISHED, EventType.POST_PARTIALLY_PUBLISHED),
        (PostStatus.FAILED, EventType.POST_FAILED),
    ],
)
def test_derive_complete_is_the_outcome_after_the_delivery_events(
    status: PostStatus, kind: EventType
) -> None:
    old = publishing()
    deliveries = {
        "c1": delivered(DeliveryStatus.PUBLISHED, "c1", published_at=LATER, lag_seconds=5.0),
        "c2": delivered(DeliveryStatus.FAILED, "c2", last_error="HTTP 400"),
    }
    completion = Completion(status, LATER, 5.0, "why", 2_000_000_000)
    change = transitions.complete(
        post(old), deliveries=deliveries, completion=completion, now=LATER
    )
    events = checked(old, applied(old, change))
    assert types(events) == [EventType.DELIVERY_PUBLISHED, EventType.DELIVERY_FAILED, kind]
    outcome = events[-1]
    assert (outcome.publish_lag_seconds, outcome.status_reason) == (5.0, "why")  # type: ignore[attr-defined]
    assert [c.status for c in outcome.channels] == ["published", "failed"]  # type: ignore[attr-defined]


def test_derive_dead_lettered_scheduled_post_is_post_failed() -> None:
    old = item()
    change = transitions.fail_dead_lettered(
        post(old), deliveries={}, last_error="boom", now=LATER, expires_at=9
    )
    (event,) = checked(old, applied(old, change))
    assert event.type == EventType.POST_FAILED  # type: ignore[attr-defined]
    assert event.status_reason == StatusReason.DEAD_LETTERED.value  # type: ignore[attr-defined]


def _finish(old: dict[str, Any], status: PostStatus) -> dict[str, Any]:
    deliveries = {"c1": delivered(DeliveryStatus.FAILED, "c1", last_error="HTTP 500")}
    completion = Completion(status, None, None, "no", 2_000_000_000)
    return applied(
        old,
        transitions.complete(post(old), deliveries=deliveries, completion=completion, now=LATER),
    )


def test_derive_a_post_reopened_and_failed_again_gets_new_event_ids() -> None:
    first_old = publishing("lease-1")
    first = _finish(first_old, PostStatus.FAILED)
    reopen = transitions.reopen(
        post(first),
        deliveries={"c1": Delivery(channel_id="c1")},
        lease_token="lease-2",
        lease_expires_at=LEASE_END,
        reason=StatusReason.RETRY_REQUESTED,
        now=LATER,
    )
    again_old = applied(first, reopen)
    assert types(checked(first, again_old)) == [EventType.POST_CLAIMED]
    second = _finish(again_old, PostStatus.FAILED)
    ids_first = {e.event_id for e in checked(first_old, first)}
    ids_second = {e.event_id for e in checked(again_old, second)}
    assert len(ids_first) == len(ids_second) == 2
    assert ids_first.isdisjoint(ids_second)


def test_derive_the_same_images_twice_give_the_same_event_ids() -> None:
    old = publishing()
    new = _finish(old, PostStatus.FAILED)
    assert derive_events(old, new) == derive_events(dict(old), dict(new))


def test_derive_carries_series_id_and_remote_url_when_present() -> None:
    old = publishing()
    old["series_id"] = "ser1"
    new = _finish(old, PostStatus.PUBLISHED)
    new["deliveries"]["c1"].update(
        status="published", remote_url="https://example.social/@a/1", remote_id="1"
    )
    events = checked(old, new)
    assert {e.series_id for e in events} == {"ser1"}
    assert events[0].channel.remote_url == "https://example.social/@a/1"  # type: ignore[attr-defined]


def test_derive_delete_and_non_post_items_report_nothing() -> None:
    assert derive_events(item(), None) == []
    attempt = {"pk": "POST#s1", "sk": "ATTEMPT#x", "owner": "alice"}
    assert derive_events(None, attempt) == []


def test_derive_series_item_turning_stopped_is_series_stopped_with_its_reason() -> None:
    old = {
        "pk": "SERIES#ser1",
        "sk": "SERIES",
        "series_id": "ser1",
        "owner": "alice",
        "status": "active",
        "version": 2,
        "updated_at": "2026-12-01T12:00:00.000Z",
    }
    new = {**old, "stopped_reason": "pending_limit"}
    (event,) = checked(old, new)
    assert (event.type, event.reason) == (EventType.SERIES_STOPPED, "pending_limit")  # type: ignore[attr-defined]
    assert checked(new, {**new, "updated_at": "2026-12-01T12:00:01.000Z"}) == []


def test_derive_series_ended_or_cancelled_is_series_stopped_once() -> None:
    old = {
        "pk": "SERIES#ser1",
        "sk": "SERIES",
        "series_id": "ser1",
        "owner": "alice",
        "status": "active",
        "version": 2,
        "updated_at": "2026-12-01T12:00:00.000Z",
    }
    for status in ("ended", "cancelled"):
        new = {**old, "status": status, "version": 3}
        (event,) = checked(old, new)
        assert event.reason == status  # type: ignore[attr-defined]
        assert checked(new, {**new, "updated_at": "2026-12-01T12:00:01.000Z"}) == []
    assert checked(old, {**old, "status": "paused", "version": 3}) == []


def test_derive_delivery_published_carries_the_receipt_in_its_schema() -> None:
    old = publishing()
    new = _finish(old, PostStatus.PUBLISHED)
    receipt = {"cid": "bafyreib2", "rev": "3lbcdefghijkl"}
    new["deliveries"]["c1"].update(
        status="published", remote_id="at://did:plc:a/app.bsky.feed.post/3k", receipt=receipt
    )
    events = checked(old, new)  # validated against the schema in docs/events.md
    assert events[0].channel.receipt.to_item() == receipt  # type: ignore[attr-defined]
    assert event_body(events[0])["channel"]["receipt"] == receipt


def _published_item() -> dict[str, Any]:
    new = _finish(publishing(), PostStatus.PUBLISHED)
    new["deliveries"]["c1"].update(status="published", remote_id="1")
    return new


def test_derive_a_read_back_finding_reports_verification_failed_once() -> None:
    old = _published_item()
    verified = copy.deepcopy(old)
    verified["deliveries"]["c1"]["verified_at"] = "2026-12-02T12:00:00.000Z"
    assert derive_events(old, verified) == []  # verified: no fact to report
    missing = copy.deepcopy(verified)
    missing["deliveries"]["c1"]["verification"] = "missing"
    [event] = checked(verified, missing)
    assert event.type == EventType.DELIVERY_VERIFICATION_FAILED
    assert event.finding == "missing"  # type: ignore[attr-defined]
    again = copy.deepcopy(missing)
    assert derive_events(missing, again) == []  # the next run finds it missing again: no event
