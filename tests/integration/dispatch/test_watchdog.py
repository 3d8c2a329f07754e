"""The watchdog: expired leases are taken over once and re-dispatched with the new token."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from functions.watchdog.handler import make_lambda_handler
from local.emulation.lambda_runtime import LambdaContext
from scheduled_posts.data.post_store import PostStore
from scheduled_posts.errors import QueueSendError
from scheduled_posts.logic.watchdog import rescue_expired_leases
from scheduled_posts.observability import metrics
from tests.integration.dispatch.conftest import FirePath
from tests.integration.ops.conftest import emitted_metric


def test_watchdog_expired_lease_taken_over_once_with_new_token(fire: FirePath) -> None:
    fire.channel("c1")
    post = fire.post(fire.clock.now(), ["c1"])
    now = fire.clock.now()
    claimed = fire.store.claim(
        post, lease_token="old", lease_expires_at=now + timedelta(seconds=60), now=now
    )
    assert claimed is not None
    fire.clock.advance(30)
    early = rescue_expired_leases(fire.settings, clock=fire.clock)
    assert early.taken_over == []  # lease still valid
    fire.clock.advance(31)
    first = rescue_expired_leases(fire.settings, clock=fire.clock)
    second = rescue_expired_leases(fire.settings, clock=fire.clock)
    assert first.taken_over == [post.schedule_id]
    assert second.taken_over == []  # the new lease is fresh
    token = fire.read(post).lease_token
    assert token not in (None, "old")
    messages = fire.driver.receive(10)
    assert [json.loads(m["Body"])["lease_token"] for m in messages] == [token]


class _RefusingQueue:
    """A dispatch queue whose SendMessage fails (SQS unavailable), as ``DispatchQueue.send``
    reports it."""

    def send(self, message: object, delay_seconds: int = 0) -> None:
        raise QueueSendError("SendMessage failed: unavailable")


def test_watchdog_send_refused_hands_the_lease_back_so_the_next_run_takes_over(
    fire: FirePath,
) -> None:
    fire.channel("c1")
    post = fire.post(fire.clock.now(), ["c1"])
    now = fire.clock.now()
    fire.store.claim(post, lease_token="old", lease_expires_at=now + timedelta(seconds=60), now=now)
    fire.clock.advance(61)
    refused = rescue_expired_leases(
        fire.settings,
        queue=_RefusingQueue(),
        clock=fire.clock,  # type: ignore[arg-type]
    )
    assert (refused.taken_over, refused.send_failures) == ([], 1)
    stored = fire.read(post)
    assert stored.lease_token != "old"  # taken over, then handed back: it expires now
    assert stored.lease_expires_at == fire.clock.now()
    fire.clock.advance(fire.settings.WATCHDOG_INTERVAL_SECONDS)
    again = rescue_expired_leases(fire.settings, clock=fire.clock)
    assert again.taken_over == [post.schedule_id]  # one interval later, not a whole lease later
    token = fire.read(post).lease_token
    messages = fire.driver.receive(10)
    assert [json.loads(m["Body"])["lease_token"] for m in messages] == [token]


class _FailingReadsStore:
    """The post store, with ``get_post`` of the ids in ``failing`` throttled (as DynamoDB
    answers when the table's throughput runs out)."""

    def __init__(self, store: PostStore, failing: set[str]) -> None:
        self._store, self._failing = store, failing

    def get_post(self, schedule_id: str) -> Any:
        if schedule_id in self._failing:
            raise ClientError(
                {"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "test"}},
                "GetItem",
            )
        return self._store.get_post(schedule_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def test_watchdog_one_failing_post_does_not_stop_the_others_and_fails_the_invocation(
    fire: FirePath,
) -> None:
    # Fault seed 73: a throttled read of one expired post ended the run, and a post after it
    # waited a whole extra watchdog interval.
    fire.channel("c1")
    posts = [fire.post(fire.clock.now(), ["c1"]) for _ in range(3)]
    now = fire.clock.now()
    for post in posts:
        fire.store.claim(
            post, lease_token="old", lease_expires_at=now + timedelta(seconds=60), now=now
        )
    fire.clock.advance(61)
    failing = {posts[0].schedule_id}
    store = _FailingReadsStore(fire.store, failing)
    handler = make_lambda_handler(
        lambda: rescue_expired_leases(
            fire.settings,
            store=store,  # type: ignore[arg-type]
            queue=fire.queue,
            clock=fire.clock,
        )
    )

    with pytest.raises(RuntimeError, match="1 expired lease"):
        handler({}, LambdaContext("watchdog", 60, clock=fire.clock.seconds))

    sent = {json.loads(m["Body"])["schedule_id"] for m in fire.driver.receive(10)}
    assert sent == {p.schedule_id for p in posts[1:]}
    assert fire.read(posts[0]).lease_token == "old"  # still expired: the next run takes it
    again = rescue_expired_leases(fire.settings, clock=fire.clock)
    assert again.taken_over == [posts[0].schedule_id]


class _OversizedTakeOverStore:
    """The post store, with the take-over of the ids in ``failing`` refused as DynamoDB refuses
    an item over its 400 KB limit."""

    def __init__(self, store: PostStore, failing: set[str]) -> None:
        self._store, self._failing = store, failing

    def renew_lease(self, post: Any, **kwargs: Any) -> Any:
        if post.schedule_id in self._failing:
            raise ClientError(
                {"Error": {"Code": "ValidationException", "Message": "Item size exceeded"}},
                "UpdateItem",
            )
        return self._store.renew_lease(post, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def test_watchdog_one_failing_take_over_write_still_rescues_another_tenant_and_counts_it(
    fire: FirePath, capsys: pytest.CaptureFixture[str]
) -> None:
    fire.channel("c1")
    fire.channel("b1", owner="bob")
    wedged = fire.post(fire.clock.now(), ["c1"])
    other = fire.post(fire.clock.now(), ["b1"], owner="bob")
    now = fire.clock.now()
    for post in (wedged, other):
        fire.store.claim(
            post, lease_token="old", lease_expires_at=now + timedelta(seconds=60), now=now
        )
    fire.clock.advance(61)
    store = _OversizedTakeOverStore(fire.store, {wedged.schedule_id})
    handler = make_lambda_handler(
        lambda: rescue_expired_leases(
            fire.settings,
            store=store,  # type: ignore[arg-type]
            queue=fire.queue,
            clock=fire.clock,
        )
    )
    metrics.clear_metrics()
    capsys.readouterr()
    with pytest.raises(RuntimeError, match="1 expired lease"):
        handler({}, LambdaContext("watchdog", 60, clock=fire.clock.seconds))
    sent = {json.loads(m["Body"])["schedule_id"] for m in fire.driver.receive(10)}
    assert sent == {other.schedule_id}
    assert emitted_metric(capsys.readouterr().out, "RescueFailures") == [1.0]
