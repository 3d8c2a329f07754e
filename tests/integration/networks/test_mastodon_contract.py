"""The Mastodon adapter against the Mastodon API stand-in (local/mastodon.py) over loopback HTTP:
exactly once with the Idempotency-Key and, after the key's hour, the recent-statuses check;
rate limits; refused credentials; refused content (issue 12)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import SecretStr

from local.mastodon import Account, MastodonStandIn
from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.models.network import ChannelLimits
from scheduled_posts.models.post import Channel
from scheduled_posts.models.variants import NetworkOptions
from scheduled_posts.platforms.base import DeliveryRequest, DeliveryResult
from scheduled_posts.platforms.http import CredentialsRefusedError, OutboundHttp
from scheduled_posts.platforms.mastodon import MastodonAccess, MastodonClient
from scheduled_posts.platforms.mastodon_adapter import MastodonAdapter
from scheduled_posts.platforms.text_length import mastodon_limits
from scheduled_posts.settings import Settings

PUBLISH_AT = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


class Clock:
    def __init__(self, now: datetime) -> None:
        self.instant = now

    def __call__(self) -> datetime:
        return self.instant


@pytest.fixture
def clock() -> Clock:
    return Clock(PUBLISH_AT)


@pytest.fixture
def stand_in(clock: Clock) -> Iterator[tuple[MastodonStandIn, str]]:
    server_state = MastodonStandIn(clock=clock)
    with server_state.serving() as base:
        yield server_state, base


@pytest.fixture
def account(stand_in: tuple[MastodonStandIn, str]) -> Account:
    return stand_in[0].add_account("alice")


def settings() -> Settings:
    return Settings(WEBHOOK_ALLOWED_ORIGINS="http://127.0.0.1", DELIVERY_TIMEOUT_SECONDS=5)


def channel() -> Channel:
    return Channel(
        channel_id="ch_m",
        owner="owner-1",
        platform="mastodon",
        name="toots",
        url="",
        signing_secret="unused",
        created_at=PUBLISH_AT - timedelta(days=1),
    )


def adapter(base: str, account: Account, limits: ChannelLimits | None = None) -> MastodonAdapter:
    access = MastodonAccess(
        instance_url=base,
        access_token=SecretStr(account.token),
        account_id=account.id,
        limits=limits or mastodon_limits(),
    )
    return MastodonAdapter(settings(), access=lambda _channel: access)


def request(content: str = "Hello fediverse", *, first_attempt_at: datetime | None = None):
    return DeliveryRequest(
        schedule_id="sch_1",
        channel_id="ch_m",
        content=content,
        publish_at=PUBLISH_AT,
        attempt=1 if first_attempt_at is None else 2,
        idempotency_key="sch_1:ch_m",
        first_attempt_at=first_attempt_at,
    )


def failed_then_retried(
    subject: MastodonAdapter,
    clock: Clock,
    *,
    wait: timedelta = timedelta(0),
    content: str = "Hello fediverse",
    before_retry: Callable[[], None] = lambda: None,
    match: str | None = None,
) -> DeliveryResult:
    """A first attempt that fails retryably (as the test set the stand-in up), then, ``wait``
    later and after ``before_retry``, the retry of that delivery (first attempt at
    :data:`PUBLISH_AT`); the retry's result. ``match``: what the first failure must say."""
    with pytest.raises(RetryableDeliveryError, match=match):
        subject.deliver(channel(), request(content), now=clock())
    before_retry()
    clock.instant += wait
    return subject.deliver(channel(), request(content, first_attempt_at=PUBLISH_AT), now=clock())


def test_mastodon_verify_returns_account_and_instance_limits(
    stand_in: tuple[MastodonStandIn, str], account: Account
) -> None:
    state, base = stand_in
    state.max_characters, state.characters_reserved_per_url = 1000, 30
    client = MastodonClient(OutboundHttp(allowed_origins=["http://127.0.0.1"], timeout_seconds=5))
    found = client.verify(base, SecretStr(account.token))
    assert (found.account_id, found.acct) == (account.id, "alice")
    assert (found.limits.max_characters, found.limits.characters_reserved_per_url) == (1000, 30)


