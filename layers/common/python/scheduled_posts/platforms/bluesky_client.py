"""The Bluesky XRPC calls the adapter (``platforms/bluesky.py``) and the credential check make,
over :class:`~scheduled_posts.platforms.http.OutboundHttp`, and the session they share
(https://docs.bsky.app/docs/api/).

What a PDS answers is checked before it is kept (decision "Network answers are bounded before
they are stored"): a session's ``did`` is a DID of at most 2,048 characters
(https://atproto.com/specs/did: "DIDs are limited to 2 KB"), its ``handle`` at most 253
(https://atproto.com/specs/handle), each JWT at most 16,384 characters; a session answer
outside those bounds is nonsense (:class:`OutboundError`), never stored.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, SecretStr

from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.http import (
    CredentialsRefusedError,
    DestinationRefusedError,
    HttpAnswer,
    OutboundError,
    OutboundHttp,
)
from scheduled_posts.platforms.network_adapter import error_message
from scheduled_posts.platforms.transport import http_word

POST_COLLECTION = "app.bsky.feed.post"
DEFAULT_SERVICE_URL = "https://bsky.social"
#: XRPC ``error`` names that mean "this token is no longer good" (refresh or log in again).
TOKEN_ERRORS = frozenset({"ExpiredToken", "InvalidToken"})
#: ``createSession`` errors that mean the credentials themselves are refused.
CREDENTIAL_ERRORS = frozenset(
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


def xrpc_error(answer: HttpAnswer) -> str | None:
    """The XRPC ``error`` name of an answer, or ``None``."""
    value = answer.json_object().get("error")
    return value if isinstance(value, str) else None


#: Longest field of a session answer kept (module docstring): DID, handle, each JWT.
_SESSION_FIELD_CHARS = {"did": 2048, "handle": 253, "accessJwt": 16_384, "refreshJwt": 16_384}


def _session_fields_ok(data: dict[str, Any]) -> bool:
    for name, longest in _SESSION_FIELD_CHARS.items():
        value = data.get(name)
        if not isinstance(value, str) or not 0 < len(value) <= longest:
            return False
    return is_did(data["did"])


def is_did(value: object) -> bool:
    """Whether ``value`` looks like a DID: ``did:<method>:<id>``, printable ASCII without
    spaces, at most 2,048 characters (https://atproto.com/specs/did)."""
    return (
        isinstance(value, str)
        and value.startswith("did:")
        and len(value) <= _SESSION_FIELD_CHARS["did"]
        and value.isascii()
        and value.isprintable()
        and " " not in value
    )


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
            answer.status == 401 or xrpc_error(answer) in TOKEN_ERRORS
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
            answer.status == 400 and xrpc_error(answer) in CREDENTIAL_ERRORS
        ):
            raise CredentialsRefusedError(
                f"Bluesky refused the credentials: {error_message(answer)}",
                kind=http_word(answer.status),
            )
        if answer.status != 200 or not _session_fields_ok(data):
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
        return did if is_did(did) else None

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

    def upload_blob(
        self, service_url: str, session: BlueskySession, data: bytes, content_type: str
    ) -> HttpAnswer:
        """``com.atproto.repo.uploadBlob`` of ``data`` (the body is the bytes, ``Content-Type``
        the probed type: https://docs.bsky.app/docs/api/com-atproto-repo-upload-blob). The
        answer's ``blob`` is the blob ref to embed; the same bytes give the same CID."""
        return self.http.request(
            "POST",
            self._url(service_url, "com.atproto.repo.uploadBlob"),
            data=data,
            headers={
                "Content-Type": content_type,
                "Authorization": f"Bearer {session.access_jwt.get_secret_value()}",
            },
        )
