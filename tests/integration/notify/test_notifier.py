"""The notifier (issue 14) on moto's SQS under the simulated clock: signed POSTs with
``Idempotency-Key: <event_id>``, backoff by visibility, the DLQ after ``NOTIFY_MAX_ATTEMPTS``,
dropped notifications of deleted endpoints, and the handler's partial batch response."""

from __future__ import annotations

import json

import pytest

from scheduled_posts.data.notify_queue import message_body
from scheduled_posts.logic.notifier import (
    NotificationRetryError,
    NotifyOutcome,
    notify_retry_wait_seconds,
)
from scheduled_posts.models.notifications import NotificationEndpoint, NotifyMessage
from scheduled_posts.platforms.signing import verify
from scheduled_posts.settings import Settings
from tests.support.clock import SimClock
from tests.support.fixtures import AwsResources
from tests.support.notify import NotifyRig
from tests.support.receiver import Answer, FakeReceiver, standard_webhooks_valid

URL = "https://hooks.example.com/notify"
EVENT = {
    "event_id": "0b6f4c1e-1111-5222-8333-444455556666",
    "type": "post.published",
    "occurred_at": "2026-11-29T11:59:58.000Z",
    "owner": "alice",
    "schedule_id": "s-1",
    "status": "published",
}


def _upper(low: float, high: float) -> float:
    return high


class World:
    """One endpoint of alice, the notify queue, a fake receiver, the notifier rig."""

    def __init__(self, aws: AwsResources, clock: SimClock, settings: Settings) -> None:
        self.settings = settings
        self.sqs = aws.sqs
        self.clock = clock
        self.receiver = FakeReceiver(clock)
        self.rig = NotifyRig(
            settings,
            aws.sqs,
            clock,
            transport=self.receiver,
            resolver=self.receiver.resolver,
            uniform=_upper,
        )
        self.endpoints, self.queue, self.notifier = (
            self.rig.endpoints,
            self.rig.queue,
            self.rig.notifier,
        )
        self.endpoint = NotificationEndpoint(
            endpoint_id="e-1",
            owner="alice",
            url=URL,
            event_types=("post.cancelled", "post.published"),
            signing_secret="whsec_" + "ab" * 32,
            created_at=clock.now(),
        )
        self.endpoints.put_new(self.endpoint, max_endpoints=10)
        self.receiver.add_secret(URL, self.endpoint.signing_secret)

    def send(self, event: dict | None = None, endpoint_id: str = "e-1") -> None:
        message = NotifyMessage(endpoint_id=endpoint_id, owner="alice", event=event or EVENT)
        self.queue.send([message])

    def poll(self) -> dict:
        return self.rig.poll()

    def dlq_bodies(self) -> list[dict]:
        return [json.loads(body) for body in self.rig.dead_letters()]


@pytest.fixture
def world(aws: AwsResources, clock: SimClock) -> World:
    return World(aws, clock, aws.settings)


def test_notify_delivered_signed_with_event_id_as_idempotency_key(world: World) -> None:
    world.send()
    assert world.poll() == {"received": 1, "failed": 0}
    [request] = world.receiver.requests
    assert request.idempotency_key == EVENT["event_id"]
    assert request.payload == EVENT
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["User-Agent"] == "scheduled-posts-notify/1"
    assert world.receiver.timeouts_seen[0] <= world.settings.NOTIFY_TIMEOUT_SECONDS
    assert verify(
        request.headers["X-Signature"],
        world.endpoint.signing_secret,
        request.body,
        now=int(world.clock.now().timestamp()),
    )
    assert request.webhook_id == EVENT["event_id"]  # Standard Webhooks: the notification's id
    assert standard_webhooks_valid(
        request.headers, world.endpoint.signing_secret, request.body, at=world.clock.now()
    )
    assert world.poll()["received"] == 0  # deleted


def test_notify_during_rotation_overlap_signs_with_both_secrets(world: World) -> None:
    from scheduled_posts.logic.notifications import rotate_endpoint_secret

    rotated = rotate_endpoint_secret(
        "alice", "e-1", endpoints=world.endpoints, settings=world.settings, clock=world.clock
    )
    world.send()
    world.poll()
    [request] = world.receiver.requests
    now = int(world.clock.now().timestamp())
    for secret in (rotated.signing_secret, world.endpoint.signing_secret):
        assert verify(request.headers["X-Signature"], secret, request.body, now=now)
        assert standard_webhooks_valid(request.headers, secret, request.body, at=world.clock.now())
    assert len(request.headers["webhook-signature"].split(" ")) == 2


def test_notify_5xx_backs_off_then_delivers_same_key(world: World) -> None:
    world.receiver.script(Answer.error(503), url=URL)
    world.send()
    assert world.poll() == {"received": 1, "failed": 1}
    # Full jitter pinned to its bound: 30 s after the first try; hidden until then.
    world.clock.advance(29)
    assert world.poll()["received"] == 0
    world.clock.advance(2)
    assert world.poll() == {"received": 1, "failed": 0}
    keys = [r.idempotency_key for r in world.receiver.requests]
    assert keys == [EVENT["event_id"], EVENT["event_id"]]
    assert [r.webhook_id for r in world.receiver.requests] == keys  # the same on every retry
    assert all(r.signature_valid for r in world.receiver.requests)


