"""Rate-limit headers of both networks, and 429 with and without Retry-After (issue 12)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from pydantic import SecretStr

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.base import DeliveryRequest
from scheduled_posts.platforms.bluesky import BlueskyAccess, BlueskyAdapter, BlueskySession
from scheduled_posts.platforms.http import HttpAnswer
from scheduled_posts.platforms.rate_limits import RateLimitBudget, rate_limit_wait_seconds
from scheduled_posts.platforms.transport import TransportResponse
from scheduled_posts.settings import Settings
from tests.support.transport import ScriptedTransport, SentRequest

NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)


def answer(status: int, **headers: str) -> HttpAnswer:
    return HttpAnswer(
        status=status, headers={k.replace("_", "-"): v for k, v in headers.items()}, body=b""
    )


def test_mastodon_remaining_zero_waits_until_iso_reset() -> None:
    spent = answer(200, X_RateLimit_Remaining="0", X_RateLimit_Reset="2026-12-01T12:05:00.000Z")
    assert rate_limit_wait_seconds(spent, now=NOW) == 300


def test_bluesky_remaining_zero_waits_until_unix_reset() -> None:
    reset = str(int((NOW + timedelta(seconds=90)).timestamp()))
    spent = answer(200, **{"RateLimit-Remaining": "0", "RateLimit-Reset": reset})
    assert rate_limit_wait_seconds(spent, now=NOW) == 90


def test_remaining_budget_does_not_wait() -> None:
    left = answer(200, X_RateLimit_Remaining="5", X_RateLimit_Reset="2026-12-01T12:05:00Z")
    assert rate_limit_wait_seconds(left, now=NOW) is None


def test_429_retry_after_seconds_wins_over_reset() -> None:
    limited = answer(429, Retry_After="30", X_RateLimit_Reset="2026-12-01T12:05:00Z")
    assert rate_limit_wait_seconds(limited, now=NOW) == 30


def test_429_retry_after_http_date() -> None:
    limited = answer(429, Retry_After=format_datetime(NOW + timedelta(seconds=45), usegmt=True))
    assert rate_limit_wait_seconds(limited, now=NOW) == 45


def test_429_without_retry_after_uses_reset() -> None:
    limited = answer(429, X_RateLimit_Reset="2026-12-01T12:01:00Z")
    assert rate_limit_wait_seconds(limited, now=NOW) == 60


def test_429_with_no_hint_leaves_the_wait_to_backoff() -> None:
    assert rate_limit_wait_seconds(answer(429), now=NOW) is None


def test_budget_spent_refuses_until_reset_then_allows() -> None:
    budget = RateLimitBudget()
    budget.note(
        "ch",
        answer(200, X_RateLimit_Remaining="0", X_RateLimit_Reset="2026-12-01T12:02:00Z"),
        now=NOW,
    )
    with pytest.raises(RetryableDeliveryError) as caught:
        budget.check("ch", network="mastodon", now=NOW + timedelta(seconds=20))
    assert caught.value.rate_limited and caught.value.retry_after_seconds == 100
    budget.check("ch", network="mastodon", now=NOW + timedelta(seconds=120))  # reset passed
    budget.check("other", network="mastodon", now=NOW)


class PdsAnswering429(ScriptedTransport):
    """A PDS that answers every putRecord with 429 and the PDS's rate-limit headers."""

    def __init__(self, headers: dict[str, str]) -> None:
        super().__init__()
        self.headers = headers

    def answer(self, request: SentRequest) -> TransportResponse:
        body_out = b'{"error":"RateLimitExceeded","message":"Rate Limit Exceeded"}'
        return TransportResponse(status=429, headers=self.headers, body=body_out)


CHANNEL = Channel(
    channel_id="ch",
    owner="o",
    platform="bluesky",
    name="b",
    url="",
    signing_secret="-",
    created_at=NOW,
)


def bluesky_with(transport: PdsAnswering429) -> BlueskyAdapter:
    adapter = BlueskyAdapter(
        Settings(WEBHOOK_ALLOWED_ORIGINS="http://127.0.0.1"),
        access=lambda _c: BlueskyAccess(
            service_url="http://127.0.0.1:9", handle="a.test", app_password=SecretStr("p")
        ),
        transport=transport,
    )
    adapter.sessions.put(
        CHANNEL,
        BlueskySession(
            did="did:plc:a", handle="a.test", access_jwt=SecretStr("x"), refresh_jwt=SecretStr("y")
        ),
    )
    return adapter


REQUEST = DeliveryRequest(
    schedule_id="s",
    channel_id="ch",
    content="hi",
    publish_at=NOW,
    attempt=1,
    idempotency_key="s:ch",
)


def test_bluesky_429_with_reset_is_rate_limited_and_the_next_delivery_waits_unsent() -> None:
    reset = str(int((NOW + timedelta(seconds=120)).timestamp()))
    transport = PdsAnswering429(
        {"ratelimit-limit": "100", "ratelimit-remaining": "0", "ratelimit-reset": reset}
    )
    adapter = bluesky_with(transport)
    with pytest.raises(RetryableDeliveryError) as caught:
        adapter.deliver(CHANNEL, REQUEST, now=NOW)
    assert (caught.value.http_status, caught.value.rate_limited) == (429, True)
    assert caught.value.retry_after_seconds == 120
    calls = len(transport.requests)
    with pytest.raises(RetryableDeliveryError) as again:
        adapter.deliver(CHANNEL, REQUEST, now=NOW + timedelta(seconds=60))
    assert again.value.rate_limited and again.value.retry_after_seconds == 60
    assert len(transport.requests) == calls  # nothing sent while the budget is spent


def test_bluesky_429_with_retry_after_only() -> None:
    adapter = bluesky_with(PdsAnswering429({"retry-after": "7"}))
    with pytest.raises(RetryableDeliveryError) as caught:
        adapter.deliver(CHANNEL, REQUEST, now=NOW)
    assert caught.value.rate_limited and caught.value.retry_after_seconds == 7
