"""Issue 17 item 1: one tenant's slow destination does not delay the other posts of its batch.

The slow destination is a transport that holds its request until the test releases it (standing
in for a webhook that takes 40 s and is cut at ``DELIVERY_TIMEOUT_SECONDS``): no real 40 s wait,
and no timing assertion. The five healthy posts, due the same second and in the same SQS batch
behind the slow one, must all be accepted while the slow request is still held. Processed one
record after another, none of them could be.
"""

from __future__ import annotations

import threading
import time

from scheduled_posts.models.messages import DispatchMessage
from scheduled_posts.platforms.transport import TransportError, TransportResponse
from scheduled_posts.platforms.webhook import WebhookAdapter
from tests.integration.dispatch.conftest import FirePath
from tests.support.receiver import FakeReceiver
from tests.support.transport import ScriptedTransport, SentRequest

SLOW_URL = "https://hooks.example.com/slow"
#: Real seconds the test waits at most for the healthy deliveries (a hang guard, not a bound).
GUARD_SECONDS = 30.0


class HeldTransport(ScriptedTransport):
    """Delegates to the fake receiver, except that requests to :data:`SLOW_URL` wait for
    ``release`` and then time out, as a 40 s webhook cut at the delivery timeout does."""

    def __init__(self, receiver: FakeReceiver) -> None:
        super().__init__()
        self.receiver = receiver
        self.release = threading.Event()
        self.slow_started = threading.Event()

    def answer(self, request: SentRequest) -> TransportResponse:
        if request.destination.url == SLOW_URL:
            self.slow_started.set()
            self.release.wait(GUARD_SECONDS)
            raise TransportError("read timed out", timeout=True)
        return request.forward(self.receiver)


def test_worker_batch_slow_destination_does_not_delay_healthy_posts(fire: FirePath) -> None:
    # Given six users' posts due the same second, in one batch, the slow user's first
    transport = HeldTransport(fire.receiver)
    fire.adapter = WebhookAdapter(
        fire.settings, transport=transport, resolver=fire.receiver.resolver
    )
    fire.channel("slow", owner="user-0")
    for i in range(1, 6):
        fire.channel(f"ok{i}", owner=f"user-{i}")
    due = fire.clock.now()
    posts = [fire.post(due, ["slow"], owner="user-0")]
    posts += [fire.post(due, [f"ok{i}"], owner=f"user-{i}") for i in range(1, 6)]
    for post in posts:
        fire.queue.send(
            DispatchMessage(schedule_id=post.schedule_id, version=1, publish_at=post.publish_at),
            0,
        )
    keys = [f"{p.schedule_id}:ok{i}" for i, p in enumerate(posts) if i > 0]
    messages = fire.driver.receive(10)
    assert len(messages) == 6 and posts[0].schedule_id in messages[0]["Body"]

    # When the worker handles the batch (on a thread: the slow delivery holds it)
    worker = threading.Thread(target=fire.driver.invoke, args=(messages,), daemon=True)
    worker.start()
    deadline = time.monotonic() + GUARD_SECONDS
    while time.monotonic() < deadline and not all(fire.receiver.accepted(k) for k in keys):
        time.sleep(0.05)

    # Then every healthy post was accepted while the slow request was still held, at its
    # due second (the simulated clock did not move)
    try:
        assert transport.slow_started.is_set() and not transport.release.is_set()
        assert [fire.receiver.accepted(k) for k in keys] == [1] * 5
        assert all(r.at == due for k in keys for r in fire.receiver.requests_for(k))
    finally:
        transport.release.set()
        worker.join(GUARD_SECONDS)