def test_notify_retry_after_longer_than_backoff_is_honoured(world: World) -> None:
    world.receiver.script(Answer.rate_limited("120"), url=URL)
    world.send()
    world.poll()
    world.clock.advance(100)
    assert world.poll()["received"] == 0
    world.clock.advance(21)
    assert world.poll() == {"received": 1, "failed": 0}


@pytest.mark.parametrize("answer", [Answer.timeout(), Answer.connect_error(), Answer.error(500)])
def test_notify_always_failing_goes_to_dlq_after_max_attempts(
    aws: AwsResources, clock: SimClock, answer: Answer
) -> None:
    settings = aws.settings  # the queue's maxReceiveCount is NOTIFY_MAX_ATTEMPTS (8)
    world = World(aws, clock, settings)
    world.receiver.set_default(answer, url=URL)
    world.send()
    tries = 0
    for _ in range(settings.NOTIFY_MAX_ATTEMPTS + 3):
        polled = world.poll()
        tries += polled["received"]
        clock.advance(settings.NOTIFY_RETRY_CAP_SECONDS + 1)
    assert tries == settings.NOTIFY_MAX_ATTEMPTS == 8
    assert len(world.receiver.requests) == 8
    assert [b["event"]["event_id"] for b in world.dlq_bodies()] == [EVENT["event_id"]]


def test_notify_4xx_goes_to_dlq_at_once(world: World) -> None:
    world.receiver.set_default(Answer.reject(410), url=URL)
    world.send()
    assert world.poll() == {"received": 1, "failed": 0}
    assert [b["endpoint_id"] for b in world.dlq_bodies()] == ["e-1"]
    assert len(world.receiver.requests) == 1


def test_notify_deleted_endpoint_dropped_without_request(world: World) -> None:
    world.endpoints.delete("alice", "e-1")
    world.send()
    assert world.poll() == {"received": 1, "failed": 0}
    assert world.receiver.requests == []
    assert world.dlq_bodies() == []


def test_notify_one_failing_record_does_not_fail_the_others(world: World) -> None:
    other = {**EVENT, "event_id": "0b6f4c1e-9999-5222-8333-444455556666"}
    world.receiver.script(Answer.error(502), key=EVENT["event_id"])
    world.send()
    world.send(other)
    assert world.poll() == {"received": 2, "failed": 1}
    assert world.receiver.accepted(other["event_id"]) == 1
    assert world.receiver.accepted(EVENT["event_id"]) == 0


def test_notify_retry_wait_grows_and_is_capped() -> None:
    waits = [
        notify_retry_wait_seconds(
            a,
            max_attempts=8,
            base_seconds=30,
            cap_seconds=600,
            retry_after_seconds=None,
            uniform=_upper,
        )
        for a in range(1, 9)
    ]
    assert waits == [30, 60, 120, 240, 480, 600, 600, 0]


def test_notify_retry_wait_at_least_one_second() -> None:
    wait = notify_retry_wait_seconds(
        1,
        max_attempts=8,
        base_seconds=30,
        cap_seconds=600,
        retry_after_seconds=None,
        uniform=lambda low, high: low,
    )
    assert wait == 1.0


def test_notifier_process_raises_retry_error_on_503(world: World) -> None:
    world.receiver.script(Answer.error(503), url=URL)
    world.send()
    message = world.sqs.receive_message(QueueUrl=world.settings.NOTIFY_QUEUE_URL)["Messages"][0]
    with pytest.raises(NotificationRetryError):
        world.notifier.process(
            NotifyMessage.model_validate_json(message["Body"]),
            receive_count=1,
            receipt_handle=message["ReceiptHandle"],
        )
    world.clock.advance(31)
    again = world.sqs.receive_message(QueueUrl=world.settings.NOTIFY_QUEUE_URL)["Messages"][0]
    outcome = world.notifier.process(
        NotifyMessage.model_validate_json(again["Body"]),
        receive_count=2,
        receipt_handle=again["ReceiptHandle"],
    )
    assert outcome is NotifyOutcome.DELIVERED


def test_message_body_round_trips() -> None:
    message = NotifyMessage(endpoint_id="e", owner="o", event=EVENT)
    assert NotifyMessage.model_validate_json(message_body(message)) == message


def test_notify_redrive_sends_dead_letters_again_with_same_event_id(world: World) -> None:
    from scheduled_posts.data.dlq import DeadLetterQueue
    from scheduled_posts.logic.notify_redrive import redrive_notifications

    world.receiver.script(Answer.reject(404), url=URL)  # then 200s: the receiver was fixed
    world.send()
    world.poll()
    assert len(world.dlq_bodies()) == 1
    world.sqs.send_message(QueueUrl=world.settings.NOTIFY_DLQ_URL, MessageBody="not json")
    dlq = DeadLetterQueue(world.settings.NOTIFY_DLQ_URL, sqs=world.sqs)
    dry = redrive_notifications(dlq, world.queue, dry_run=True)
    assert sorted(line.action for line in dry) == ["left", "would-moved"]
    world.clock.advance(61)  # the dry run's receives become visible again
    lines = redrive_notifications(dlq, world.queue)
    assert sorted(line.action for line in lines) == ["left", "moved"]
    assert world.poll() == {"received": 1, "failed": 0}
    keys = [r.idempotency_key for r in world.receiver.requests]
    assert keys == [EVENT["event_id"], EVENT["event_id"]]
    assert [r.webhook_id for r in world.receiver.requests] == keys  # the same on every retry
    assert all(r.signature_valid for r in world.receiver.requests)
    assert world.receiver.accepted(EVENT["event_id"]) == 1
