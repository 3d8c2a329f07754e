"""The Bluesky adapter against the reference PDS (``@atproto/pds``, started by local/bluesky.py on
127.0.0.1): putRecord with a deterministic TID and ``swapRecord: null``, getRecord after a lost
answer, InvalidSwap, facets, sessions, refused credentials (issue 12)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import SecretStr

from local.bluesky import LocalPds, PdsAccount, revoke_app_password
from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.models.network import ChannelAccount
from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.atproto_text import tid
from scheduled_posts.platforms.base import DeliveryRequest
from scheduled_posts.platforms.bluesky import (
    BlueskyAccess,
    BlueskyAdapter,
    BlueskyClient,
    BlueskySession,
    MemorySessionCache,
)
from scheduled_posts.platforms.http import CredentialsRefusedError, OutboundHttp
from scheduled_posts.platforms.transport import TransportError, TransportResponse, Urllib3Transport
from scheduled_posts.settings import Settings
from tests.support.transport import ScriptedTransport, SentRequest

PUBLISH_AT = datetime(2026, 12, 1, 9, 0, 0, 250000, tzinfo=UTC)


class LosingTransport(ScriptedTransport):
    """Sends for real; while ``lose`` > 0, drops the answer of a ``putRecord`` (a timeout)."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = Urllib3Transport()
        self.lose = 0

    def answer(self, request: SentRequest) -> TransportResponse:
        answer = request.forward(self.inner)
        if self.lose and request.destination.target.endswith("com.atproto.repo.putRecord"):
            self.lose -= 1
            raise TransportError("timed out: the answer was lost", timeout=True)
        return answer


@pytest.fixture
def pds(local_pds: LocalPds) -> LocalPds:
    return local_pds


@pytest.fixture
def account(pds: LocalPds, request: pytest.FixtureRequest) -> PdsAccount:
    name = "u" + request.node.name.removeprefix("test_bluesky_")[:12].replace("_", "-").strip("-")
    return pds.create_account(name.rstrip("-"))


@pytest.fixture
def transport() -> LosingTransport:
    return LosingTransport()


def channel() -> Channel:
    return Channel(
        channel_id="ch_b",
        owner="owner-1",
        platform="bluesky",
        name="skeets",
        url="",
        signing_secret="unused",
        created_at=PUBLISH_AT - timedelta(days=1),
    )


def make_adapter(
    pds: LocalPds,
    account: PdsAccount,
    transport: LosingTransport,
    *,
    password: str | None = None,
    sessions: MemorySessionCache | None = None,
) -> BlueskyAdapter:
    access = BlueskyAccess(
        service_url=pds.url,
        handle=account.handle,
        app_password=SecretStr(password or account.app_password),
    )
    return BlueskyAdapter(
        Settings(WEBHOOK_ALLOWED_ORIGINS="http://127.0.0.1", DELIVERY_TIMEOUT_SECONDS=20),
        access=lambda _channel: access,
        transport=transport,
        sessions=sessions,
    )


def make_request(content: str, *, retry: bool = False) -> DeliveryRequest:
    return DeliveryRequest(
        schedule_id="sch_1",
        channel_id="ch_b",
        content=content,
        publish_at=PUBLISH_AT,
        attempt=2 if retry else 1,
        idempotency_key="sch_1:ch_b",
        first_attempt_at=PUBLISH_AT if retry else None,
        language="en" if not retry else None,
    )


def posts_on_pds(pds: LocalPds, account: PdsAccount) -> list[dict[str, Any]]:
    client = BlueskyClient(OutboundHttp(allowed_origins=["http://127.0.0.1"], timeout_seconds=20))
    answer = client.http.request(
        "GET",
        f"{pds.url}/xrpc/com.atproto.repo.listRecords",
        query={"repo": account.did, "collection": "app.bsky.feed.post"},
    )
    assert answer.status == 200, answer.body
    return list(answer.json_object()["records"])


def rkey() -> str:
    return tid(PUBLISH_AT, schedule_id="sch_1", channel_id="ch_b")


