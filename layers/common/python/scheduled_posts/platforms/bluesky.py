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

The ``atproto`` SDK is not used (import cost, and it drops ``None`` fields so ``swapRecord:
null`` cannot be sent): docs/decisions.md N1.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, SecretStr

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.atproto_text import detect_facets, tid
from scheduled_posts.platforms.base import DeliveryRequest, DeliveryResult
from scheduled_posts.platforms.http import (
    CredentialsRefusedError,
    DestinationRefusedError,
    HttpAnswer,
    MethodTransport,
    NetworkAdapter,
    OutboundError,
    OutboundHttp,
    RateLimitBudget,
    answer_error,
    error_message,
    rate_limited_error,
    retryable,
)
from scheduled_posts.platforms.text_length import bluesky_limits
from scheduled_posts.platforms.url_policy import Resolver
from scheduled_posts.platforms.webhook import http_word
from scheduled_posts.settings import Settings

NETWORK = "bluesky"
POST_COLLECTION = "app.bsky.feed.post"
DEFAULT_SERVICE_URL = "https://bsky.social"
#: XRPC ``error`` names that mean "this token is no longer good" (refresh or log in again).
_TOKEN_ERRORS = frozenset({"ExpiredToken", "InvalidToken"})
#: ``createSession`` errors that mean the credentials themselves are refused.
_CREDENTIAL_ERRORS = frozenset(
    {"AuthenticationRequired", "AccountTakedown", "AccountDeactivated", "AuthFactorTokenRequired"}
)


class BlueskyAccess(BaseModel):
    """What a delivery needs: the PDS (``service_url``), the handle and (decrypted) app
    password."""

    model_config = ConfigDict(frozen=True)

    service_url: str = DEFAULT_SERVICE_URL
    handle: str
    app_password: SecretStr


class BlueskySession(BaseModel):
    """A logged-in session: ``did``, ``handle`` and the access and refresh JWTs."""

    model_config = ConfigDict(frozen=True)

    did: str
    handle: str
    access_jwt: SecretStr
    refresh_jwt: SecretStr


class SessionCache(Protocol):
    """Sessions per channel (the worker's stores them sealed on the channel item:
    ``logic/network_accounts.py``)."""

    def get(self, channel: Channel) -> BlueskySession | None:
        """The cached session of ``channel``, or ``None``."""
        ...

    def put(self, channel: Channel, session: BlueskySession | None) -> None:
        """Cache ``session`` for ``channel`` (``None`` forgets it)."""
        ...


class MemorySessionCache:
    """A :class:`SessionCache` in this process's memory, by channel id."""

    def __init__(self) -> None:
        self._sessions: dict[str, BlueskySession] = {}

    def get(self, channel: Channel) -> BlueskySession | None:
        return self._sessions.get(channel.channel_id)

    def put(self, channel: Channel, session: BlueskySession | None) -> None:
        if session is None:
            self._sessions.pop(channel.channel_id, None)
        else:
            self._sessions[channel.channel_id] = session


def _xrpc_error(answer: HttpAnswer) -> str | None:
    value = answer.json_object().get("error")
    return value if isinstance(value, str) else None


def created_at(publish_at: datetime) -> str:
    """``createdAt`` of a post: ``publish_at`` in UTC, ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` (the
    lexicon's ``datetime`` format, RFC 3339)."""
    return publish_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def post_url(did: str, rkey: str) -> str:
    """The public page of a post in Bluesky's app."""
    return f"https://bsky.app/profile/{did}/post/{rkey}"


