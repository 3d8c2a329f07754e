"""One deadline per network delivery attempt (decision "One deadline per network delivery
attempt"): every request of a Bluesky or Mastodon attempt ends within one
``DELIVERY_TIMEOUT_SECONDS``, each distinct @mention is resolved once, and mentions past the
resolution budget stay plain text. A fake PDS and instance answer on a controllable clock:
no sleeps, no sockets."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import SecretStr

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.base import DeliveryRequest
from scheduled_posts.platforms.bluesky import (
    MAX_RESOLVED_HANDLES,
    BlueskyAccess,
    BlueskyAdapter,
    BlueskySession,
)
from scheduled_posts.platforms.deadline import AttemptDeadline, DeadlinePassedError
from scheduled_posts.platforms.mastodon import MastodonAccess
from scheduled_posts.platforms.mastodon_adapter import MastodonAdapter
from scheduled_posts.platforms.transport import TransportError, TransportResponse
from scheduled_posts.settings import Settings
from tests.support.transport import AnsweringTransport, SentRequest

NOW = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
TIMEOUT = 10.0
SETTINGS = Settings(OUTBOUND_ALLOWED_ORIGINS="http://127.0.0.1", DELIVERY_TIMEOUT_SECONDS=TIMEOUT)


class ManualClock:
    """Float seconds that move only when a fake network takes time."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


Answerer = Callable[[str, dict[str, Any]], tuple[float, int, dict[str, Any]]]


class SlowNetwork(AnsweringTransport):
    """A transport answering ``answer(path, json_body_or_query) -> (seconds, status, body)``;
    it moves ``clock`` by the seconds an answer takes, and honours the request's timeout like
    a socket deadline (moves the clock by the timeout, then no answer)."""

    def __init__(self, clock: ManualClock, answer: Answerer) -> None:
        self.clock = clock
        self.answerer = answer
        self.calls: list[tuple[str, float]] = []  # (path, when it started)

    def answer(self, request: SentRequest) -> TransportResponse:
        path, _, query = request.destination.target.partition("?")
        self.calls.append((path, self.clock.t))
        body = request.body
        seconds, status, out = self.answerer(path, json.loads(body) if body else {"q": query})
        if seconds > request.timeout:
            self.clock.t += request.timeout
            raise TransportError("timed out", timeout=True)
        self.clock.t += seconds
        return TransportResponse(
            status, {"Content-Type": "application/json"}, json.dumps(out).encode()
        )

    def paths(self, suffix: str) -> list[float]:
        return [when for path, when in self.calls if path.endswith(suffix)]


CHANNEL = Channel(
    channel_id="ch",
    owner="o",
    platform="bluesky",
    name="b",
    url="",
    signing_secret="-",
    created_at=NOW,
)


def _request(content: str, *, first_attempt_at: datetime | None = None) -> DeliveryRequest:
    return DeliveryRequest(
        schedule_id="s",
        channel_id="ch",
        content=content,
        publish_at=NOW,
        attempt=1 if first_attempt_at is None else 2,
        idempotency_key="s:ch",
        first_attempt_at=first_attempt_at,
    )


def _bluesky(network: SlowNetwork, clock: ManualClock, *, session: bool = True) -> BlueskyAdapter:
    adapter = BlueskyAdapter(
        SETTINGS,
        access=lambda _c: BlueskyAccess(
            service_url="http://127.0.0.1:9", handle="a.test", app_password=SecretStr("p")
        ),
        transport=network,
        timer=clock,
    )
    if session:
        adapter.sessions.put(
            CHANNEL,
            BlueskySession(
                did="did:plc:a",
                handle="a.test",
                access_jwt=SecretStr("x"),
                refresh_jwt=SecretStr("y"),
            ),
        )
    return adapter


def _pds(resolve_seconds: float, *, write_seconds: float = 0.2) -> Answerer:
    """A PDS whose resolveHandle takes ``resolve_seconds``; it records the written record."""
    written: dict[str, Any] = {}

    def answer(path: str, body: dict[str, Any]) -> tuple[float, int, dict[str, Any]]:
        if path.endswith("resolveHandle"):
            handle = re.search(r"handle=([^&]+)", body["q"])
            assert handle is not None
            return resolve_seconds, 200, {"did": f"did:plc:{handle.group(1).split('.')[0]}"}
        if path.endswith("putRecord"):
            written.update(body["record"])
            return write_seconds, 200, {"uri": f"at://did:plc:a/app.bsky.feed.post/{body['rkey']}"}
        if path.endswith("createSession"):
            return (
                write_seconds,
                200,
                {"did": "did:plc:a", "handle": "a.test", "accessJwt": "x", "refreshJwt": "y"},
            )
        if path.endswith("getRecord"):
            return write_seconds, 400, {"error": "RecordNotFound", "message": "not found"}
        raise AssertionError(path)

    answer.written = written  # type: ignore[attr-defined]
    return answer


def _mentions(record: dict[str, Any]) -> list[str]:
    return [
        f["features"][0]["did"]
        for f in record.get("facets", [])
        if f["features"][0]["$type"].endswith("#mention")
    ]