def test_bluesky_publish_writes_one_post_at_the_deterministic_key_with_facets(
    pds: LocalPds, account: PdsAccount, transport: LosingTransport
) -> None:
    text = f"Hi @{account.handle} see https://example.com/é #launch"
    result = make_adapter(pds, account, transport).deliver(
        channel(), make_request(text), now=PUBLISH_AT
    )
    [post] = posts_on_pds(pds, account)
    assert result.outcome == "published"
    assert result.remote_id == f"at://{account.did}/app.bsky.feed.post/{rkey()}" == post["uri"]
    assert result.remote_url == f"https://bsky.app/profile/{account.did}/post/{rkey()}"
    value = post["value"]
    assert (value["text"], value["createdAt"], value["langs"]) == (
        text,
        "2026-12-01T09:00:00.250000Z",
        ["en"],
    )
    raw = text.encode()
    spans = {
        f["features"][0]["$type"].split("#")[1]: raw[
            f["index"]["byteStart"] : f["index"]["byteEnd"]
        ].decode()
        for f in value["facets"]
    }
    assert spans == {
        "mention": f"@{account.handle}",
        "link": "https://example.com/é",
        "tag": "#launch",
    }
    assert value["facets"][0]["features"][0]["did"] == account.did


def test_bluesky_lost_answer_then_retry_confirms_with_get_record_and_posts_once(
    pds: LocalPds, account: PdsAccount, transport: LosingTransport
) -> None:
    adapter = make_adapter(pds, account, transport)
    transport.lose = 1
    with pytest.raises(RetryableDeliveryError, match="answer was lost"):
        adapter.deliver(channel(), make_request("exactly once"), now=PUBLISH_AT)
    transport.requests.clear()
    result = adapter.deliver(channel(), make_request("exactly once", retry=True), now=PUBLISH_AT)
    assert result.outcome == "published"
    assert transport.paths == ["/xrpc/com.atproto.repo.getRecord"]  # confirmed, not written
    assert len(posts_on_pds(pds, account)) == 1


def test_bluesky_revoked_after_a_lost_answer_retry_still_confirms(
    pds: LocalPds, account: PdsAccount, transport: LosingTransport
) -> None:
    # Given a channel whose first write reached the PDS but whose answer was lost
    ours = channel().model_copy(
        update={"account": ChannelAccount(did=account.did, handle=account.handle)}
    )
    sessions = MemorySessionCache()
    adapter = make_adapter(pds, account, transport, sessions=sessions)
    transport.lose = 1
    with pytest.raises(RetryableDeliveryError):
        adapter.deliver(ours, make_request("written, then revoked"), now=PUBLISH_AT)
    # When the creator revokes the app password and the session is gone before the retry
    revoke_app_password(pds.url, account)
    sessions.put(ours, None)
    transport.requests.clear()
    result = adapter.deliver(
        ours, make_request("written, then revoked", retry=True), now=PUBLISH_AT
    )
    # Then the public getRecord confirms the post: published once, no login attempted
    assert result.outcome == "published", result
    assert transport.paths == ["/xrpc/com.atproto.repo.getRecord"]
    assert len(posts_on_pds(pds, account)) == 1


def test_bluesky_revoked_app_password_with_nothing_written_is_reauthorization_required(
    pds: LocalPds, account: PdsAccount, transport: LosingTransport
) -> None:
    ours = channel().model_copy(
        update={"account": ChannelAccount(did=account.did, handle=account.handle)}
    )
    revoke_app_password(pds.url, account)
    result = make_adapter(pds, account, transport).deliver(
        ours, make_request("never written", retry=True), now=PUBLISH_AT
    )
    assert (result.outcome, result.reason) == ("failed", "reauthorization_required")
    assert (result.error or "").startswith("http_401: "), result.error
    assert posts_on_pds(pds, account) == []


def test_bluesky_repeat_of_the_same_record_is_a_no_op(
    pds: LocalPds, account: PdsAccount, transport: LosingTransport
) -> None:
    adapter = make_adapter(pds, account, transport)
    first = adapter.deliver(channel(), make_request("twice"), now=PUBLISH_AT)
    second = adapter.deliver(channel(), make_request("twice"), now=PUBLISH_AT)
    assert first.outcome == second.outcome == "published"
    assert first.remote_id == second.remote_id
    assert len(posts_on_pds(pds, account)) == 1


def test_bluesky_other_record_at_the_key_fails_with_invalid_swap(
    pds: LocalPds, account: PdsAccount, transport: LosingTransport
) -> None:
    adapter = make_adapter(pds, account, transport)
    adapter.deliver(channel(), make_request("someone else's text"), now=PUBLISH_AT)
    result = adapter.deliver(channel(), make_request("our text"), now=PUBLISH_AT)
    assert (result.outcome, result.reason) == ("failed", "refused")
    assert "InvalidSwap" in (result.error or "")
    [post] = posts_on_pds(pds, account)
    assert post["value"]["text"] == "someone else's text"


