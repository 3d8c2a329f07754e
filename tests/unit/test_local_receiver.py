"""The local webhook receiver: signature check, dedupe by Idempotency-Key, lag."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from local.emulation.receiver import Receiver
from scheduled_posts.platforms.signing import sign

SECRET = "whsec-test"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    rcv = Receiver(secret=SECRET)
    yield rcv
    rcv.stop()


def _delivery(schedule_id: str = "s1") -> bytes:
    return json.dumps(
        {
            "schedule_id": schedule_id,
            "channel_id": "c1",
            "content": "hi",
            "media_ids": [],
            "publish_at": "2020-01-01T00:00:00.000Z",
            "attempt": 1,
        }
    ).encode()


def _headers(body: bytes, secret: str = SECRET) -> dict[str, str]:
    return {
        "X-Signature": sign([secret], int(time.time()), body),
        "Idempotency-Key": "s1:c1",
    }


def test_receiver_valid_signature_accepts_with_lag(receiver: Receiver) -> None:
    body = _delivery()
    status, answer = receiver.handle(_headers(body), body)
    assert status == 200 and answer["id"].startswith("rcv-")
    assert receiver.snapshot()[0].lag_seconds > 0


def test_receiver_wrong_secret_refuses_with_401(receiver: Receiver) -> None:
    body = _delivery()
    status, _ = receiver.handle(_headers(body, "other"), body)
    assert (status, receiver.rejected, receiver.snapshot()) == (401, 1, [])


def test_receiver_repeated_idempotency_key_counts_a_resend(receiver: Receiver) -> None:
    body = _delivery()
    first = receiver.handle(_headers(body), body)
    second = receiver.handle(_headers(body), body)
    assert first == second
    assert (len(receiver.snapshot()), receiver.resends) == (1, 1)


def test_receiver_header_key_differing_from_signed_body_refused(receiver: Receiver) -> None:
    body = json.dumps({**json.loads(_delivery()), "idempotency_key": "s1:c1"}).encode()
    headers = {**_headers(body), "Idempotency-Key": "s1:replayed"}

    status, _ = receiver.handle(headers, body)

    assert (status, receiver.snapshot()) == (400, [])