class BlueskyClient:
    """The XRPC calls, over :class:`OutboundHttp`. Methods raise :class:`OutboundError` when
    no answer came."""

    def __init__(self, http: OutboundHttp) -> None:
        self.http = http

    @staticmethod
    def _url(service_url: str, method: str) -> str:
        return f"{service_url.rstrip('/')}/xrpc/{method}"

    def create_session(self, access: BlueskyAccess) -> BlueskySession:
        """``com.atproto.server.createSession`` with the handle and app password.

        Raises
        ------
        CredentialsRefusedError
            On 401, 400 with a credential error, or a refused ``service_url``.
        OutboundError
            Without an answer, or on 429/5xx/other answers.
        """
        try:
            answer = self.http.request(
                "POST",
                self._url(access.service_url, "com.atproto.server.createSession"),
                json_body={
                    "identifier": access.handle,
                    "password": access.app_password.get_secret_value(),
                },
                secrets=(access.app_password.get_secret_value(),),
            )
        except DestinationRefusedError as exc:
            raise CredentialsRefusedError(f"service_url refused: {exc}") from exc
        return self._session_of(answer, "createSession")

    def refresh_session(self, service_url: str, session: BlueskySession) -> BlueskySession | None:
        """``com.atproto.server.refreshSession``; ``None`` when the refresh token is refused."""
        answer = self.http.request(
            "POST",
            self._url(service_url, "com.atproto.server.refreshSession"),
            headers={"Authorization": f"Bearer {session.refresh_jwt.get_secret_value()}"},
        )
        if answer.status in (400, 401) and (
            answer.status == 401 or _xrpc_error(answer) in _TOKEN_ERRORS
        ):
            return None
        try:
            return self._session_of(answer, "refreshSession")
        except CredentialsRefusedError:
            return None

    @staticmethod
    def _session_of(answer: HttpAnswer, method: str) -> BlueskySession:
        data = answer.json_object()
        if answer.status == 401 or (
            answer.status == 400 and _xrpc_error(answer) in _CREDENTIAL_ERRORS
        ):
            raise CredentialsRefusedError(
                f"Bluesky refused the credentials: {error_message(answer)}",
                kind=http_word(answer.status),
            )
        fields = ("did", "handle", "accessJwt", "refreshJwt")
        if answer.status != 200 or not all(isinstance(data.get(f), str) for f in fields):
            raise OutboundError(
                f"Bluesky answered {answer.status} to {method}: {error_message(answer)}",
                maybe_sent=False,
                kind=http_word(answer.status),
            )
        return BlueskySession(
            did=data["did"],
            handle=data["handle"],
            access_jwt=SecretStr(data["accessJwt"]),
            refresh_jwt=SecretStr(data["refreshJwt"]),
        )

    def resolve_handle(self, service_url: str, handle: str) -> str | None:
        """``com.atproto.identity.resolveHandle``: the DID, or ``None`` when it does not
        resolve (or the PDS cannot answer now: the mention stays plain text)."""
        try:
            answer = self.http.request(
                "GET",
                self._url(service_url, "com.atproto.identity.resolveHandle"),
                query={"handle": handle},
            )
        except OutboundError:
            return None
        did = answer.json_object().get("did") if answer.status == 200 else None
        return did if isinstance(did, str) and did.startswith("did:") else None

    def put_record(
        self, service_url: str, session: BlueskySession, rkey: str, record: dict[str, Any]
    ) -> HttpAnswer:
        """``com.atproto.repo.putRecord`` of ``record`` at ``rkey``, ``swapRecord: null``."""
        return self.http.request(
            "POST",
            self._url(service_url, "com.atproto.repo.putRecord"),
            json_body={
                "repo": session.did,
                "collection": POST_COLLECTION,
                "rkey": rkey,
                "record": record,
                "swapRecord": None,
            },
            headers={"Authorization": f"Bearer {session.access_jwt.get_secret_value()}"},
        )

    def get_record(self, service_url: str, did: str, rkey: str) -> HttpAnswer:
        """``com.atproto.repo.getRecord`` of ``rkey`` in ``did``'s posts: a public read (no
        token: https://docs.bsky.app/docs/api/com-atproto-repo-get-record), so it answers
        even once the credentials are revoked."""
        return self.http.request(
            "GET",
            self._url(service_url, "com.atproto.repo.getRecord"),
            query={"repo": did, "collection": POST_COLLECTION, "rkey": rkey},
        )


AccessLoader = Callable[[Channel], BlueskyAccess]


class _ReauthorizeError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)