def test_bluesky_wrong_app_password_fails_with_reauthorization_required(
    pds: LocalPds, account: PdsAccount, transport: LosingTransport
) -> None:
    adapter = make_adapter(pds, account, transport, password="abcd-efgh-ijkl-mnop")
    result = adapter.deliver(channel(), make_request("never"), now=PUBLISH_AT)
    assert (result.outcome, result.reason) == ("failed", "reauthorization_required")
    assert "abcd-efgh" not in (result.error or "")
    assert posts_on_pds(pds, account) == []


def test_bluesky_create_session_refused_quotes_the_pds(pds: LocalPds, account: PdsAccount) -> None:
    client = BlueskyClient(OutboundHttp(allowed_origins=["http://127.0.0.1"], timeout_seconds=20))
    access = BlueskyAccess(
        service_url=pds.url, handle=account.handle, app_password=SecretStr("wrong-wrong-wrong")
    )
    with pytest.raises(CredentialsRefusedError, match="Invalid identifier or password"):
        client.create_session(access)


def test_bluesky_invalid_access_token_is_refreshed_and_the_post_written(
    pds: LocalPds, account: PdsAccount, transport: LosingTransport
) -> None:
    sessions = MemorySessionCache()
    adapter = make_adapter(pds, account, transport, sessions=sessions)
    good = adapter.client.create_session(
        BlueskyAccess(
            service_url=pds.url, handle=account.handle, app_password=SecretStr(account.app_password)
        )
    )
    sessions.put(channel(), good.model_copy(update={"access_jwt": SecretStr("not-a-jwt")}))
    result = adapter.deliver(channel(), make_request("after refresh"), now=PUBLISH_AT)
    assert result.outcome == "published"
    renewed = sessions.get(channel())
    assert isinstance(renewed, BlueskySession)
    assert renewed.access_jwt.get_secret_value() != "not-a-jwt"
    assert len(posts_on_pds(pds, account)) == 1


def test_bluesky_301_graphemes_fail_before_any_request(
    pds: LocalPds, account: PdsAccount, transport: LosingTransport
) -> None:
    result = make_adapter(pds, account, transport).deliver(
        channel(), make_request("e\u0301" * 301), now=PUBLISH_AT
    )
    assert (result.outcome, result.reason) == ("failed", "too_long")
    assert transport.paths == []


def test_bluesky_pds_enforces_the_same_grapheme_limit(pds: LocalPds, account: PdsAccount) -> None:
    # The rule we check locally is the PDS's own: it refuses 301 graphemes (400).
    client = BlueskyClient(OutboundHttp(allowed_origins=["http://127.0.0.1"], timeout_seconds=20))
    session = client.create_session(
        BlueskyAccess(
            service_url=pds.url, handle=account.handle, app_password=SecretStr(account.app_password)
        )
    )
    record = {
        "$type": "app.bsky.feed.post",
        "text": "e\u0301" * 301,
        "createdAt": "2026-12-01T09:00:00Z",
    }
    answer = client.put_record(pds.url, session, rkey(), record)
    assert answer.status == 400
    assert "grapheme" in json.loads(answer.body)["message"]


def test_bluesky_refused_refresh_logs_in_again_and_writes_the_post(
    pds: LocalPds, account: PdsAccount, transport: LosingTransport
) -> None:
    sessions = MemorySessionCache()
    adapter = make_adapter(pds, account, transport, sessions=sessions)
    stale = BlueskySession(
        did=account.did,
        handle=account.handle,
        access_jwt=SecretStr("expired-access"),
        refresh_jwt=SecretStr("revoked-refresh"),
    )
    sessions.put(channel(), stale)
    result = adapter.deliver(channel(), make_request("after login"), now=PUBLISH_AT)
    assert result.outcome == "published"
    assert "/xrpc/com.atproto.server.refreshSession" in transport.paths
    assert "/xrpc/com.atproto.server.createSession" in transport.paths
    renewed = sessions.get(channel())
    assert renewed is not None and renewed.refresh_jwt.get_secret_value() != "revoked-refresh"
    assert len(posts_on_pds(pds, account)) == 1