def test_bluesky_slow_resolver_38_mentions_attempt_ends_within_the_deadline() -> None:
    # Given 38 distinct mentions against a PDS answering resolveHandle in 3 s
    clock = ManualClock()
    pds = _pds(3.0)
    network = SlowNetwork(clock, pds)
    content = " ".join(f"@u{i}.io" for i in range(38))
    start = clock.t

    # When the post is delivered
    result = _bluesky(network, clock).deliver(CHANNEL, _request(content), now=NOW)

    # Then it is written within one DELIVERY_TIMEOUT_SECONDS, the mentions past the budget
    # (half the deadline) as plain text
    assert result.outcome == "published"
    assert clock.t - start <= TIMEOUT
    assert len(network.paths("resolveHandle")) == 2  # 0-3 s, then 3-5 s cut by the budget
    assert _mentions(pds.written) == ["did:plc:u0"]  # type: ignore[attr-defined]
    assert pds.written["text"] == content  # type: ignore[attr-defined]


def test_bluesky_same_handle_mentioned_often_is_resolved_once() -> None:
    clock = ManualClock()
    pds = _pds(1.0)
    network = SlowNetwork(clock, pds)
    result = _bluesky(network, clock).deliver(
        CHANNEL, _request("@bob.test @bob.test @BOB.test hi @bob.test"), now=NOW
    )
    assert result.outcome == "published"
    assert len(network.paths("resolveHandle")) == 1
    assert _mentions(pds.written) == ["did:plc:bob"] * 4  # type: ignore[attr-defined]


def test_bluesky_mentions_past_the_count_budget_stay_plain_text() -> None:
    clock = ManualClock()
    pds = _pds(0.0)
    network = SlowNetwork(clock, pds)
    content = " ".join(f"@u{i}.io" for i in range(MAX_RESOLVED_HANDLES + 5))
    assert _bluesky(network, clock).deliver(CHANNEL, _request(content), now=NOW).outcome == (
        "published"
    )
    assert len(network.paths("resolveHandle")) == MAX_RESOLVED_HANDLES
    assert len(_mentions(pds.written)) == MAX_RESOLVED_HANDLES  # type: ignore[attr-defined]


def test_bluesky_slow_pds_no_request_starts_after_the_deadline() -> None:
    # Given a retry against a PDS where getRecord and createSession take 6 s each
    clock = ManualClock()
    pds = _pds(0.0, write_seconds=6.0)
    network = SlowNetwork(clock, pds)
    start = clock.t
    adapter = _bluesky(network, clock, session=False)

    # When the attempt runs out of its deadline
    with pytest.raises(RetryableDeliveryError, match=r"^timeout: bluesky: "):
        adapter.deliver(CHANNEL, _request("hi", first_attempt_at=NOW), now=NOW)

    # Then it ended at the deadline, and nothing was written
    assert clock.t - start <= TIMEOUT
    assert network.paths("putRecord") == []
    assert all(when - start < TIMEOUT for _, when in network.calls)


def test_mastodon_lost_answer_search_with_slow_sources_ends_within_the_deadline() -> None:
    # Given a retry 60 min after a lost answer, and an instance listing 40 statuses with our
    # visible text whose sources take 3 s each (and never match)
    clock = ManualClock()

    def instance(path: str, body: dict[str, Any]) -> tuple[float, int, Any]:
        if path.endswith("/statuses") and "accounts" in path:
            statuses = [
                {"id": str(i), "content": "<p>hi</p>", "created_at": "2026-12-01T10:00:01Z"}
                for i in range(40)
            ]
            return 0.1, 200, statuses
        if path.endswith("/source"):
            return 3.0, 200, {"text": "not ours"}
        return 0.1, 200, {"id": "99", "url": "https://m.example/@a/99"}

    network = SlowNetwork(clock, instance)  # type: ignore[arg-type]
    adapter = MastodonAdapter(
        SETTINGS,
        access=lambda _c: MastodonAccess(
            instance_url="http://127.0.0.1:9", access_token=SecretStr("t"), account_id="1"
        ),
        transport=network,
        timer=clock,
    )
    start = clock.t
    with pytest.raises(RetryableDeliveryError, match=r"^timeout: mastodon: "):
        adapter.deliver(
            CHANNEL.model_copy(update={"platform": "mastodon"}),
            _request("hi", first_attempt_at=NOW - timedelta(minutes=60)),
            now=NOW,
        )
    assert clock.t - start <= TIMEOUT
    assert len(network.paths("/source")) == 4  # 3 in 9 s, the 4th cut at the deadline


def test_attempt_deadline_bounds_each_timeout_then_refuses() -> None:
    clock = ManualClock()
    deadline = AttemptDeadline(10, timer=clock)
    assert deadline.bound(4) == 4
    clock.t += 8
    assert deadline.bound(4) == pytest.approx(2)
    inner = deadline.part(5)
    assert inner.remaining() == pytest.approx(2)
    clock.t += 2
    with pytest.raises(DeadlinePassedError):
        deadline.bound(4)