class BlueskyAdapter(NetworkAdapter):
    """:class:`~scheduled_posts.platforms.base.PlatformAdapter` for ``bluesky`` channels.

    Parameters
    ----------
    settings
        ``OUTBOUND_ALLOWED_ORIGINS`` and ``DELIVERY_TIMEOUT_SECONDS`` are used.
    access
        ``channel -> BlueskyAccess`` (decrypts the channel's credentials).
    sessions
        The session cache (default: in memory).
    transport, resolver, budget
        Injectable for tests.
    """

    platform = NETWORK

    def __init__(
        self,
        settings: Settings,
        *,
        access: AccessLoader,
        sessions: SessionCache | None = None,
        transport: MethodTransport | None = None,
        resolver: Resolver | None = None,
        budget: RateLimitBudget | None = None,
    ) -> None:
        super().__init__(settings, transport=transport, resolver=resolver, budget=budget)
        self.client = BlueskyClient(self.http)
        self.access = access
        self.sessions: SessionCache = sessions or MemorySessionCache()

    def deliver(
        self, channel: Channel, request: DeliveryRequest, *, now: datetime
    ) -> DeliveryResult:
        """Write ``request`` as a post of ``channel``'s account (outcomes: module docstring).

        Raises
        ------
        RetryableDeliveryError
            On 429 or a spent budget (``rate_limited=True``), 5xx, timeouts, connection errors.
        """
        stop = self.gate(channel, now=now) or self.too_long(channel, request, bluesky_limits())
        if stop is not None:
            return stop
        access = self.access(channel)
        rkey = tid(
            request.publish_at, schedule_id=request.schedule_id, channel_id=channel.channel_id
        )
        try:
            return self._deliver(channel, access, request, rkey, now=now)
        except _ReauthorizeError as exc:
            self.sessions.put(channel, None)  # a later delivery logs in again
            return DeliveryResult(
                outcome="failed", reason="reauthorization_required", error=str(exc)
            )
        except DestinationRefusedError as exc:
            return DeliveryResult(outcome="failed", error=f"{exc.kind}: {exc}")
        except OutboundError as exc:
            raise retryable(NETWORK, exc) from exc

    def _deliver(
        self,
        channel: Channel,
        access: BlueskyAccess,
        request: DeliveryRequest,
        rkey: str,
        *,
        now: datetime,
    ) -> DeliveryResult:
        if request.first_attempt_at is not None:
            found = self._read_ours(channel, access, request, rkey, now=now)
            if found is not None:
                return found
        session = self._session(channel, access)
        record = self._record(access, request)
        answer = self._call(
            channel,
            access,
            lambda s: self.client.put_record(access.service_url, s, rkey, record),
            now=now,
        )
        if answer.status == 200:
            return self._published(answer, session.did, rkey)
        if answer.status == 400 and _xrpc_error(answer) == "InvalidSwap":
            found = self._read_ours(channel, access, request, rkey, now=now)
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

    def _record(self, access: BlueskyAccess, request: DeliveryRequest) -> dict[str, Any]:
        record: dict[str, Any] = {
            "$type": POST_COLLECTION,
            "text": request.content,
            "createdAt": created_at(request.publish_at),
        }
        facets = detect_facets(
            request.content, lambda handle: self.client.resolve_handle(access.service_url, handle)
        )
        if facets:
            record["facets"] = facets
        if request.language:
            record["langs"] = [request.language]
        return record

    def _read_ours(
        self,
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
        did = account.did if account and account.did else self._session(channel, access).did
        existing = self.client.get_record(access.service_url, did, rkey)
        wait = self.budget.note(channel.channel_id, existing, now=now)
        if existing.status == 429:
            raise rate_limited_error(NETWORK, existing, now=now, wait=wait)
        return self._ours(existing, request)

    def _ours(self, answer: HttpAnswer, request: DeliveryRequest) -> DeliveryResult | None:
        """The published result when ``answer`` (a getRecord) holds our post; None when the
        key is free or holds another record."""
        if answer.status == 400 and _xrpc_error(answer) == "RecordNotFound":
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
        uri = str(data.get("uri") or "")
        did, _, rkey = uri.removeprefix("at://").partition(f"/{POST_COLLECTION}/")
        return DeliveryResult(
            outcome="published", http_status=200, remote_id=uri, remote_url=post_url(did, rkey)
        )

    @staticmethod
    def _published(answer: HttpAnswer, did: str, rkey: str) -> DeliveryResult:
        uri = answer.json_object().get("uri")
        return DeliveryResult(
            outcome="published",
            http_status=200,
            remote_id=str(uri or f"at://{did}/{POST_COLLECTION}/{rkey}"),
            remote_url=post_url(did, rkey),
        )

    # -- sessions and the common answer handling ------------------------------------------------

    def _session(self, channel: Channel, access: BlueskyAccess) -> BlueskySession:
        session = self.sessions.get(channel)
        if session is not None:
            return session
        try:
            session = self.client.create_session(access)
        except CredentialsRefusedError as exc:
            raise _ReauthorizeError(f"{exc.kind}: {exc}") from exc
        self.sessions.put(channel, session)
        return session

    def _renew(self, channel: Channel, access: BlueskyAccess, old: BlueskySession) -> None:
        refreshed = self.client.refresh_session(access.service_url, old)
        self.sessions.put(channel, refreshed)  # None: log in again below

    def _call(
        self,
        channel: Channel,
        access: BlueskyAccess,
        send: Callable[[BlueskySession], HttpAnswer],
        *,
        now: datetime,
    ) -> HttpAnswer:
        """``send`` with the channel's session, renewing it once when the token expired; rate
        limits, 5xx and refused credentials are raised here."""
        for _ in range(3):
            session = self._session(channel, access)
            answer = send(session)
            if answer.status in (400, 401) and _xrpc_error(answer) in _TOKEN_ERRORS:
                self._renew(channel, access, session)
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
