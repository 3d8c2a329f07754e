"""A Mastodon post's media (``platforms/mastodon_attach.py``): each item uploaded once and its id
stored before the status, processing waited for between rounds (a destination wait, no attempt
used), refusals failing the delivery with the instance's words."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.lifecycle.reach import published_nothing
from scheduled_posts.models.post import Attempt
from scheduled_posts.platforms.base import DeliveryRequest, DeliveryResult, PublishedMedia
from scheduled_posts.platforms.http import HttpAnswer
from scheduled_posts.platforms.mastodon_attach import (
    FIRST_POLL_SECONDS,
    POLL_SECONDS,
    attach,
    status_waits_for_media,
)

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


def answer(status: int, body: Any = None) -> HttpAnswer:
    return HttpAnswer(status=status, headers={}, body=json.dumps(body or {}).encode())


def item(media_id: str, alt: str | None = "a cat") -> PublishedMedia:
    return PublishedMedia(
        media_id=media_id,
        content_type="image/png",
        size=3,
        sha256="0" * 64,
        width=2,
        height=1,
        alt_text=alt,
        object_key=f"media/{media_id}",
    )


def request(*media: PublishedMedia) -> DeliveryRequest:
    return DeliveryRequest(
        schedule_id="s1",
        channel_id="c1",
        content="hello",
        publish_at=NOW,
        attempt=1,
        idempotency_key="s1:c1",
        media=media,
    )


class Ids:
    def __init__(self) -> None:
        self.stored: dict[tuple[str, str], str] = {}

    def known(self, idempotency_key: str) -> dict[str, str]:
        return {m: n for (k, m), n in self.stored.items() if k == idempotency_key}

    def remember(
        self, idempotency_key: str, media_id: str, network_id: str, *, now: datetime
    ) -> str:
        return self.stored.setdefault((idempotency_key, media_id), network_id)


class Objects:
    def read(self, media: PublishedMedia) -> bytes:
        return f"bytes of {media.media_id}".encode()

    def download_url(self, media: PublishedMedia, *, expires_seconds: int) -> str:
        return f"http://127.0.0.1/{media.object_key}"


class Instance:
    """Answers uploads and polls from scripts; records what was uploaded."""

    def __init__(self, uploads: list[HttpAnswer], polls: list[HttpAnswer] | None = None) -> None:
        self.uploads = uploads
        self.polls = polls or []
        self.uploaded: list[tuple[bytes, str | None]] = []
        self.polled: list[str] = []

    def upload_media(
        self, access: Any, data: bytes, *, content_type: str, description: str | None, filename: str
    ) -> HttpAnswer:
        self.uploaded.append((data, description))
        return self.uploads.pop(0)

    def get_media(self, access: Any, media_id: str) -> HttpAnswer:
        self.polled.append(media_id)
        return self.polls.pop(0)


def run(instance: Instance, ids: Ids, req: DeliveryRequest) -> list[str] | DeliveryResult | None:
    return attach(instance, None, req, ids=ids, objects=Objects(), now=NOW)


def test_processed_uploads_give_their_ids_in_order_with_the_alt_text_as_description() -> None:
    instance = Instance(
        [answer(200, {"id": "7", "url": "u"}), answer(200, {"id": "8", "url": "u"})]
    )
    got = run(instance, Ids(), request(item("m1"), item("m2", alt=None)))
    assert got == ["7", "8"]
    assert instance.uploaded == [(b"bytes of m1", "a cat"), (b"bytes of m2", None)]


def test_a_post_without_media_uploads_nothing() -> None:
    assert run(Instance([]), Ids(), request()) is None


def test_processing_waits_without_an_attempt_and_the_next_round_polls_not_uploads() -> None:
    ids = Ids()
    instance = Instance([answer(202, {"id": "7", "url": None})], [answer(206, {"id": "7"})])
    with pytest.raises(RetryableDeliveryError) as first:
        run(instance, ids, request(item("m1")))
    assert first.value.rate_limited and first.value.retry_after_seconds == FIRST_POLL_SECONDS
    assert str(first.value).startswith("media_processing: ")
    with pytest.raises(RetryableDeliveryError) as second:  # still processing: 206
        run(instance, ids, request(item("m1")))
    assert second.value.retry_after_seconds == POLL_SECONDS
    instance.polls.append(answer(200, {"id": "7", "url": "u"}))
    assert run(instance, ids, request(item("m1"))) == ["7"]
    assert len(instance.uploaded) == 1 and instance.polled == ["7", "7"]


def test_a_processing_wait_counts_as_nothing_published() -> None:
    with pytest.raises(RetryableDeliveryError) as waited:
        run(Instance([answer(202, {"id": "7", "url": None})]), Ids(), request(item("m1")))
    row = Attempt(
        channel_id="c1",
        attempt=1,
        started_at=NOW,
        outcome="rate_limited",
        http_status=waited.value.http_status,
        error=str(waited.value),
    )
    assert published_nothing(row)


def test_an_id_stored_by_an_earlier_attempt_is_never_uploaded_again() -> None:
    ids = Ids()
    ids.remember("s1:c1", "m1", "7", now=NOW)
    instance = Instance(
        [answer(200, {"id": "8", "url": "u"})], [answer(200, {"id": "7", "url": "u"})]
    )
    assert run(instance, ids, request(item("m1"), item("m2"))) == ["7", "8"]
    assert [data for data, _ in instance.uploaded] == [b"bytes of m2"]


@pytest.mark.parametrize(
    ("status", "reason"),
    [(413, "refused"), (415, "refused"), (422, "refused"), (401, "reauthorization_required")],
)
def test_a_refused_upload_fails_the_delivery_with_the_instances_words(
    status: int, reason: str
) -> None:
    got = run(
        Instance([answer(status, {"error": "File is too large"})]), Ids(), request(item("m1"))
    )
    assert isinstance(got, DeliveryResult) and got.outcome == "failed" and got.reason == reason
    assert got.error is not None and "File is too large" in got.error


@pytest.mark.parametrize("status", [429, 500, 503])
def test_a_busy_instance_is_retried(status: int) -> None:
    with pytest.raises(RetryableDeliveryError):
        run(Instance([answer(status)]), Ids(), request(item("m1")))


def test_a_lost_network_item_fails_the_delivery() -> None:
    ids = Ids()
    ids.remember("s1:c1", "m1", "7", now=NOW)
    got = run(Instance([], [answer(404, {"error": "Record not found"})]), ids, request(item("m1")))
    assert isinstance(got, DeliveryResult) and got.outcome == "failed"


def test_a_status_refused_for_unprocessed_media_waits() -> None:
    words = "Cannot attach files that have not finished processing. Try again in a moment!"
    assert status_waits_for_media(answer(422, {"error": words}))
    assert not status_waits_for_media(
        answer(422, {"error": "Validation failed: Text can't be blank"})
    )
