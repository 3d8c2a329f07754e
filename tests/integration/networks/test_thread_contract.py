"""Threads on the networks, exactly once per part: the Bluesky adapter against the reference PDS
(each part a reply record at its own TID, ``reply.root`` part 1 and ``reply.parent`` the
previous part) and the Mastodon adapter against the stand-in (``in_reply_to_id`` of the
previous part, an ``Idempotency-Key`` per part), each with the answer of part 2 lost."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import SecretStr

from local.bluesky import LocalPds, PdsAccount
from local.mastodon import Account, MastodonStandIn
from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.models.post import Channel
from scheduled_posts.models.thread import FirstComment
from scheduled_posts.platforms.atproto_text import tid
from scheduled_posts.platforms.base import DeliveryRequest, PartRef, ThreadPart
from scheduled_posts.platforms.bluesky import BlueskyAccess, BlueskyAdapter
from scheduled_posts.platforms.mastodon import MastodonAccess
from scheduled_posts.platforms.mastodon_adapter import MastodonAdapter
from scheduled_posts.platforms.text_length import mastodon_limits
from scheduled_posts.platforms.webhook import TransportError, TransportResponse, Urllib3Transport
from scheduled_posts.settings import Settings
from tests.integration.networks.conftest import bluesky_posts
from tests.support.transport import ScriptedTransport, SentRequest

PUBLISH_AT = datetime(2026, 12, 1, 9, 0, 0, 250000, tzinfo=UTC)
TEXTS = ("1/3 The idea.", "2/3 The detail.", "3/3 The link.")


class LosingTransport(ScriptedTransport):
    """Sends for real and counts the writes (requests whose target ends with ``write``); drops
    the answer of the writes numbered in ``lose`` (1-based: a timeout after the network
    processed it)."""

    def __init__(self, write: str) -> None:
        super().__init__()
        self.inner = Urllib3Transport()
        self.write = write
        self.lose: set[int] = set()
        self.writes = 0
        self.targets: list[str] = []

    def answer(self, request: SentRequest) -> TransportResponse:
        self.targets.append(request.destination.target)
        answer = request.forward(self.inner)
        if request.destination.target.split("?")[0].endswith(self.write):
            self.writes += 1
            if self.writes in self.lose:
                raise TransportError("timed out: the answer was lost", timeout=True)
        return answer


class MemoryThreadParts:
    """The delivery's published parts in memory (``ThreadProgress``; ``ThreadPartLog`` on the
    posts table in the worker)."""

    def __init__(self) -> None:
        self.parts: dict[tuple[str, int], PartRef] = {}

    def known(self, idempotency_key: str) -> dict[int, PartRef]:
        return {i: ref for (key, i), ref in self.parts.items() if key == idempotency_key}

    def remember(self, idempotency_key: str, index: int, ref: PartRef, *, now: datetime) -> PartRef:
        return self.parts.setdefault((idempotency_key, index), ref)


def channel(platform: str) -> Channel:
    return Channel(
        channel_id=f"ch_{platform[0]}",
        owner="owner-1",
        platform=platform,
        name=platform,
        url="",
        signing_secret="unused",
        created_at=PUBLISH_AT - timedelta(days=1),
    )


def thread(
    channel_id: str, *, retry: bool = False, texts: tuple[str, ...] = TEXTS
) -> DeliveryRequest:
    return DeliveryRequest(
        schedule_id="sch_t",
        channel_id=channel_id,
        content=texts[0],
        parts=tuple(ThreadPart(content=t) for t in texts[1:]),
        publish_at=PUBLISH_AT,
        attempt=2 if retry else 1,
        idempotency_key=f"sch_t:{channel_id}",
        first_attempt_at=PUBLISH_AT if retry else None,
    )


def settings() -> Settings:
    return Settings(WEBHOOK_ALLOWED_ORIGINS="http://127.0.0.1", DELIVERY_TIMEOUT_SECONDS=20)


# -- Bluesky -----------------------------------------------------------------------------------


@pytest.fixture
def sky(local_pds: LocalPds, request: pytest.FixtureRequest) -> PdsAccount:
    digest = hashlib.sha256(request.node.name.encode()).hexdigest()[:10]
    return local_pds.create_account(f"thread{digest}")


def bluesky(
    pds: LocalPds, account: PdsAccount, transport: LosingTransport, progress: Any
) -> BlueskyAdapter:
    access = BlueskyAccess(
        service_url=pds.url, handle=account.handle, app_password=SecretStr(account.app_password)
    )
    return BlueskyAdapter(
        settings(), access=lambda _c: access, transport=transport, thread_parts=progress
    )


def test_bluesky_thread_lost_answer_after_part_2_then_retry_writes_each_part_once_chained(
    local_pds: LocalPds, sky: PdsAccount
) -> None:
    transport = LosingTransport("com.atproto.repo.putRecord")
    transport.lose = {2}
    progress = MemoryThreadParts()
    adapter = bluesky(local_pds, sky, transport, progress)
    with pytest.raises(RetryableDeliveryError):
        adapter.deliver(channel("bluesky"), thread("ch_b"), now=PUBLISH_AT)
    assert sorted(progress.known("sch_t:ch_b")) == [0]  # part 1 stored before part 2 was sent

    result = adapter.deliver(channel("bluesky"), thread("ch_b", retry=True), now=PUBLISH_AT)

    assert result.outcome == "published", result
    assert transport.writes == 3  # part 2 found by getRecord, never written twice
    records = {r["uri"]: r for r in bluesky_posts(local_pds, sky.did)}
    assert len(records) == 3
    keys = [tid(PUBLISH_AT, schedule_id="sch_t", channel_id="ch_b", part=i) for i in range(3)]
    uris = [f"at://{sky.did}/app.bsky.feed.post/{k}" for k in keys]
    assert [records[u]["value"]["text"] for u in uris] == list(TEXTS)
    root = {"uri": uris[0], "cid": records[uris[0]]["cid"]}
    assert "reply" not in records[uris[0]]["value"]
    for i in (1, 2):
        parent = {"uri": uris[i - 1], "cid": records[uris[i - 1]]["cid"]}
        assert records[uris[i]]["value"]["reply"] == {"root": root, "parent": parent}
    assert result.remote_id == uris[0]
    assert [p.remote_id for p in result.parts] == uris
    assert result.parts_total == 3


def test_bluesky_thread_retry_never_rewrites_a_stored_part(
    local_pds: LocalPds, sky: PdsAccount
) -> None:
    transport = LosingTransport("com.atproto.repo.putRecord")
    transport.lose = {3}
    progress = MemoryThreadParts()
    adapter = bluesky(local_pds, sky, transport, progress)
    with pytest.raises(RetryableDeliveryError):
        adapter.deliver(channel("bluesky"), thread("ch_b"), now=PUBLISH_AT)
    reads_before = len(transport.targets)

    result = adapter.deliver(channel("bluesky"), thread("ch_b", retry=True), now=PUBLISH_AT)

    assert result.outcome == "published"
    assert transport.writes == 3  # parts 1 and 2 came from the store; part 3 from getRecord
    retried = transport.targets[reads_before:]
    assert sum("getRecord" in t for t in retried) == 1
    assert len(bluesky_posts(local_pds, sky.did)) == 3


def test_bluesky_thread_part_over_the_limit_fails_naming_it_before_any_write(
    local_pds: LocalPds, sky: PdsAccount
) -> None:
    transport = LosingTransport("com.atproto.repo.putRecord")
    adapter = bluesky(local_pds, sky, transport, MemoryThreadParts())
    texts = ("short", "x" * 301)

    result = adapter.deliver(channel("bluesky"), thread("ch_b", texts=texts), now=PUBLISH_AT)

    assert (result.outcome, result.reason) == ("failed", "too_long")
    assert result.error is not None and result.error.startswith("part 2 of 2:")
    assert transport.targets == []


# -- Mastodon ----------------------------------------------------------------------------------


@pytest.fixture
def stand_in() -> Iterator[tuple[MastodonStandIn, str]]:
    state = MastodonStandIn(clock=lambda: PUBLISH_AT)
    with state.serving() as base:
        yield state, base


def mastodon(
    base: str, account: Account, transport: LosingTransport, progress: Any
) -> MastodonAdapter:
    access = MastodonAccess(
        instance_url=base,
        access_token=SecretStr(account.token),
        account_id=account.id,
        limits=mastodon_limits(),
    )
    return MastodonAdapter(
        settings(), access=lambda _c: access, transport=transport, thread_parts=progress
    )


@pytest.mark.parametrize("with_store", [True, False], ids=["stored", "keys-only"])
def test_mastodon_thread_lost_answer_after_part_2_then_retry_posts_each_part_once_chained(
    stand_in: tuple[MastodonStandIn, str], with_store: bool
) -> None:
    state, base = stand_in
    account = state.add_account("alice")
    transport = LosingTransport("/api/v1/statuses")
    transport.lose = {2}
    adapter = mastodon(base, account, transport, MemoryThreadParts() if with_store else None)
    with pytest.raises(RetryableDeliveryError):
        adapter.deliver(channel("mastodon"), thread("ch_m"), now=PUBLISH_AT)

    result = adapter.deliver(channel("mastodon"), thread("ch_m", retry=True), now=PUBLISH_AT)

    assert result.outcome == "published", result
    statuses = state.statuses_of(account)
    assert [s.text for s in statuses] == list(TEXTS)  # no part twice
    assert [s.in_reply_to_id for s in statuses] == [None, statuses[0].id, statuses[1].id]
    assert [p.remote_id for p in result.parts] == [s.id for s in statuses]
    assert result.remote_id == statuses[0].id
    context = state.handle("GET", f"/api/v1/statuses/{statuses[0].id}/context", {}, {}, None)
    assert [s["id"] for s in context[2]["descendants"]] == [s.id for s in statuses[1:]]


def test_mastodon_thread_part_refused_for_good_fails_listing_the_published_parts(
    stand_in: tuple[MastodonStandIn, str],
) -> None:
    state, base = stand_in
    account = state.add_account("bob")
    transport = LosingTransport("/api/v1/statuses")
    adapter = mastodon(base, account, transport, MemoryThreadParts())
    # part 1 is stored, but its status is gone: the instance refuses the reply for good (404)
    texts = ("a root", "a reply")
    progress = MemoryThreadParts()
    progress.remember("sch_t:ch_m", 0, PartRef(remote_id="999999"), now=PUBLISH_AT)
    adapter = mastodon(base, account, transport, progress)

    result = adapter.deliver(channel("mastodon"), thread("ch_m", texts=texts), now=PUBLISH_AT)

    assert result.outcome == "failed"
    assert result.error is not None and result.error.startswith("part 2 of 2: ")
    assert [p.remote_id for p in result.parts] == ["999999"]
    assert result.parts_total == 2


# -- first comments ----------------------------------------------------------------------------


def _with_comment(request: DeliveryRequest, text: str, delay: int = 0) -> DeliveryRequest:
    comment = FirstComment(content=text, delay_seconds=delay)
    return request.model_copy(update={"first_comment": comment})


def test_mastodon_first_comment_waits_its_delay_then_replies_to_part_1_once(
    stand_in: tuple[MastodonStandIn, str],
) -> None:
    state, base = stand_in
    account = state.add_account("carol")
    adapter = mastodon(base, account, LosingTransport("/api/v1/statuses"), MemoryThreadParts())
    request = _with_comment(thread("ch_m"), "The link: https://example.com", delay=60)

    with pytest.raises(RetryableDeliveryError, match="comment_wait") as waited:
        adapter.deliver(channel("mastodon"), request, now=PUBLISH_AT)
    assert waited.value.rate_limited and waited.value.retry_after_seconds == 60
    assert [s.text for s in state.statuses_of(account)] == list(TEXTS)  # the thread is out

    retry = _with_comment(thread("ch_m", retry=True), "The link: https://example.com", delay=60)
    later = PUBLISH_AT + timedelta(seconds=60)
    result = adapter.deliver(channel("mastodon"), retry, now=later)

    statuses = state.statuses_of(account)
    assert [s.text for s in statuses] == [*TEXTS, "The link: https://example.com"]
    assert statuses[3].in_reply_to_id == statuses[0].id
    assert result.outcome == "published" and result.parts_total == 3
    assert result.comment is not None and result.comment.status == "published"
    assert result.comment.remote_id == statuses[3].id


def test_mastodon_first_comment_refused_leaves_the_post_published(
    stand_in: tuple[MastodonStandIn, str],
) -> None:
    state, base = stand_in
    account = state.add_account("dave")
    adapter = mastodon(base, account, LosingTransport("/api/v1/statuses"), MemoryThreadParts())
    request = _with_comment(thread("ch_m", texts=("only part",)), "c" * 501)

    result = adapter.deliver(channel("mastodon"), request, now=PUBLISH_AT)

    assert result.outcome == "published" and result.parts_total == 0
    assert result.comment is not None and result.comment.status == "failed"
    assert "500" in (result.comment.error or "")
    assert [s.text for s in state.statuses_of(account)] == ["only part"]


def test_bluesky_first_comment_replies_to_part_1_at_its_own_key(
    local_pds: LocalPds, sky: PdsAccount
) -> None:
    transport = LosingTransport("com.atproto.repo.putRecord")
    transport.lose = {4}  # the comment's answer is lost: found again by its key
    adapter = bluesky(local_pds, sky, transport, MemoryThreadParts())
    with pytest.raises(RetryableDeliveryError):
        adapter.deliver(channel("bluesky"), _with_comment(thread("ch_b"), "c"), now=PUBLISH_AT)

    retry = _with_comment(thread("ch_b", retry=True), "c")
    result = adapter.deliver(channel("bluesky"), retry, now=PUBLISH_AT)

    assert result.comment is not None and result.comment.status == "published"
    records = {r["uri"]: r for r in bluesky_posts(local_pds, sky.did)}
    assert len(records) == 4
    root = f"at://{sky.did}/app.bsky.feed.post/" + tid(
        PUBLISH_AT, schedule_id="sch_t", channel_id="ch_b", part=0
    )
    comment = records[result.comment.remote_id or ""]["value"]
    assert comment["text"] == "c"
    assert comment["reply"]["root"]["uri"] == comment["reply"]["parent"]["uri"] == root
