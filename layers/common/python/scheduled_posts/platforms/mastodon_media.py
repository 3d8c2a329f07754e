"""Mastodon media: the upload and poll requests, and what each answer means for a delivery.

Endpoints (https://docs.joinmastodon.org/methods/media/):

- ``POST /api/v2/media`` (multipart ``file``, ``description``, ``focus``): 200 with a
  MediaAttachment when the file was processed at once (images, since Mastodon 4.0), 202 with
  ``url: null`` while a video, GIF or audio file is processed in the background. It takes **no
  ``Idempotency-Key``**: a repeat uploads the file again, so the network's media id must be
  stored before the status is sent and a retry must reuse it, never upload again (decision
  "Mastodon media: the stand-in and the client").
- ``GET /api/v1/media/:id``: 206 while processing, 200 when processed (``url`` set), 422 when
  processing failed, 404 when the media is not the account's, is gone, or is already attached
  to a status (the endpoint only shows unattached media).
- ``POST /api/v1/statuses`` with ``media_ids``: 422 ``Cannot attach files that have not
  finished processing. Try again in a moment!`` (Mastodon's ``config/locales/en.yml``,
  ``media_attachments.validations.not_ready``) while one is still processing.

The ``classify_*`` functions are pure: an :class:`HttpAnswer` in, a :class:`MediaAnswer` out.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import quote

from scheduled_posts.platforms.answers import safe_remote_id
from scheduled_posts.platforms.http import FormField, HttpAnswer
from scheduled_posts.platforms.mastodon import MastodonAccess, MastodonClient
from scheduled_posts.platforms.network_adapter import answer_error, error_message

#: The words of Mastodon's 422 for a status whose media are still processing (English).
NOT_FINISHED_PROCESSING = "not finished processing"
#: The file name sent for each media type when none is given (Mastodon keeps the extension).
EXTENSIONS = {
    "image/jpeg": "jpg",
    "image/png": "png",
    "image/gif": "gif",
    "image/webp": "webp",
    "video/mp4": "mp4",
}


class MediaOutcome(StrEnum):
    """What an answer means for the delivery."""

    READY = "ready"  # uploaded and processed: the media id can be attached
    PROCESSING = "processing"  # uploaded, still processing: poll GET /api/v1/media/:id later
    PUBLISHED = "published"  # the status was created (media_id is the status id)
    WAIT = "wait"  # the status was refused only because media are still processing
    REFUSED = "refused"  # the network refused the file or the status: fail with its words
    MISSING = "missing"  # GET 404: not the account's, gone, or already attached to a status
    REAUTHORIZE = "reauthorize"  # 401/403: the channel needs new credentials
    RETRY = "retry"  # 429, 5xx, or an answer without what it must hold: try again later


@dataclass(frozen=True)
class MediaAnswer:
    """A classified answer: ``outcome``, the HTTP ``http_status``, the network's ``media_id``
    (status id for :attr:`MediaOutcome.PUBLISHED`), ``error`` (``http_<status>: <what>: <the
    network's words>``, for every outcome but ready/processing/published) and
    ``rate_limited`` (a 429)."""

    outcome: MediaOutcome
    http_status: int
    media_id: str | None = None
    error: str | None = None
    rate_limited: bool = False


def _common(answer: HttpAnswer, what: str) -> MediaAnswer | None:
    """The outcomes every media request shares: 401/403, 429 and 5xx."""
    status = answer.status
    if status in (401, 403):
        outcome = MediaOutcome.REAUTHORIZE
    elif status == 429 or status >= 500:
        outcome = MediaOutcome.RETRY
    else:
        return None
    return MediaAnswer(
        outcome, status, error=answer_error(answer, what), rate_limited=status == 429
    )


def _attachment(answer: HttpAnswer, what: str) -> MediaAnswer:
    """A 200/202/206 MediaAttachment: ready when it has a ``url``, else processing; an answer
    without a usable id is retried (nothing can be stored)."""
    data = answer.json_object()
    media_id = safe_remote_id(data.get("id"))
    if media_id is None:
        return MediaAnswer(
            MediaOutcome.RETRY, answer.status, error=answer_error(answer, f"{what} without an id")
        )
    ready = answer.status == 200 and isinstance(data.get("url"), str) and bool(data["url"])
    outcome = MediaOutcome.READY if ready else MediaOutcome.PROCESSING
    return MediaAnswer(outcome, answer.status, media_id=media_id)


def classify_upload(answer: HttpAnswer) -> MediaAnswer:
    """``POST /api/v2/media``: 200 with a ``url`` -> ready; 202 (or a 200 without ``url``) ->
    processing; 401/403 -> reauthorize; 429/5xx -> retry; any other answer (422 type or size,
    413 too large for the proxy, 415) -> refused with the network's words."""
    what = "Mastodon answered the media upload"
    common = _common(answer, what)
    if common is not None:
        return common
    if answer.status in (200, 202):
        return _attachment(answer, what)
    return MediaAnswer(
        MediaOutcome.REFUSED,
        answer.status,
        error=answer_error(answer, "Mastodon refused the media"),
    )


def classify_media(answer: HttpAnswer) -> MediaAnswer:
    """``GET /api/v1/media/:id``: 200 with a ``url`` -> ready; 206 -> processing; 404 ->
    missing (the caller decides: an earlier status attempt may have attached it); 422 ->
    refused (processing failed, the network's words); 401/403 -> reauthorize; 429/5xx ->
    retry."""
    what = "Mastodon answered the media poll"
    common = _common(answer, what)
    if common is not None:
        return common
    if answer.status in (200, 206):
        return _attachment(answer, what)
    if answer.status == 404:
        return MediaAnswer(
            MediaOutcome.MISSING, 404, error=answer_error(answer, "Mastodon has no such media")
        )
    return MediaAnswer(
        MediaOutcome.REFUSED,
        answer.status,
        error=answer_error(answer, "Mastodon could not process the media"),
    )


def classify_status(answer: HttpAnswer, *, media_confirmed: bool = True) -> MediaAnswer:
    """``POST /api/v1/statuses`` with media: 200 -> published (``media_id`` = the status id);
    a 422 saying the media have "not finished processing" -> wait (poll, then post again
    with the same ``Idempotency-Key``), never a failure; any other 4xx -> refused; 401/403 ->
    reauthorize; 429/5xx -> retry.

    ``media_confirmed`` is False when some media were not seen processed (upload 200 or poll
    200 with a ``url``): a 422 is then a wait whatever its words, since Mastodon words its
    errors in the account's language and only the English ones are matched here."""
    what = "Mastodon answered the status"
    common = _common(answer, what)
    if common is not None:
        return common
    if answer.status == 200:
        status_id = safe_remote_id(answer.json_object().get("id"))
        if status_id is None:
            return MediaAnswer(
                MediaOutcome.RETRY, 200, error=answer_error(answer, f"{what} without an id")
            )
        return MediaAnswer(MediaOutcome.PUBLISHED, 200, media_id=status_id)
    waiting = NOT_FINISHED_PROCESSING in error_message(answer).lower()
    if answer.status == 422 and (waiting or not media_confirmed):
        return MediaAnswer(
            MediaOutcome.WAIT, 422, error=answer_error(answer, "Mastodon media still processing")
        )
    return MediaAnswer(
        MediaOutcome.REFUSED,
        answer.status,
        error=answer_error(answer, "Mastodon refused the status"),
    )


class MastodonMediaClient(MastodonClient):
    """:class:`MastodonClient` with the media requests (each raises
    :class:`~scheduled_posts.platforms.http.OutboundError` without an answer)."""

    def upload_media(
        self,
        access: MastodonAccess,
        data: bytes,
        content_type: str,
        *,
        description: str | None = None,
        filename: str | None = None,
        focus: tuple[float, float] | None = None,
    ) -> HttpAnswer:
        """``POST /api/v2/media`` with ``data`` as the multipart ``file`` (``content_type``:
        the type probed from the bytes; ``filename`` defaults to ``media.<ext>``),
        ``description`` (the alt text; omitted when empty) and ``focus`` (x, y in -1..1).

        Raises
        ------
        RequestBodyTooLargeError
            When the body is over ``MAX_REQUEST_BODY_BYTES`` (nothing sent).
        """
        name = filename or f"media.{EXTENSIONS.get(content_type, 'bin')}"
        form: dict[str, FormField] = {"file": (name, data, content_type)}
        if description:
            form["description"] = description
        if focus is not None:
            form["focus"] = f"{focus[0]},{focus[1]}"
        return self.http.request(
            "POST",
            self._url(access.instance_url, "/api/v2/media"),
            form=form,
            headers=self._auth(access.access_token),
        )

    def get_media(self, access: MastodonAccess, media_id: str) -> HttpAnswer:
        """``GET /api/v1/media/:id`` (``media_id``: the network's id)."""
        return self.http.request(
            "GET",
            self._url(access.instance_url, f"/api/v1/media/{quote(media_id, safe='')}"),
            headers=self._auth(access.access_token),
        )