def test_mastodon_verify_bad_token_refused_quoting_the_instance(
    stand_in: tuple[MastodonStandIn, str],
) -> None:
    client = MastodonClient(OutboundHttp(allowed_origins=["http://127.0.0.1"], timeout_seconds=5))
    with pytest.raises(CredentialsRefusedError, match="The access token is invalid") as caught:
        client.verify(stand_in[1], SecretStr("wrong-token"))
    assert "wrong-token" not in str(caught.value)


def test_mastodon_publish_returns_status_id_and_url(
    stand_in: tuple[MastodonStandIn, str], account: Account, clock: Clock
) -> None:
    state, base = stand_in
    result = adapter(base, account).deliver(channel(), request(), now=clock())
    [status] = state.statuses_of(account)
    assert result.outcome == "published"
    assert result.remote_id == status.id
    assert result.remote_url == f"https://mastodon.local/@alice/{status.id}"
    assert status.text == "Hello fediverse"


def test_mastodon_lost_answer_retry_within_the_hour_posts_once(
    stand_in: tuple[MastodonStandIn, str], account: Account, clock: Clock
) -> None:
    state, base = stand_in
    subject = adapter(base, account)
    state.lose_next_answers(1)
    result = failed_then_retried(subject, clock, wait=timedelta(minutes=10))
    assert result.outcome == "published"
    assert [s.id for s in state.statuses_of(account)] == [result.remote_id]


def test_mastodon_lost_answer_retry_after_the_key_expired_finds_the_status(
    stand_in: tuple[MastodonStandIn, str], account: Account, clock: Clock
) -> None:
    state, base = stand_in
    subject = adapter(base, account)
    content = "Launch day @bob@other.example https://example.com/a/very/long/path"
    state.lose_next_answers(1)
    # two hours later: the stand-in forgot the key
    result = failed_then_retried(subject, clock, wait=timedelta(hours=2), content=content)
    [status] = state.statuses_of(account)
    assert (result.outcome, result.remote_id) == ("published", status.id)


def test_mastodon_write_only_token_still_finds_the_status_after_the_hour(
    stand_in: tuple[MastodonStandIn, str], account: Account, clock: Clock
) -> None:
    state, base = stand_in
    account.can_read = False  # write:statuses only: listing with the token answers 403
    subject = adapter(base, account)
    state.lose_next_answers(1)
    result = failed_then_retried(subject, clock, wait=timedelta(hours=2))
    [status] = state.statuses_of(account)
    assert (result.outcome, result.remote_id) == ("published", status.id)


def test_mastodon_retry_after_the_hour_without_a_match_posts(
    stand_in: tuple[MastodonStandIn, str], account: Account, clock: Clock
) -> None:
    state, base = stand_in
    state.fail_next(503)
    subject = adapter(base, account)
    result = failed_then_retried(subject, clock, wait=timedelta(hours=2), match="503")
    assert result.outcome == "published"
    assert len(state.statuses_of(account)) == 1


def test_mastodon_429_with_reset_header_waits_until_reset_without_calling_again(
    stand_in: tuple[MastodonStandIn, str], account: Account, clock: Clock
) -> None:
    state, base = stand_in
    state.rate_limit, state.rate_window_seconds = 1, 300
    subject = adapter(base, account)
    first = subject.deliver(channel(), request("one"), now=clock())
    assert first.outcome == "published"  # used the whole budget: remaining 0
    with pytest.raises(RetryableDeliveryError) as caught:
        subject.deliver(channel(), request("two"), now=clock() + timedelta(seconds=60))
    assert caught.value.rate_limited
    assert caught.value.retry_after_seconds == pytest.approx(240, abs=1)
    assert len(state.statuses_of(account)) == 1


