"""The local webhook receiver: signature check, dedupe by Idempotency-Key, lag."""

from __future__ import annotations

import base64
import http.client
import json
import time
from collections.abc import Iterator

import pytest

from local.emulation.receiver import Receiver, secret_list
from scheduled_posts.platforms.signing import sign, signature_headers


def _whsec(name: str) -> str:
    """A Standard Webhooks secret: ``whsec_`` + base64 of 32 bytes."""
    return "whsec_" + base64.b64encode(name.encode().ljust(32, b".")).decode()


SECRET = _whsec("test")
ONE, TWO, THREE, EP1, EP2 = (_whsec(n) for n in ("one", "two", "three", "ep1", "ep2"))


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


def _headers(body: bytes, secret: str = SECRET, key: str = "s1:c1") -> dict[str, str]:
    """What the service sends: every signature header (Standard Webhooks and X-Signature)."""
    return {**signature_headers([secret], key, int(time.time()), body), "Idempotency-Key": key}


def test_receiver_valid_signature_accepts_with_lag(receiver: Receiver) -> None:
    body = _delivery()
    status, answer = receiver.handle(_headers(body), body)
    assert status == 200 and answer["id"].startswith("rcv-")
    assert receiver.snapshot()[0].lag_seconds > 0


def test_receiver_wrong_secret_refuses_with_401(receiver: Receiver) -> None:
    body = _delivery()
    status, _ = receiver.handle(_headers(body, _whsec("other")), body)
    assert (status, receiver.rejected, receiver.snapshot()) == (401, 1, [])


def test_receiver_verifies_webhook_signature_not_x_signature(receiver: Receiver) -> None:
    # Given a request carrying only the deprecated X-Signature, correctly signed
    body = _delivery()
    only_legacy = {
        "X-Signature": sign([SECRET], int(time.time()), body),
        "Idempotency-Key": "s1:c1",
    }

    # Then the receiver, which verifies with the standardwebhooks package, refuses it
    assert receiver.handle(only_legacy, body)[0] == 401


def test_receiver_accepts_a_rotation_overlap_with_only_the_old_secret() -> None:
    rcv = Receiver(secret=ONE)  # the receiver still holds the replaced secret
    body = _delivery()
    headers = {**signature_headers([TWO, ONE], "s1:c1", int(time.time()), body)}

    status, _ = rcv.handle({**headers, "Idempotency-Key": "s1:c1"}, body)

    assert status == 200


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


# -- several secrets (RECEIVER_SECRET / RECEIVER_NOTIFY_SECRET comma-separated) -----------------


def test_receiver_comma_separated_secrets_accept_each_channel() -> None:
    # Given one receiver for two channels (and a secret with stray spaces)
    rcv = Receiver(secret=f"{ONE}, {TWO}")
    first, second = _delivery("s1"), _delivery("s2")

    # When each channel signs with its own secret
    one = rcv.handle(_headers(first, ONE, "s1:c1"), first)
    two = rcv.handle(_headers(second, TWO, "s2:c1"), second)

    # Then both are accepted
    assert (one[0], two[0], len(rcv.snapshot())) == (200, 200, 2)


def test_receiver_several_secrets_still_refuse_an_unlisted_one() -> None:
    rcv = Receiver(secret=[ONE, TWO])
    body = _delivery()

    status, _ = rcv.handle(_headers(body, THREE), body)

    assert (status, rcv.rejected) == (401, 1)


def _event(event_id: str = "e1", **extra: object) -> bytes:
    return json.dumps(
        {
            "event_id": event_id,
            "type": "post.published",
            "occurred_at": "2020-01-01T00:00:00.000Z",
            "schedule_id": "s1",
            **extra,
        }
    ).encode()


def test_receiver_notifications_accept_any_listed_notify_secret() -> None:
    rcv = Receiver(secret=SECRET, notify_secret=f"{EP1},{EP2}")
    first, second = _event("e1"), _event("e2")

    one = rcv.handle(_headers(first, EP1, "e1"), first)
    two = rcv.handle(_headers(second, EP2, "e2"), second)
    other = rcv.handle(_headers(second, SECRET, "e2"), second)

    assert (one[0], two[0], other[0]) == (200, 200, 401)


def test_secret_list_splits_commas_and_drops_blanks() -> None:
    assert secret_list(" a ,b,,a, ") == ("a", "b")
    assert secret_list(None) == ()
    assert secret_list(("x", " ")) == ("x",)


# -- odd requests answer, never crash the receiver ----------------------------------------------


def test_receiver_delivery_with_a_non_numeric_attempt_answers_400() -> None:
    rcv = Receiver()
    body = json.dumps({**json.loads(_delivery()), "attempt": "first"}).encode()

    assert rcv.handle({}, body) == (400, {"message": "not a webhook delivery"})


def test_receiver_notification_with_odd_fields_is_accepted() -> None:
    printed: list[str] = []
    rcv = Receiver(printer=printed.append)
    body = _event(publish_lag_seconds="slow", channels=7)

    status, _ = rcv.handle({"Idempotency-Key": "e1"}, body)

    assert (status, len(printed)) == (200, 1)


def test_receiver_bad_content_length_answers_400_over_http() -> None:
    with Receiver() as rcv:
        connection = http.client.HTTPConnection("127.0.0.1", rcv.port, timeout=5)
        try:
            connection.putrequest("POST", "/hook")
            connection.putheader("Content-Length", "lots")
            connection.endheaders()
            answer = connection.getresponse()
            status, body = answer.status, json.loads(answer.read())
        finally:
            connection.close()

    assert (status, body) == (400, {"message": "Content-Length is not a number"})


def test_receiver_keeps_and_prints_each_media_item_of_the_body() -> None:
    item = {
        "media_id": "m1",
        "content_type": "image/png",
        "size": 140,
        "sha256": "ab" * 32,
        "width": 64,
        "height": 48,
        "duration_seconds": None,
        "alt_text": "A cat",
        "url": "http://127.0.0.1:4566/scheduled-posts-media/media/m1?X-Amz-Signature=x",
        "url_expires_at": "2020-01-01T01:00:00.000Z",
    }
    body = json.dumps({**json.loads(_delivery()), "media_ids": ["m1"], "media": [item]}).encode()
    lines: list[str] = []
    rcv = Receiver(secret=SECRET, printer=lines.append)

    status, _ = rcv.handle(_headers(body), body)

    assert status == 200 and rcv.snapshot()[0].media == [item]
    assert lines[-1] == (
        f"  MEDIA image/png 64x48 size=140 sha256={'ab' * 32} alt='A cat' url={item['url']}"
    )


def test_receiver_delivery_without_media_keeps_an_empty_list(receiver: Receiver) -> None:
    body = _delivery()
    receiver.handle(_headers(body), body)
    assert receiver.snapshot()[0].media == []
