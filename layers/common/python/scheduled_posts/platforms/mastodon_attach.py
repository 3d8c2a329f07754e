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

Outcomes of an upload or a poll (classified by ``platforms/mastodon_media.py``): 401/403 ->
``reauthorization_required``; 429 -> the rate-limit wait; 5xx -> retried; another 4xx (413 too
large, 415 or 422 a type or file the instance refuses) or a processing error -> the delivery
fails with the instance's words. A poll's 404 for a stored id means the media is already
attached (Mastodon shows only unattached media): an earlier attempt's status took it, so the
status is sent again under its ``Idempotency-Key``, which answers with that first status.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.platforms.base import (
    DeliveryRequest,
    DeliveryResult,
    MediaObjects,
    NetworkMediaIds,
    PublishedMedia,
)
from scheduled_posts.platforms.http import HttpAnswer
from scheduled_posts.platforms.mastodon_media import (
    EXTENSIONS,
    MediaAnswer,
    MediaOutcome,
    classify_media,
    classify_status,
    classify_upload,
)

NETWORK = "mastodon"
#: Seconds before the first poll of an item the instance is processing (small GIFs and short
#: videos are often done within seconds).
FIRST_POLL_SECONDS = 3.0
#: Seconds between later polls.
POLL_SECONDS = 15.0


class MediaClient(Protocol):
    """The two media calls of ``MastodonMediaClient`` this module uses (raise
    ``OutboundError`` without an answer)."""

    def upload_media(
        self,
        access: Any,
        data: bytes,
        content_type: str,
        *,
        description: str | None = None,
        filename: str | None = None,
    ) -> HttpAnswer: ...

    def get_media(self, access: Any, media_id: str) -> HttpAnswer: ...


def processing_wait(what: str, seconds: float) -> RetryableDeliveryError:
    """The wait of a post whose media the instance still processes (no HTTP status: the
    status was not published, ``lifecycle/reach.py``)."""
    return RetryableDeliveryError(
        f"media_processing: {NETWORK}: {what}", rate_limited=True, retry_after_seconds=seconds
    )


def _settled(answer: MediaAnswer) -> DeliveryResult | None:
    """``None`` when the media can go on (ready, processing, missing); raises on a retry; the
    failed result of a refusal."""
    if answer.outcome == MediaOutcome.RETRY:
        raise RetryableDeliveryError(
            answer.error or "mastodon media: retry",
            http_status=answer.http_status,
            rate_limited=answer.rate_limited,
        )
    if answer.outcome == MediaOutcome.REAUTHORIZE:
        return DeliveryResult(
            outcome="failed",
            http_status=answer.http_status,
            reason="reauthorization_required",
            error=answer.error,
        )
    if answer.outcome == MediaOutcome.REFUSED:
        return DeliveryResult(
            outcome="failed", http_status=answer.http_status, reason="refused", error=answer.error
        )
    return None


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
    waiting = 0
    uploaded = False
    for item in request.media:
        network_id = known.get(item.media_id)
        if network_id is None:
            got = _upload(client, access, request, item, ids=ids, objects=objects, now=now)
            if isinstance(got, DeliveryResult):
                return got
            network_id, ready = got
            uploaded = True
        else:
            answer = classify_media(client.get_media(access, network_id))
            failed = _settled(answer)
            if failed is not None:
                return failed
            ready = answer.outcome != MediaOutcome.PROCESSING  # missing: attached already
        network_ids.append(network_id)
        waiting += not ready
    if waiting:
        seconds = FIRST_POLL_SECONDS if uploaded else POLL_SECONDS
        raise processing_wait(
            f"the instance is processing {waiting} of {len(network_ids)} media", seconds
        )
    return network_ids


def _upload(
    client: MediaClient,
    access: Any,
    request: DeliveryRequest,
    item: PublishedMedia,
    *,
    ids: NetworkMediaIds,
    objects: MediaObjects,
    now: datetime,
) -> tuple[str, bool] | DeliveryResult:
    """Upload one item and store its id first; ``(network_id, processed)`` or the failure."""
    answer = classify_upload(
        client.upload_media(
            access,
            objects.read(item),
            item.content_type,
            description=item.alt_text,
            filename=f"{item.media_id}.{EXTENSIONS.get(item.content_type, 'bin')}",
        )
    )
    failed = _settled(answer)
    if failed is not None:
        return failed
    assert answer.media_id is not None  # ready and processing answers carry the id
    stored = ids.remember(request.idempotency_key, item.media_id, answer.media_id, now=now)
    return stored, stored == answer.media_id and answer.outcome == MediaOutcome.READY


def status_waits_for_media(answer: HttpAnswer) -> bool:
    """A status refused because an attachment is not processed yet (a 422 with Mastodon's
    words, ``classify_status``): wait and post again, not fail."""
    return classify_status(answer).outcome == MediaOutcome.WAIT
