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

Media (``DeliveryRequest.media``): uploaded (``uploadBlob``) before each attempt's
``putRecord`` and embedded (``platforms/bluesky_media.py``; without media, the frozen link card:
``bluesky_card.py``); a refused upload (413, 400) fails the delivery, 5xx and timeouts retry.

Threads (``platforms/thread.py``): part ``i`` is written at the TID of ``publish_at`` plus
``i`` microseconds, with ``reply.root`` part 1's and ``reply.parent`` part ``i - 1``'s strongRef
(``uri`` and ``cid``, from ``putRecord``'s answer or, after a lost answer, ``getRecord``).

XRPC calls and sessions: ``platforms/bluesky_client.py``. No ``atproto`` SDK (import cost; it
drops ``None`` fields, so ``swapRecord: null`` cannot be sent): decision "Raw HTTP adapters, no
client SDKs".
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Unpack

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.atproto_text import tid
from scheduled_posts.platforms.base import (
    DeliveryRequest,
    DeliveryResult,
    PartRef,
    ThreadProgress,
)
from scheduled_posts.platforms.bluesky_answer import ours, published_result, reply_ref
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
    media_violation,
    read_checked,
    upload_blobs,
)
from scheduled_posts.platforms.bluesky_record import (
    MAX_RESOLVED_HANDLES,
    MENTION_BUDGET_SHARE,
    build_record,
)
from scheduled_posts.platforms.http import (
    CredentialsRefusedError,
    DestinationRefusedError,
    HttpAnswer,
    OutboundError,
)
from scheduled_posts.platforms.network_adapter import (
    AdapterParts,
    NetworkAdapter,
    answer_error,
    rate_limited_error,
    retryable,
)
from scheduled_posts.platforms.text_length import bluesky_limits
from scheduled_posts.platforms.thread import deliver_refused, deliver_thread, refused_part
from scheduled_posts.settings import Settings

__all__ = [
    "DEFAULT_SERVICE_URL",
    "MAX_RESOLVED_HANDLES",
    "MENTION_BUDGET_SHARE",
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
    thread_parts
        The store of a thread's published parts (``ThreadProgress``; None: every retry reads
        the parts back by their record keys).
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
        thread_parts: ThreadProgress | None = None,
        **parts: Unpack[AdapterParts],
    ) -> None:
        super().__init__(settings, **parts)
        self.client = BlueskyClient(self.http)
        self.access = access
        self.sessions: SessionCache = sessions or MemorySessionCache()
        self.thread_parts = thread_parts

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
        refused = self.gate(channel, now=now)
        if refused is not None:  # parts an earlier round published are still listed
            return deliver_refused(request, refused, progress=self.thread_parts, now=now)
        stop = refused_part(request, lambda part: self._refused(channel, part))
        if stop is not None:
            return stop
        access = self.access(channel)
        client = BlueskyClient(self.attempt_http())  # every request within one deadline

        def write(
            index: int, part: DeliveryRequest, root: PartRef | None, parent: PartRef | None
        ) -> tuple[DeliveryResult, PartRef | None]:
            reply = reply_ref(root, parent)
            result = self._write(client, channel, access, part, index=index, reply=reply, now=now)
            cid = result.receipt.cid if result.receipt else None
            if result.outcome != "published" or not result.remote_id or not cid:
                return result, None
            ref = PartRef(
                remote_id=result.remote_id,
                remote_url=result.remote_url,
                cid=cid,
                receipt=result.receipt,
            )
            return result, ref

        return deliver_thread(request, write, progress=self.thread_parts, now=now)

    def _refused(self, channel: Channel, part: DeliveryRequest) -> DeliveryResult | None:
        """A part's length or media refusal (``None``: it may be sent)."""
        stop = self.too_long(channel, part, bluesky_limits())
        if stop is not None:
            return stop
        violation = media_violation(part)
        if violation is not None:
            return DeliveryResult(outcome="failed", reason="refused", error=violation)
        return None

    def _write(
        self,
        client: BlueskyClient,
        channel: Channel,
        access: BlueskyAccess,
        request: DeliveryRequest,
        *,
        index: int,
        reply: dict[str, Any] | None,
        now: datetime,
    ) -> DeliveryResult:
        """One part at its record key (the TID scheme extended by the part ``index``), as a
        reply when ``reply`` is given; refusals become failed results."""
        rkey = tid(
            request.publish_at,
            schedule_id=request.schedule_id,
            channel_id=channel.channel_id,
            part=index,
        )
        try:
            return self._deliver(client, channel, access, request, rkey, reply=reply, now=now)
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
        reply: dict[str, Any] | None,
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
        record = build_record(client, access, request)
        if reply is not None:
            record["reply"] = reply
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
        (``bluesky_answer.ours``)."""
        account = channel.account
        did = account.did if account and account.did else None
        did = did or self._session(client, channel, access).did
        existing = client.get_record(access.service_url, did, rkey)
        wait = self.budget.note(channel.channel_id, existing, now=now)
        if existing.status == 429:
            raise rate_limited_error(NETWORK, existing, now=now, wait=wait)
        return ours(existing, request, did, rkey)

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