def test_mastodon_429_from_the_instance_is_rate_limited_with_reset(
    stand_in: tuple[MastodonStandIn, str], account: Account, clock: Clock
) -> None:
    state, base = stand_in
    state.rate_limit = 0
    with pytest.raises(RetryableDeliveryError) as caught:
        adapter(base, account).deliver(channel(), request(), now=clock())
    assert (caught.value.http_status, caught.value.rate_limited) == (429, True)
    assert caught.value.retry_after_seconds == pytest.approx(300, abs=1)


def test_mastodon_revoked_token_fails_with_reauthorization_required(
    stand_in: tuple[MastodonStandIn, str], account: Account, clock: Clock
) -> None:
    state, base = stand_in
    state.revoke(account.token)
    result = adapter(base, account).deliver(channel(), request(), now=clock())
    assert (result.outcome, result.reason, result.http_status) == (
        "failed",
        "reauthorization_required",
        401,
    )
    assert account.token not in (result.error or "")


def test_mastodon_lost_answer_then_revoked_token_retry_finds_the_status(
    stand_in: tuple[MastodonStandIn, str], account: Account, clock: Clock
) -> None:
    # Given an attempt whose status was made but whose answer was lost
    state, base = stand_in
    subject = adapter(base, account)
    state.lose_next_answers(1)
    # When the token is revoked before the retry (within the key's hour)
    result = failed_then_retried(
        subject,
        clock,
        wait=timedelta(minutes=2),
        before_retry=lambda: state.revoke(account.token),
    )
    # Then the retry finds the status among the public ones: published, not posted again
    [status] = state.statuses_of(account)
    assert (result.outcome, result.remote_id) == ("published", status.id)


def test_mastodon_revoked_token_on_a_retry_with_nothing_posted_is_reauthorization_required(
    stand_in: tuple[MastodonStandIn, str], account: Account, clock: Clock
) -> None:
    state, base = stand_in
    state.fail_next(503)
    subject = adapter(base, account)
    result = failed_then_retried(subject, clock, before_retry=lambda: state.revoke(account.token))
    assert (result.outcome, result.reason) == ("failed", "reauthorization_required")
    assert state.statuses_of(account) == []


def test_mastodon_422_fails_with_the_instance_message(
    stand_in: tuple[MastodonStandIn, str], account: Account, clock: Clock
) -> None:
    state, base = stand_in
    state.max_characters = 10  # the instance lowered its limit after the channel was checked
    result = adapter(base, account).deliver(channel(), request("x" * 50), now=clock())
    assert (result.outcome, result.http_status) == ("failed", 422)
    assert "character limit of 10 exceeded" in (result.error or "")


def test_mastodon_over_the_channel_limit_fails_before_any_request(
    stand_in: tuple[MastodonStandIn, str], account: Account, clock: Clock
) -> None:
    state, base = stand_in
    limits = mastodon_limits(max_characters=20)
    result = adapter(base, account, limits).deliver(channel(), request("y" * 21), now=clock())
    assert (result.outcome, result.reason) == ("failed", "too_long")
    assert "the text has 21, the limit is 20" in (result.error or "")
    assert state.statuses_of(account) == []


def test_mastodon_spoiler_text_counts_toward_the_limit_before_any_request(
    stand_in: tuple[MastodonStandIn, str], account: Account, clock: Clock
) -> None:
    """Decision "A text per channel: variants": the status length counts the spoiler text."""
    state, base = stand_in
    limits = mastodon_limits(max_characters=20)
    spoiled = request("y" * 15).model_copy(
        update={"options": NetworkOptions(spoiler_text="cw!!!!")}
    )
    result = adapter(base, account, limits).deliver(channel(), spoiled, now=clock())
    assert (result.outcome, result.reason) == ("failed", "too_long")
    assert "the text has 21, the limit is 20" in (result.error or "")
    assert state.statuses_of(account) == []


def test_mastodon_5xx_is_retryable(
    stand_in: tuple[MastodonStandIn, str], account: Account, clock: Clock
) -> None:
    state, base = stand_in
    state.fail_next(502)
    with pytest.raises(RetryableDeliveryError) as caught:
        adapter(base, account).deliver(channel(), request(), now=clock())
    assert (caught.value.http_status, caught.value.rate_limited) == (502, False)
