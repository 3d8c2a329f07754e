"""The network adapters' outbound HTTP: the webhooks' port rules apply to it, and its attempt
errors use the webhooks' words (``http_<status>``, ``timeout``, ``destination_refused``...)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import SecretStr

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.base import DeliveryRequest
from scheduled_posts.platforms.http import DestinationRefusedError, OutboundHttp
from scheduled_posts.platforms.mastodon import MastodonAccess
from scheduled_posts.platforms.mastodon_adapter import MastodonAdapter
from scheduled_posts.platforms.transport import TransportError, TransportResponse
from scheduled_posts.settings import Settings
from tests.support.transport import ScriptedTransport

NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)


def public_resolver(host: str) -> list[str]:
    return ["93.184.216.34"]


def http(settings: Settings, transport: ScriptedTransport) -> OutboundHttp:
    return OutboundHttp.from_settings(settings, transport=transport, resolver=public_resolver)


def test_outbound_http_refused_port_is_refused_before_any_request() -> None:
    # Given the webhooks' refused ports
    transport = ScriptedTransport(TransportResponse(status=200))
    outbound = http(Settings(WEBHOOK_REFUSED_PORTS="8443"), transport)
    # When a network URL uses one (an allowed scheme and a public host otherwise)
    with pytest.raises(DestinationRefusedError) as refused:
        outbound.request("GET", "https://mastodon.example:8443/api/v2/instance")
    # Then nothing is sent, and the error says so with the webhooks' word
    assert transport.requests == []
    assert refused.value.kind == "destination_refused"


def test_outbound_http_port_outside_allowed_ports_is_refused() -> None:
    transport = ScriptedTransport(TransportResponse(status=200))
    with pytest.raises(DestinationRefusedError):
        http(Settings(), transport).request("GET", "https://mastodon.example:8080/x")
    assert transport.requests == []


def test_outbound_http_allowed_port_is_sent() -> None:
    transport = ScriptedTransport(TransportResponse(status=200, body=b"{}"))
    answer = http(Settings(WEBHOOK_ALLOWED_PORTS="8080"), transport).request(
        "GET", "https://mastodon.example:8080/x"
    )
    assert answer.status == 200
    assert [(r.method, r.destination.target) for r in transport.requests] == [("GET", "/x")]


def mastodon(transport: ScriptedTransport) -> MastodonAdapter:
    access = MastodonAccess(
        instance_url="https://mastodon.example",
        access_token=SecretStr("tok"),
        account_id="1",
    )
    return MastodonAdapter(
        Settings(), access=lambda channel: access, transport=transport, resolver=public_resolver
    )


CHANNEL = Channel(
    channel_id="ch",
    owner="alice",
    platform="mastodon",
    name="toots",
    url="https://mastodon.example",
    signing_secret="-",
    created_at=NOW,
)
REQUEST = DeliveryRequest(
    schedule_id="s",
    channel_id="ch",
    content="hello",
    publish_at=NOW,
    attempt=1,
    idempotency_key="s:ch",
)


@pytest.mark.parametrize(
    ("answer", "word"),
    [
        (TransportResponse(status=503, body=b'{"error":"busy"}'), "http_503: "),
        (TransportResponse(status=429, body=b'{"error":"Too many requests"}'), "http_429: "),
        (TransportError("timed out", timeout=True), "timeout: mastodon: "),
        (TransportError("reset", connect_failed=False), "connection_lost: mastodon: "),
    ],
)
def test_mastodon_retryable_errors_start_with_the_webhook_words(
    answer: TransportResponse | TransportError, word: str
) -> None:
    with pytest.raises(RetryableDeliveryError) as raised:
        mastodon(ScriptedTransport(answer)).deliver(CHANNEL, REQUEST, now=NOW)
    assert str(raised.value).startswith(word), str(raised.value)


@pytest.mark.parametrize(
    ("status", "reason"), [(401, "reauthorization_required"), (422, "refused")]
)
def test_mastodon_failed_errors_start_with_http_status(status: int, reason: str) -> None:
    answer = TransportResponse(status=status, body=b'{"error":"nope"}')
    result = mastodon(ScriptedTransport(answer)).deliver(CHANNEL, REQUEST, now=NOW)
    assert (result.outcome, result.reason) == ("failed", reason)
    assert (result.error or "").startswith(f"http_{status}: "), result.error
    assert "nope" in (result.error or "")
