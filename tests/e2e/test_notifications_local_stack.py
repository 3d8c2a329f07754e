"""End to end (issue 14): on the local stack, a creator registers the loopback receiver as a
notification endpoint and receives ``post.published`` signed, with the post's lag and the
channel's remote id, within seconds of the delivery; the same event id is in ``GET
/v1/events``; a cancelled post yields ``post.cancelled`` and nothing else."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from local.client import ApiClient
from local.emulation.receiver import Notification, Receiver
from local.emulation.runner import AwsProcess, StackProcess, free_port, stack_environment
from scheduled_posts.clock import format_instant
from tests.support.e2e import SHRUNK_SETTINGS, api_client, webhook_channel

pytestmark = pytest.mark.e2e

JWT_SECRET = "e2e-notify-secret-long-enough-for-hs256"
START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
SETTINGS = SHRUNK_SETTINGS
OUTCOMES = ["post.published", "post.cancelled", "post.failed", "post.missed"]


@pytest.fixture(scope="module")
def stack() -> Iterator[int]:
    aws = AwsProcess(free_port(), stack_environment(JWT_SECRET, **SETTINGS))
    aws.wait_ready(START_TIMEOUT)
    api_port = free_port()
    process = StackProcess(
        stack_environment(JWT_SECRET, AWS_PORT=str(aws.port), API_PORT=str(api_port), **SETTINGS)
    )
    try:
        process.wait_ready(START_TIMEOUT)
        yield api_port
    finally:
        process.stop(STOP_TIMEOUT)
        aws.stop(STOP_TIMEOUT)


def _client(port: int, user: str) -> ApiClient:
    return api_client(port, user, JWT_SECRET)


def _setup(client: ApiClient, receiver: Receiver) -> str:
    channel = webhook_channel(client, receiver)
    endpoint = client.request(
        "POST",
        "/v1/notification-endpoints",
        {"url": receiver.notify_url, "event_types": OUTCOMES},
    )
    assert endpoint.status == 201, endpoint.body
    receiver.notify_secret = endpoint.body["signing_secret"]
    return str(channel["channel_id"])


def _schedule(client: ApiClient, channel_id: str, seconds: float) -> str:
    publish_at = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=seconds)
    reply = client.request(
        "POST",
        "/v1/scheduled-posts",
        {"content": "hi", "publish_at": format_instant(publish_at), "channel_ids": [channel_id]},
    )
    assert reply.status == 201, reply.body
    return str(reply.body["schedule_id"])


def _wait(receiver: Receiver, schedule_id: str, kind: str, timeout: float) -> Notification:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for note in list(receiver.notifications):
            if note.schedule_id == schedule_id and note.type == kind:
                return note
        time.sleep(0.25)
    raise AssertionError(f"no {kind} notification for {schedule_id} in {timeout} s")


def test_local_stack_notifies_published_signed_and_same_id_in_feed(
    stack: int, receiver: Receiver
) -> None:
    client = _client(stack, "e2e-notify-alice")
    channel_id = _setup(client, receiver)
    published = _schedule(client, channel_id, 5)
    cancelled = _schedule(client, channel_id, 3600)
    assert client.request("DELETE", f"/v1/scheduled-posts/{cancelled}").status == 200

    note = _wait(receiver, published, "post.published", timeout=45)
    [delivery] = [d for d in receiver.snapshot() if d.schedule_id == published]
    assert note.event["publish_lag_seconds"] >= 0
    assert note.event["channels"][0]["remote_id"] == delivery.remote_id
    # Within seconds of the delivery (the relay polls each second, the notifier long-polls 1 s).
    assert note.lag_seconds < 15
    assert receiver.rejected == 0  # every notification verified with the endpoint's secret

    _wait(receiver, cancelled, "post.cancelled", timeout=20)
    time.sleep(2.0)  # a window for anything else about the cancelled post
    assert [n.type for n in receiver.notifications if n.schedule_id == cancelled] == [
        "post.cancelled"
    ]
    feed = client.request("GET", "/v1/events?limit=100")
    assert feed.status == 200, feed.body
    feed_ids = {item["event"]["event_id"] for item in feed.body["items"]}
    assert note.event_id in feed_ids
