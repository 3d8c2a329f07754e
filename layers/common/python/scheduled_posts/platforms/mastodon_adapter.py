"""The ``mastodon`` adapter: one delivery of a post as a status, exactly once, with its media
(the endpoints, outcomes and the lost-answer search are described in ``platforms/mastodon.py``,
the client's module; media in ``platforms/mastodon_attach.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Unpack

from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.answers import receipt_from, safe_remote_id
from scheduled_posts.platforms.base import (
    DeliveryRequest,
    DeliveryResult,
    NetworkMediaIds,
    PartRef,
    ThreadProgress,
)
from scheduled_posts.platforms.http import (
    DestinationRefusedError,
    HttpAnswer,
    OutboundError,
)
from scheduled_posts.platforms.mastodon import (
    CLOCK_SKEW_SECONDS,
    IDEMPOTENCY_KEY_TRUSTED_SECONDS,
    NETWORK,
    MastodonAccess,
    retryable_answer,
)
from scheduled_posts.platforms.mastodon_attach import (
    POLL_SECONDS,
    attach,
    processing_wait,
    status_waits_for_media,
)
from scheduled_posts.platforms.mastodon_media import MastodonMediaClient
from scheduled_posts.platforms.network_adapter import (
    AdapterParts,
    NetworkAdapter,
    answer_error,
    rate_limited_error,
    retryable,
)
from scheduled_posts.platforms.registry import check_length
from scheduled_posts.platforms.thread import deliver_refused, deliver_thread, refused_part
from scheduled_posts.settings import Settings

AccessLoader = Callable[[Channel], MastodonAccess]


def _too_long(
    channel: Channel, request: DeliveryRequest, access: MastodonAccess
) -> DeliveryResult | None:
    """The ``failed`` result (reason ``too_long``, never truncated) when the status breaks the
    instance's limit with its ``spoiler_text`` counted (``check_length`` with the request's
    options: Mastodon's ``StatusLengthValidator``), else ``None``."""
    broken = check_length(NETWORK, request.content, access.limits, request.options)
    if not broken:
        return None
    return DeliveryResult(
        outcome="failed", reason="too_long", error=broken[0].message(channel.name)
    )


