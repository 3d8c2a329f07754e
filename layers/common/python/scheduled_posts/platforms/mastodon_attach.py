"""A Mastodon post's media: each uploaded once, waited for without holding a Lambda, then
attached to the status (decision "Mastodon media: uploaded once, waited for between rounds").

Endpoints (https://docs.joinmastodon.org/methods/media/):

- ``POST /api/v2/media`` (multipart ``file``, ``description`` = the alt text): 200 with the
  MediaAttachment when it is processed, 202 with ``url: null`` while it is (video, GIF); no
  ``Idempotency-Key``, so the id it answers is stored (:class:`NetworkMediaIds`) before
  anything else, and every later attempt of the delivery reuses it instead of uploading again;
- ``GET /api/v1/media/:id``: 206 while processing, 200 when done;
- ``POST /api/v1/statuses`` with ``media_ids[]``: 422 "Cannot attach files that have not
  finished processing" means wait, not fail.

While an item is processing the attempt ends with a wait (a destination wait: no attempt used,
bounded by ``MAX_DESTINATION_WAITS`` and the misfire window, like a 429), and the next round
polls again: :data:`FIRST_POLL_SECONDS` after an upload, :data:`POLL_SECONDS` after that. The
wait's error word ``media_processing`` says the post itself was not published
(``lifecycle/reach.py``).

Outcomes of an upload or a poll: 401/403 -> ``reauthorization_required``; 429 -> the rate-limit
wait; 5xx -> retried; another 4xx (413 too large, 415 or 422 a type or file the instance
refuses), a poll's 404 or a processing error -> the delivery fails with the instance's words.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.platforms.answers import safe_remote_id
from scheduled_posts.platforms.base import (
    DeliveryRequest,
    DeliveryResult,
    MediaObjects,
    NetworkMediaIds,
    PublishedMedia,
)
from scheduled_posts.platforms.http import HttpAnswer, answer_error, rate_limited_error

NETWORK = "mastodon"
#: Seconds before the first poll of an item the instance is processing (small GIFs and short
#: videos are often done within seconds).
FIRST_POLL_SECONDS = 3.0
#: Seconds between later polls.
POLL_SECONDS = 15.0
#: Words of Mastodon's 422 for a status with unprocessed media (``app/services/
#: post_status_service.rb``, ``media_attachments.not_finished_processing``: "Cannot attach files
#: that have not finished processing. Try again in a moment!").
NOT_PROCESSED_WORDS = "not finished processing"


class MediaClient(Protocol):
    """The two media calls of ``MastodonClient`` this module uses (raise ``OutboundError``
    without an answer)."""

    def upload_media(
        self,
        access: Any,
        data: bytes,
        *,
        content_type: str,
        description: str | None,
        filename: str,
    ) -> HttpAnswer: ...

    def get_media(self, access: Any, media_id: str) -> HttpAnswer: ...


def processing_wait(what: str, seconds: float) -> RetryableDeliveryError:
    """The wait of a post whose media the instance still processes (no HTTP status: the
    status was not published, ``lifecycle/reach.py``)."""
    return RetryableDeliveryError(
        f"media_processing: {NETWORK}: {what}", rate_limited=True, retry_after_seconds=seconds
    )


def _refused(answer: HttpAnswer, what: str) -> DeliveryResult:
    if answer.status in (401, 403):
        return DeliveryResult(
            outcome="failed",
            http_status=answer.status,
            reason="reauthorization_required",
            error=answer_error(answer, "Mastodon refused the access token"),
        )
    return DeliveryResult(
        outcome="failed",
        http_status=answer.status,
        reason="refused",
        error=answer_error(answer, what),
    )


def _check(answer: HttpAnswer, what: str, *, now: datetime) -> DeliveryResult | None:
    """``None`` for a 2xx; raises on 429/5xx; the failed result of any other answer."""
    if 200 <= answer.status < 300:
        return None
    if answer.status == 429:
        raise rate_limited_error(NETWORK, answer, now=now, wait=None)
    if answer.status >= 500:
        raise RetryableDeliveryError(answer_error(answer, what), http_status=answer.status)
    return _refused(answer, what)


def _processed(answer: HttpAnswer) -> bool:
    """A MediaAttachment answer says it is processed: 200 with a ``url``."""
    return answer.status == 200 and bool(answer.json_object().get("url"))


def attach(
    client: MediaClient,
    access: Any,
    request: DeliveryRequest,
    *,
    ids: NetworkMediaIds | None,
    objects: MediaObjects | None,
    now: datetime,
) -> list[str] | DeliveryResult | None:
    """The instance's media ids of ``request.media``, in order, every one processed (``None``
    for a post without media); or the failed result that ends the delivery (also when the
    adapter was built without the media bucket or the id store).

    Raises
    ------
    RetryableDeliveryError
        ``media_processing`` while an item is processing (a wait); 429 and 5xx of an upload or a
        poll; the store or S3 not answering now.
    scheduled_posts.platforms.http.OutboundError
        Without an answer (the adapter retries it).
    """
    if not request.media:
        return None
    if ids is None or objects is None:
        return DeliveryResult(outcome="failed", error="media_unsupported: no media store")
    known = ids.known(request.idempotency_key)
    network_ids: list[str] = []
    waiting: list[str] = []
    uploaded = False
    for number, item in enumerate(request.media, start=1):
        network_id = known.get(item.media_id)
        if network_id is None:
            got = _upload(client, access, request, item, number, ids=ids, objects=objects, now=now)
            if isinstance(got, DeliveryResult):
                return got
            network_id, ready = got
            uploaded = True
        else:
            answer = client.get_media(access, network_id)
            if answer.status == 404:
                return _refused(answer, f"Mastodon lost media {number} ({network_id})")
            failed = _check(answer, f"Mastodon media {number}", now=now)
            if failed is not None:
                return failed
            ready = _processed(answer)
        network_ids.append(network_id)
        if not ready:
            waiting.append(network_id)
    if waiting:
        seconds = FIRST_POLL_SECONDS if uploaded else POLL_SECONDS
        what = f"the instance is processing {len(waiting)} of {len(network_ids)} media"
        raise processing_wait(what, seconds)
    return network_ids


def _upload(
    client: MediaClient,
    access: Any,
    request: DeliveryRequest,
    item: PublishedMedia,
    number: int,
    *,
    ids: NetworkMediaIds,
    objects: MediaObjects,
    now: datetime,
) -> tuple[str, bool] | DeliveryResult:
    """Upload one item and store its id first; ``(network_id, processed)`` or the failure."""
    answer = client.upload_media(
        access,
        objects.read(item),
        content_type=item.content_type,
        description=item.alt_text,
        filename=f"{item.media_id}{_extension(item.content_type)}",
    )
    failed = _check(answer, f"Mastodon refused media {number}", now=now)
    if failed is not None:
        return failed
    network_id = safe_remote_id(answer.json_object().get("id"))
    if network_id is None:
        raise RetryableDeliveryError(answer_error(answer, "mastodon answered media without an id"))
    stored = ids.remember(request.idempotency_key, item.media_id, network_id, now=now)
    return stored, stored == network_id and answer.status == 200 and _processed(answer)


def _extension(content_type: str) -> str:
    return {
        "image/jpeg": ".jpg",
        "image/png": ".png",
        "image/gif": ".gif",
        "image/webp": ".webp",
        "video/mp4": ".mp4",
    }.get(content_type, "")


def status_waits_for_media(answer: HttpAnswer) -> bool:
    """A status refused because an attachment is not processed yet (a 422 with Mastodon's
    words): wait and post again, not fail."""
    if answer.status != 422:
        return False
    data = answer.json_object()
    return NOT_PROCESSED_WORDS in str(data.get("error") or "").lower()
