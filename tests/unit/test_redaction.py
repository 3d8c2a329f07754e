"""Credentials a network echoes in its error never reach a quoted message (decision: a
network's echo of a credential is redacted): the secret the request carried, and anything
shaped like a bearer token, a JWT or an app password."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime

import pytest
from pydantic import SecretStr

from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.base import DeliveryRequest
from scheduled_posts.platforms.bluesky import BlueskyAccess, BlueskyAdapter, BlueskyClient
from scheduled_posts.platforms.http import CredentialsRefusedError, OutboundHttp
from scheduled_posts.platforms.network_adapter import error_message
from scheduled_posts.platforms.redaction import REDACTED, redact
from scheduled_posts.platforms.transport import TransportResponse
from scheduled_posts.settings import Settings
from tests.support.transport import AnsweringTransport, SentRequest

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
PASSWORD = "correct horse battery staple"  # an account password, not app-password shaped


class Echo(AnsweringTransport):
    """A network that answers every request with ``status`` and an error quoting what it was
    sent: the ``Authorization`` header and the body."""

    def __init__(self, status: int, *, ok_paths: Mapping[str, dict[str, object]] = {}) -> None:
        self.status = status
        self.ok_paths = ok_paths

    def answer(self, request: SentRequest) -> TransportResponse:
        if request.path in self.ok_paths:
            return TransportResponse(
                status=200, body=json.dumps(self.ok_paths[request.path]).encode()
            )
        auth = next((v for k, v in request.headers.items() if k.lower() == "authorization"), "")
        echo = {"error": f"invalid token: {auth}", "message": f"you sent {request.body.decode()}"}
        return TransportResponse(status=self.status, body=json.dumps(echo).encode())


def outbound(transport: Echo) -> OutboundHttp:
    return OutboundHttp(
        allowed_origins=["https://pds.example"],
        timeout_seconds=5,
        transport=transport,
        resolver=lambda host: ["93.184.216.34"],
    )


def test_redact_replaces_secrets_and_credential_shapes() -> None:
    text = (
        "bad Bearer tok.en-1_~+/= and my-own-secret-value, app password abcd-efgh-ijkl-mnop, "
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkaWQifQ.c2ln"
    )
    assert redact(text, ["my-own-secret-value"]) == (
        f"bad Bearer {REDACTED} and {REDACTED}, app password {REDACTED}, jwt {REDACTED}"
    )
    assert redact("The access token is invalid") == "The access token is invalid"


def test_error_message_redacts_the_authorization_credential_that_was_sent() -> None:
    # Given a network that echoes the Authorization header in its error
    http = outbound(Echo(401))
    # When its answer is quoted
    answer = http.request(
        "GET", "https://pds.example/x", headers={"Authorization": "Token sekrit-token-77"}
    )
    quoted = error_message(answer)
    # Then the credential is gone, by value, whatever its scheme
    assert "sekrit-token-77" not in quoted
    assert REDACTED in quoted


def test_bluesky_create_session_refusal_echoing_the_password_is_redacted() -> None:
    # Given a PDS that quotes the password it was sent in its 401
    client = BlueskyClient(outbound(Echo(401)))
    access = BlueskyAccess(
        service_url="https://pds.example", handle="alice.test", app_password=SecretStr(PASSWORD)
    )
    # When the credentials are checked
    with pytest.raises(CredentialsRefusedError) as caught:
        client.create_session(access)
    # Then the refusal quotes the PDS without the password
    assert PASSWORD not in str(caught.value)
    assert REDACTED in str(caught.value)


def test_bluesky_put_record_error_echoing_the_access_jwt_is_redacted() -> None:
    # Given a PDS that logs in, then refuses the record quoting the session's bearer token
    jwt = "eyJhbGciOiJFUzI1NksifQ.eyJzY29wZSI6ImFjY2VzcyJ9.c2lnbmF0dXJl"
    session = {"did": "did:plc:a", "handle": "a.test", "accessJwt": jwt, "refreshJwt": "r" * 40}
    transport = Echo(400, ok_paths={"/xrpc/com.atproto.server.createSession": session})
    adapter = BlueskyAdapter(
        Settings(OUTBOUND_ALLOWED_ORIGINS="https://pds.example"),
        access=lambda _channel: BlueskyAccess(
            service_url="https://pds.example", handle="a.test", app_password=SecretStr(PASSWORD)
        ),
        transport=transport,
        resolver=lambda host: ["93.184.216.34"],
    )
    channel = Channel(
        channel_id="ch",
        owner="o",
        platform="bluesky",
        name="sky",
        url="https://pds.example",
        signing_secret="-",
        created_at=NOW,
    )
    request = DeliveryRequest(
        schedule_id="s", channel_id="ch", content="hi", publish_at=NOW, attempt=1,
        idempotency_key="s:ch",
    )  # fmt: skip
    # When the post is delivered
    result = adapter.deliver(channel, request, now=NOW)
    # Then the refusal's quote holds neither the JWT nor the password
    assert result.outcome == "failed"
    assert jwt not in (result.error or "") and PASSWORD not in (result.error or "")
    assert REDACTED in (result.error or "")
