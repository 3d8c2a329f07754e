"""The ``bluesky`` platform: ``app.bsky.feed.post`` records in the account's repository on its
PDS, over the documented XRPC endpoints (https://docs.bsky.app/docs/api/), exactly once.

Exactly once without a server-side idempotency key:

- The record key is a TID derived from the post's stored ``publish_at`` and a hash of
  ``schedule_id`` and ``channel_id`` (:func:`~scheduled_posts.platforms.atproto_text.tid`), and
  ``createdAt`` is ``publish_at``: every attempt of a delivery writes the same record at the
  same key.
- ``com.atproto.repo.putRecord`` with ``swapRecord: null`` (sent as a JSON ``null``: "compare
  and swap with the previous record by CID; null means the record must not exist") creates the
  record only if the key is free. The reference PDS answers a byte-identical repeat with 200
  and no write, and a different record with 400 ``InvalidSwap``. (``createRecord`` on an
  existing key answers 500 there, not a clean conflict, so it is not used.)
- A retry (``first_attempt_at`` set: an earlier attempt's answer may have been lost) first
  reads the key with ``com.atproto.repo.getRecord`` (a public read, so it works after the
  credentials were revoked too): our text there is the published post;
  400 ``RecordNotFound`` means write. ``InvalidSwap`` is checked the same way (a mention that
  resolved differently changes the facets, not the post): our text and ``createdAt`` there is
  ours; anything else means someone else wrote at that key, and the delivery fails.

Sessions (https://docs.bsky.app/docs/api/com-atproto-server-create-session): created with the
handle and app password, cached per channel (:class:`SessionCache`), refreshed with
``com.atproto.server.refreshSession`` when the access token expires (400/401 ``ExpiredToken``)
and re-created when the refresh token is refused too. ``createSession`` refused (401) means the
credentials are gone: ``failed`` with reason ``reauthorization_required``.

Rate limits (https://docs.bsky.app/docs/advanced-guides/rate-limits): ``RateLimit-Remaining``
0 or a 429 make the channel's deliveries wait until ``RateLimit-Reset`` (absolute Unix seconds)
or ``Retry-After``, without using an attempt. 5xx, timeouts and connection errors retry with
the usual backoff; any other 400 (the lexicon refused the record) fails with the PDS's message.

One deadline per attempt (decision "One deadline per network delivery attempt"): every request
of an attempt (getRecord, createSession/refreshSession, resolveHandle, putRecord) ends within
one ``DELIVERY_TIMEOUT_SECONDS`` from the attempt's start. Mentions are resolved once per
distinct handle, in order, within a budget of :data:`MAX_RESOLVED_HANDLES` handles and
:data:`MENTION_BUDGET_SHARE` of the deadline; the mentions after it stay plain text.

Media (``DeliveryRequest.media``): each item's blob is uploaded (``uploadBlob``) before the
``putRecord`` of every attempt that writes, and the record embeds them
(``platforms/bluesky_media.py``; without media, the frozen link card: ``bluesky_card.py``); an
upload the PDS refuses (413, 400) fails the delivery, 5xx and timeouts retry, as for the write.

The XRPC calls and the session models are ``platforms/bluesky_client.py`` (re-exported here).
The ``atproto`` SDK is not used (import cost, and it drops ``None`` fields so ``swapRecord:
null`` cannot be sent): docs/decisions.md N1.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.atproto_text import MentionResolver, detect_facets, tid
from scheduled_posts.platforms.base import (
    DeliveryRequest,
    DeliveryResult,
    MediaObjects,
)
from scheduled_posts.platforms.bluesky_answer import published_result
from scheduled_posts.platforms.bluesky_card import embed_for, uploads_of
from scheduled_posts.platforms.bluesky_client import (
    DEFAULT_SERVICE_URL,
    POST_COLLECTION,
    TOKEN_ERRORS,
    BlueskyAccess,
    BlueskyClient,
    BlueskySession,
    MemorySessionCache,
    SessionCache,
    created_at,
    post_url,
    xrpc_error,
)
from scheduled_posts.platforms.bluesky_media import (
    MediaRefusedError,
    embedded_cids,
    media_violation,
    read_checked,
    upload_blobs,
)
from scheduled_posts.platforms.deadline import Timer
from scheduled_posts.platforms.http import (
    CredentialsRefusedError,
    DestinationRefusedError,
    HttpAnswer,
    MethodTransport,
    OutboundError,
)
from scheduled_posts.platforms.network_adapter import (
    NetworkAdapter,
    answer_error,
    rate_limited_error,
    retryable,
)
from scheduled_posts.platforms.rate_limits import RateLimitBudget
from scheduled_posts.platforms.text_length import bluesky_limits
from scheduled_posts.platforms.url_policy import Resolver
from scheduled_posts.settings import Settings

__all__ = [
    "DEFAULT_SERVICE_URL",
    "POST_COLLECTION",
    "BlueskyAccess",
    "BlueskyAdapter",
    "BlueskyClient",
    "BlueskySession",
    "MemorySessionCache",
    "SessionCache",
    "created_at",
    "post_url",
]

NETWORK = "bluesky"
#: Most distinct handles one attempt resolves; later mentions stay plain text.
MAX_RESOLVED_HANDLES = 10
#: Share of the attempt's deadline that resolving mentions may use (the rest is for the
#: session and the write).
MENTION_BUDGET_SHARE = 0.5

AccessLoader = Callable[[Channel], BlueskyAccess]


class _ReauthorizeError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)


class BlueskyAdapter(NetworkAdapter):
    """:class:`~scheduled_posts.platforms.base.PlatformAdapter` for ``bluesky`` channels.

    Parameters
    ----------
    settings
        ``OUTBOUND_ALLOWED_ORIGINS`` and ``DELIVERY_TIMEOUT_SECONDS`` (the attempt's deadline)
        are used.
    access
        ``channel -> BlueskyAccess`` (decrypts the channel's credentials).
    sessions
        The session cache (default: in memory).
    media
        The media bucket's bytes (``MediaObjects``); needed for posts with media.
    transport, resolver, budget, timer
        Injectable for tests (``timer``: the deadline's clock, float seconds).
    """

    platform = NETWORK

    def __init__(
        self,
        settings: Settings,
        *,
        access: AccessLoader,
        sessions: SessionCache | None = None,
        media: MediaObjects | None = None,
        transport: MethodTransport | None = None,
        resolver: Resolver | None = None,
        budget: RateLimitBudget | None = None,
        timer: Timer | None = None,
    ) -> None:
        extra: dict[str, Any] = {} if timer is None else {"timer": timer}
        super().__init__(settings, transport=transport, resolver=resolver, budget=budget, **extra)
        self.client = BlueskyClient(self.http)
        self.access = access
        self.sessions: SessionCache = sessions or MemorySessionCache()
        self.media = media

    def deliver(
        self, channel: Channel, request: DeliveryRequest, *, now: datetime
    ) -> DeliveryResult:
        """Write ``request`` as a post of ``channel``'s account (outcomes: module docstring).

        Raises
        ------
        RetryableDeliveryError
            On 429 or a spent budget (``rate_limited=True``), 5xx, timeouts (the attempt's
            deadline included), connection errors.
        """
        stop = self.gate(channel, now=now) or self.too_long(channel, request, bluesky_limits())
        if stop is not None:
            return stop
        violation = media_violation(request)
        if violation is not None:
            return DeliveryResult(outcome="failed", reason="refused", error=violation)
        access = self.access(channel)
        rkey = tid(
            request.publish_at, schedule_id=request.schedule_id, channel_id=channel.channel_id
        )
        client = BlueskyClient(self.attempt_http())  # every request within one deadline
        try:
            return self._deliver(client, channel, access, request, rkey, now=now)
        except _ReauthorizeError as exc:
            self.sessions.put(channel, None)  # a later delivery logs in again
            return DeliveryResult(
                outcome="failed", reason="reauthorization_required", error=str(exc)
            )
        except DestinationRefusedError as exc:
            return DeliveryResult(outcome="failed", error=f"{exc.kind}: {exc}")
        except MediaRefusedError as exc:
            return DeliveryResult(
                outcome="failed", http_status=exc.http_status, reason="refused", error=str(exc)
            )
        except OutboundError as exc:
            raise retryable(NETWORK, exc) from exc

    def _deliver(
        self,
        client: BlueskyClient,
        channel: Channel,
        access: BlueskyAccess,
        request: DeliveryRequest,
        rkey: str,
        *,
        now: datetime,
    ) -> DeliveryResult:
        if request.first_attempt_at is not None:
            found = self._read_ours(client, channel, access, request, rkey, now=now)
            if found is not None:
                return found
        uploads = uploads_of(request)  # the media, or the link card's thumb
        data = read_checked(self.media, uploads)
        session = self._session(client, channel, access)
        blobs = upload_blobs(
            lambda send: self._call(client, channel, access, send, now=now),
            client,
            access.service_url,
            uploads,
            data,
        )
        record = self._record(client, access, request)
        embed, cids = embed_for(request, blobs)
        if embed is not None:
            record["embed"] = embed
        answer = self._call(
            client,
            channel,
            access,
            lambda s: client.put_record(access.service_url, s, rkey, record),
            now=now,
        )
        if answer.status == 200:
            return published_result(session.did, rkey, answer.json_object(), cids)
        if answer.status == 400 and xrpc_error(answer) == "InvalidSwap":
            found = self._read_ours(client, channel, access, request, rkey, now=now)
            if found is not None:
                return found
            return DeliveryResult(
                outcome="failed",
                http_status=400,
                reason="refused",
                error=f"http_400: InvalidSwap: a different record already exists at "
                f"at://{session.did}/{POST_COLLECTION}/{rkey}",
            )
        return DeliveryResult(
            outcome="failed",
            http_status=answer.status,
            reason="refused",
            error=answer_error(answer, "Bluesky refused the post"),
        )

    def _record(
        self, client: BlueskyClient, access: BlueskyAccess, request: DeliveryRequest
    ) -> dict[str, Any]:
        record: dict[str, Any] = {
            "$type": POST_COLLECTION,
            "text": request.content,
            "createdAt": created_at(request.publish_at),
        }
        deadline = client.http.deadline
        assert deadline is not None  # the attempt's client (deliver)
        budget = deadline.part(deadline.seconds * MENTION_BUDGET_SHARE)
        resolving = BlueskyClient(client.http.within(budget))
        mentions = MentionResolver(
            lambda handle: resolving.resolve_handle(access.service_url, handle),
            max_handles=MAX_RESOLVED_HANDLES,
            budget=budget,
        )
        facets = detect_facets(request.content, mentions)
        if facets:
            record["facets"] = facets
        langs = request.options.langs or ([request.language] if request.language else [])
        if langs:
            record["langs"] = list(langs)
        if request.options.tags:  # the variant's extra hashtags (lexicon ``tags``)
            record["tags"] = list(request.options.tags)
        return record

    def _read_ours(
        self,
        client: BlueskyClient,
        channel: Channel,
        access: BlueskyAccess,
        request: DeliveryRequest,
        rkey: str,
        *,
        now: datetime,
    ) -> DeliveryResult | None:
        """getRecord of ``rkey`` (without a token: a retry after revoked credentials still
        finds a post an earlier attempt wrote): the published result when it holds our post
        (:meth:`_ours`)."""
        account = channel.account
        did = account.did if account and account.did else None
        did = did or self._session(client, channel, access).did
        existing = client.get_record(access.service_url, did, rkey)
        wait = self.budget.note(channel.channel_id, existing, now=now)
        if existing.status == 429:
            raise rate_limited_error(NETWORK, existing, now=now, wait=wait)
        return self._ours(existing, request, did, rkey)

    @staticmethod
    def _ours(
        answer: HttpAnswer, request: DeliveryRequest, did: str, rkey: str
    ) -> DeliveryResult | None:
        """The published result when ``answer`` (a getRecord of ``did``'s ``rkey``) holds our
        post; None when the key is free or holds another record."""
        if answer.status == 400 and xrpc_error(answer) == "RecordNotFound":
            return None
        if answer.status != 200:
            raise RetryableDeliveryError(
                answer_error(answer, "bluesky answered getRecord"), http_status=answer.status
            )
        data = answer.json_object()
        value = data.get("value") if isinstance(data.get("value"), dict) else {}
        assert isinstance(value, dict)
        if value.get("text") != request.content or value.get("createdAt") != created_at(
            request.publish_at
        ):
            return None
        return published_result(did, rkey, data, embedded_cids(value))

    # -- sessions and the common answer handling ------------------------------------------------

    def _session(
        self, client: BlueskyClient, channel: Channel, access: BlueskyAccess
    ) -> BlueskySession:
        session = self.sessions.get(channel)
        if session is not None:
            return session
        try:
            session = client.create_session(access)
        except CredentialsRefusedError as exc:
            raise _ReauthorizeError(f"{exc.kind}: {exc}") from exc
        self.sessions.put(channel, session)
        return session

    def _renew(
        self, client: BlueskyClient, channel: Channel, access: BlueskyAccess, old: BlueskySession
    ) -> None:
        refreshed = client.refresh_session(access.service_url, old)
        self.sessions.put(channel, refreshed)  # None: log in again below

    def _call(
        self,
        client: BlueskyClient,
        channel: Channel,
        access: BlueskyAccess,
        send: Callable[[BlueskySession], HttpAnswer],
        *,
        now: datetime,
    ) -> HttpAnswer:
        """``send`` with the channel's session, renewing it once when the token expired; rate
        limits, 5xx and refused credentials are raised here."""
        for _ in range(3):
            session = self._session(client, channel, access)
            answer = send(session)
            if answer.status in (400, 401) and xrpc_error(answer) in TOKEN_ERRORS:
                self._renew(client, channel, access, session)
                continue
            break
        wait = self.budget.note(channel.channel_id, answer, now=now)
        if answer.status in (401, 403):
            raise _ReauthorizeError(answer_error(answer, "Bluesky refused the session"))
        if answer.status == 429:
            raise rate_limited_error(NETWORK, answer, now=now, wait=wait)
        if answer.status >= 500:
            raise RetryableDeliveryError(
                answer_error(answer, "bluesky answered"), http_status=answer.status
            )
        return answer