class MastodonAdapter(NetworkAdapter):
    """:class:`~scheduled_posts.platforms.base.PlatformAdapter` for ``mastodon`` channels.

    Parameters
    ----------
    settings
        ``OUTBOUND_ALLOWED_ORIGINS`` and ``DELIVERY_TIMEOUT_SECONDS`` are used.
    access
        ``channel -> MastodonAccess`` (decrypts the channel's credentials).
    transport, resolver, timer
        Injectable for tests (``timer``: the attempt deadline's clock, float seconds).
    budget
        The rate-limit budget memory (default: a fresh :class:`RateLimitBudget`).
    """

    platform = NETWORK

    def __init__(
        self,
        settings: Settings,
        *,
        access: AccessLoader,
        network_media: NetworkMediaIds | None = None,
        thread_parts: ThreadProgress | None = None,
        **parts: Unpack[AdapterParts],
    ) -> None:
        super().__init__(settings, **parts)
        self.client = MastodonMediaClient(self.http)
        self.access = access
        #: The store of the instance's media ids (needed, with ``media``, for media).
        self.network_media = network_media
        #: A thread's published parts (``ThreadProgress``), stored before the next is sent.
        self.thread_parts = thread_parts

    def deliver(
        self, channel: Channel, request: DeliveryRequest, *, now: datetime
    ) -> DeliveryResult:
        """Publish ``request.content`` as a status of ``channel``'s account (see the module
        docstring for the outcomes).

        Raises
        ------
        RetryableDeliveryError
            On 429 or a spent budget (``rate_limited=True``), 5xx, timeouts, connection errors.
        """
        refused = self.gate(channel, now=now)
        if refused is not None:  # parts an earlier round published are still listed
            return deliver_refused(request, refused, progress=self.thread_parts, now=now)
        access = self.access(channel)
        stop = refused_part(request, lambda part: _too_long(channel, part, access))
        if stop is not None:
            return stop
        client = MastodonMediaClient(self.attempt_http())  # every request within one deadline

        def write(
            index: int, part: DeliveryRequest, root: PartRef | None, parent: PartRef | None
        ) -> tuple[DeliveryResult, PartRef | None]:
            if index:  # an Idempotency-Key per part
                key = f"{request.idempotency_key}:{index}"
                part = part.model_copy(update={"idempotency_key": key})
            reply_to = parent.remote_id if parent else None
            result = self._write(client, channel, access, part, reply_to=reply_to, now=now)
            if result.outcome != "published" or not result.remote_id:
                return result, None
            ref = PartRef(
                remote_id=result.remote_id, remote_url=result.remote_url, receipt=result.receipt
            )
            return result, ref

        return deliver_thread(request, write, progress=self.thread_parts, now=now)

    def _write(
        self,
        client: MastodonMediaClient,
        channel: Channel,
        access: MastodonAccess,
        request: DeliveryRequest,
        *,
        reply_to: str | None,
        now: datetime,
    ) -> DeliveryResult:
        """One status (a reply to ``reply_to`` when given), found again after a lost answer
        (its ``Idempotency-Key``, past its window the account's recent statuses)."""
        try:
            found = self._already_published(client, access, request, reply_to, now=now)
            if found is not None:
                return found
            media_ids = attach(
                client, access, request, ids=self.network_media, objects=self.media, now=now
            )
            if isinstance(media_ids, DeliveryResult):
                return media_ids
            answer = client.post_status(
                access,
                request.content,
                idempotency_key=request.idempotency_key,
                language=request.language,
                media_ids=media_ids or (),
                options=request.options,
                in_reply_to_id=reply_to,
            )
            if status_waits_for_media(answer):
                raise processing_wait("the status waits for its media", POLL_SECONDS)
            if answer.status in (401, 403) and request.first_attempt_at is not None:
                # The Idempotency-Key cannot answer for a revoked token: did an earlier
                # attempt post it? (the account's public statuses need no token)
                found = self._published_since(
                    client, access, request, request.first_attempt_at, reply_to
                )
                if found is not None:
                    return found
        except DestinationRefusedError as exc:
            return DeliveryResult(outcome="failed", error=f"{exc.kind}: {exc}")
        except OutboundError as exc:
            raise retryable(NETWORK, exc) from exc
        return self._outcome(channel, answer, now=now)

    def _already_published(
        self,
        client: MastodonMediaClient,
        access: MastodonAccess,
        request: DeliveryRequest,
        reply_to: str | None,
        *,
        now: datetime,
    ) -> DeliveryResult | None:
        first = request.first_attempt_at
        if first is None or now - first < timedelta(seconds=IDEMPOTENCY_KEY_TRUSTED_SECONDS):
            return None  # the Idempotency-Key still answers for an earlier attempt
        return self._published_since(client, access, request, first, reply_to)

    @staticmethod
    def _published_since(
        client: MastodonMediaClient,
        access: MastodonAccess,
        request: DeliveryRequest,
        first: datetime,
        reply_to: str | None = None,
    ) -> DeliveryResult | None:
        """The published result of a status with the post's text (replying to ``reply_to``,
        when given) made since ``first`` (the first attempt, less :data:`CLOCK_SKEW_SECONDS`),
        else ``None``."""
        status = client.find_status(
            access,
            request.content,
            since=first - timedelta(seconds=CLOCK_SKEW_SECONDS),
            in_reply_to_id=reply_to,
        )
        if status is None:
            return None
        return DeliveryResult(
            outcome="published",
            http_status=200,
            remote_id=safe_remote_id(status.get("id")),
            remote_url=status.get("url") or status.get("uri"),
            receipt=receipt_from(created_at=status.get("created_at")),
        )

    def _outcome(self, channel: Channel, answer: HttpAnswer, *, now: datetime) -> DeliveryResult:
        wait = self.budget.note(channel.channel_id, answer, now=now)
        status = answer.status
        if status == 200:
            data = answer.json_object()
            if not data.get("id"):
                raise retryable_answer(answer, "without a status id")
            return DeliveryResult(  # published: an id or URL we cannot keep is dropped
                outcome="published",
                http_status=status,
                remote_id=safe_remote_id(data["id"]),
                remote_url=data.get("url") or data.get("uri"),
                receipt=receipt_from(created_at=data.get("created_at")),
            )
        if status in (401, 403):
            return DeliveryResult(
                outcome="failed",
                http_status=status,
                reason="reauthorization_required",
                error=answer_error(answer, "Mastodon refused the access token"),
            )
        if status == 429:
            raise rate_limited_error(NETWORK, answer, now=now, wait=wait)
        if status >= 500:
            raise retryable_answer(answer, "to POST /api/v1/statuses")
        return DeliveryResult(
            outcome="failed",
            http_status=status,
            reason="refused",
            error=answer_error(answer, "Mastodon refused the status"),
        )
