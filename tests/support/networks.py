"""The fault suite's network channels (issue 12): one Mastodon and one Bluesky channel in each
world, reached over HTTP on 127.0.0.1, faulted, and counted **on the network** afterwards.

* Mastodon: the stand-in (``local/mastodon.py``), one per world, in this process, on the
  world's reference clock (so a status's ``created_at`` is the simulated instant it was made).
* Bluesky: the reference PDS (``local/bluesky.py``), one per run (``FAULT_PDS_URL``), one new
  account per world.

:class:`NetworkFaults` is the network adapters' transport in the worker: the real urllib3
transport plus, per write (``POST /api/v1/statuses``, ``com.atproto.repo.putRecord``), seeded
faults keyed on the delivery (never on call order): 5xx (not processed), 429 with each
network's reset headers (not processed), ``X-RateLimit-Remaining``/``RateLimit-Remaining: 0``
on a success (processed; the budget is spent until the reset), accept-then-lose-the-answer
(processed, then a timeout), a hostile answer (processed; the 2xx answer's id and URL replaced
by oversized or malformed ones: a 3,000-character id and a 60,000-character URL, or an id with
spaces and a ``javascript:`` URL), and the worker crashes ``mid_delivery``/``after_2xx`` of the
webhook transport.

Besides the drawn faults, each faulted world forces one fault kind per network (the kinds of
:data:`FORCED_KINDS` in turn by seed, :meth:`NetworkWorld.forced_kind`): the first write of the
first post created for that network that fits (no edit, cancel or poison; due well before a
revocation) gets it, or the world revokes that network's credentials. Any
``len(FORCED_KINDS)`` consecutive seeds thus inject every kind on both networks, whatever the
draws (the CI seeds' "every fault kind" check relies on it).

401 mid-run (:meth:`NetworkWorld.tick`): at a seeded instant of the publish window a world may
revoke its Mastodon token (every later request answers 401) and its Bluesky app password
(``revokeAppPassword`` on the PDS: logging in answers 401 and the refresh token is revoked).
The PDS keeps honouring access tokens issued before for about 2 hours of real time, which a
world never lasts, so from the revocation on this transport answers requests carrying such a
token ``400 ExpiredToken``, as the PDS would once they expire: the adapter then refreshes and
logs in on the real PDS, which refuses both.

:meth:`NetworkWorld.check` reads every status of the stand-in and every post record of the PDS
account, and checks each delivery of each post against them (see its docstring).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from local.bluesky import PdsAccount, create_account, list_posts, revoke_app_password
from local.mastodon import MastodonStandIn
from scheduled_posts.clock import parse_instant
from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.logic.network_delivery import network_collaborators
from scheduled_posts.platforms.base import PlatformAdapter
from scheduled_posts.platforms.bluesky import created_at
from scheduled_posts.platforms.registry import get_adapter
from scheduled_posts.platforms.transport import TransportError, TransportResponse, Urllib3Transport
from scheduled_posts.settings import Settings
from tests.support.faults import FaultPlan
from tests.support.link_site import LinkSite
from tests.support.media_faults import KeyedAdapter, MediaFaults
from tests.support.thread_world import (
    COMMENT,
    ThreadFaults,
    check_thread,
    comment_due,
    label_of,
)
from tests.support.transport import AnsweringTransport, SentRequest

if TYPE_CHECKING:
    from tests.support.clock import SimClock

#: The environment variable naming a running reference PDS for the fault suite.
PDS_URL_ENV = "FAULT_PDS_URL"
#: Per write: the chance of a fault answer (5xx, 429, spent budget, lost answer), as a multiple
#: of the plan's ``answer`` rate (a webhook world's 0.10 makes 0.2: fewer deliveries go to the
#: networks, and each kind should show at CI size).
NETWORK_ANSWER_FACTOR = 2.0
NETWORK_FAULTS = ("5xx", "429", "budget_spent", "accept_then_lose", "hostile_answer")
#: Seconds until the reset of an injected 429 or spent budget.
RESET_SECONDS = (1, 3, 5, 20)
#: Share of worlds that revoke each network's credentials mid-run (none when the plan scripts no
#: answer faults).
REVOKE_SHARE = 0.5
#: The kinds forced in turn, one per network per faulted world (see the module docstring).
FORCED_KINDS = (*NETWORK_FAULTS, "401_mid_run")
#: A forced write goes to a post due at least this long before its channel's revocation
#: (seconds), so the write happens before it.
FORCED_BEFORE_REVOKE_SECONDS = 300
WRITE_PATHS = {"mastodon": "/api/v1/statuses", "bluesky": "/xrpc/com.atproto.repo.putRecord"}
_POST_TEXT = re.compile(r"^post (\d+) of seed (\d+)")
#: The injected faults that store the write and lose its answer (the last two at a thread's later
#: part or first comment: ``tests/support/thread_world.py``).
_LOST_ANSWERS = ("accept_then_lose", "part_answer_lost", "comment_answer_lost")
#: What a kept ``remote_url`` may start with: ``https``, or the local stand-in's origin.
_LINK_PREFIXES = ("https://", "http://127.0.0.1:")


@contextmanager
def reference_pds() -> Iterator[str]:
    """The URL of a running reference PDS: ``FAULT_PDS_URL`` when set, else one started for the
    duration (and named in ``FAULT_PDS_URL`` for child processes)."""
    url = os.environ.get(PDS_URL_ENV)
    if url:
        yield url
        return
    from local.bluesky import LocalPds

    with LocalPds() as pds:
        os.environ[PDS_URL_ENV] = pds.url
        try:
            yield pds.url
        finally:
            os.environ.pop(PDS_URL_ENV, None)


def forced_kind(seed: int, network: str) -> str:
    """The fault kind a faulted world of ``seed`` forces on ``network``: :data:`FORCED_KINDS` in
    turn by seed, Bluesky two kinds ahead of Mastodon, so any ``len(FORCED_KINDS)`` consecutive
    seeds force every kind on each network."""
    shift = 0 if network == "mastodon" else 2
    return FORCED_KINDS[(seed + shift) % len(FORCED_KINDS)]


def _bearer(headers: Mapping[str, str]) -> str | None:
    value = next((v for k, v in headers.items() if k.lower() == "authorization"), None)
    return value.removeprefix("Bearer ").strip() if value else None


@dataclass
class Write:
    """A write that reached the network: its delivery key, the reference time, and whether the
    answer came back."""

    key: str
    at: datetime
    answered: bool
    #: The thread step (``tests/support/thread_world.py``, ``label_of``): ``1`` .. ``n``,
    #: ``comment``.
    label: str = "1"


@dataclass
class NetworkFaults(AnsweringTransport):
    """The transport of the network adapters in the worker (see the module docstring)."""

    plan: FaultPlan
    clock: Callable[[], datetime]
    #: ``port -> network`` of the world's stand-in and PDS.
    ports: dict[int, str]
    #: ``(network, text) -> delivery key`` (``<schedule_id>:<channel_id>``), from the world.
    key_of: Callable[[str, str], str | None]
    inner: Urllib3Transport = field(default_factory=Urllib3Transport)
    writes: dict[str, list[Write]] = field(default_factory=dict)
    #: Keys whose request the network answered 401 (or 400 ExpiredToken for a revoked token).
    refused_keys: set[str] = field(default_factory=set)
    #: Keys whose write was processed while its answer never reached the worker.
    lost_keys: set[str] = field(default_factory=set)
    #: Keys whose write was processed and answered with a hostile id and URL.
    hostile_keys: set[str] = field(default_factory=set)
    #: Bluesky tokens issued before the app password was revoked (answered ExpiredToken).
    expired_tokens: set[str] | None = None
    #: ``delivery key -> fault`` forced on the key's first write (one of :data:`NETWORK_FAULTS`).
    forced: dict[str, str] = field(default_factory=dict)
    #: Lost answers at the media steps (``tests/support/media_faults.py``).
    media: MediaFaults | None = None
    #: Lost answers at the thread steps (``tests/support/thread_world.py``).
    threads: ThreadFaults | None = None
    #: ``(key, label)`` of each thread step the network refused (401 or ExpiredToken), and of
    #: each whose answer was lost.
    refused_steps: set[tuple[str, str]] = field(default_factory=set)
    lost_steps: set[tuple[str, str]] = field(default_factory=set)
    _seen_tokens: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, request: SentRequest) -> TransportResponse:
        """Forward ``request`` to the stand-in or PDS, with this world's faults."""
        network = self.ports.get(request.destination.port, "?")
        token = _bearer(request.headers)
        path = request.path
        write = request.method == "POST" and path == WRITE_PATHS.get(network)
        key, label = self._key(network, request.body) if write else (None, "1")
        if network == "bluesky" and token:
            expired = self._expired(token, path)
            if expired is not None:
                if key is not None:
                    self.refused_keys.add(key)
                    self.refused_steps.add((key, label))
                return expired
        if key is None:
            step = self.media.step(network, request) if self.media else None
            if self.media is not None and step is not None:
                return self.media.answer(network, step, request, self.inner)
            return request.forward(self.inner)
        return self._write(network, key, request, label)

    def revoke_tokens(self) -> None:
        """From now on, answer Bluesky requests with a token seen so far ``ExpiredToken``."""
        with self._lock:
            self.expired_tokens = set(self._seen_tokens)

    def _expired(self, token: str, path: str) -> TransportResponse | None:
        with self._lock:
            if self.expired_tokens is None:
                self._seen_tokens.add(token)
                return None
            if token not in self.expired_tokens or path.endswith("refreshSession"):
                return None
        return _json(400, {"error": "ExpiredToken", "message": "Token has expired"})

    def _key(self, network: str, body: bytes) -> tuple[str | None, str]:
        """The write's delivery key and thread step (``label_of`` its text)."""
        try:
            data = json.loads(body)
        except ValueError:
            return None, "1"
        if network == "bluesky":
            data = data.get("record") if isinstance(data, dict) else None
        text = data.get("status" if network == "mastodon" else "text") if data else None
        if text is None:
            return None, "1"
        return self.key_of(network, str(text)), label_of(str(text))

    def _write(
        self, network: str, key: str, request: SentRequest, label: str = "1"
    ) -> TransportResponse:
        plan = self.plan
        plan.maybe_crash("mid_delivery", key)
        n = plan.occurrence("net-answer", key)
        fault = self.forced.get(key) if n == 0 and plan.enabled else None
        rate = NETWORK_ANSWER_FACTOR * plan.rates.answer
        if fault is None and plan.enabled and plan.draw("net-answer", key, n) < rate:
            pick = plan.draw("net-kind", key, n)
            fault = NETWORK_FAULTS[int(pick * len(NETWORK_FAULTS))]
        if fault is None and self.media is not None and self.media.lose_status(network, key):
            fault = "accept_then_lose"
        if fault is None and self.threads is not None:
            fault = self.threads.lose(network, key, label)
        reset = RESET_SECONDS[int(plan.draw("net-reset", key, n) * len(RESET_SECONDS))]
        sid = key.split(":", 1)[0]
        if fault == "5xx":
            status = (500, 502, 503, 504)[int(plan.draw("net-status", key, n) * 4)]
            plan.count(f"network_{network}_5xx")
            plan.touch("destination_retry", f"network_{status}", sid, plan.retry_ceiling(n) + 1)
            return _json(status, {"error": "InternalServerError", "message": "injected"})
        if fault == "429":
            plan.count(f"network_{network}_429")
            plan.touch("destination_429", "network_429", sid, reset + 1.0)
            return _json(429, {"error": "RateLimitExceeded"}, self._limits(network, reset))
        answer = self._forward(key, request, fault, label)
        if answer.status == 401 or (answer.status == 400 and b"ExpiredToken" in answer.body):
            self.refused_keys.add(key)
            self.refused_steps.add((key, label))
        if 200 <= answer.status < 300:
            try:
                plan.maybe_crash("after_2xx", key)
            except BaseException:
                with self._lock:  # processed; the worker never learnt of it: a lost answer
                    self.lost_keys.add(key)  # of this step (a comment written, then a crash,
                    self.lost_steps.add((key, label))  # then a refused channel: fault seed 20)
                raise
        if fault == "hostile_answer" and answer.status == 200:
            plan.count(f"network_{network}_hostile_answer")
            with self._lock:
                self.hostile_keys.add(key)
            return _hostile(network, answer, oversized=plan.draw("net-hostile", key, n) < 0.5)
        if fault == "budget_spent" and answer.status == 200:
            plan.count(f"network_{network}_budget_spent")
            plan.touch("destination_429", "network_budget_spent", sid, reset + 1.0)
            return TransportResponse(
                status=200,
                headers={**answer.headers, **self._limits(network, reset)},
                body=answer.body,
            )
        return answer

    def _forward(
        self, key: str, request: SentRequest, fault: str | None, label: str
    ) -> TransportResponse:
        try:
            answer = request.forward(self.inner)
        except TransportError:
            self._note(key, label, answered=False)
            raise
        if fault in _LOST_ANSWERS and 200 <= answer.status < 300:
            network = self.ports.get(request.destination.port, "?")
            self.plan.count(f"network_{network}_{fault}")
            self.plan.touch(
                "destination_retry",
                f"network_{fault}",
                key.split(":", 1)[0],
                self.plan.retry_ceiling(0) + 1,
            )
            self._note(key, label, answered=False)
            raise TransportError("timed out (injected: the answer was lost)", timeout=True)
        self._note(key, label, answered=True)
        return answer

    def _note(self, key: str, label: str, *, answered: bool) -> None:
        with self._lock:
            self.writes.setdefault(key, []).append(Write(key, self.clock(), answered, label))
            if not answered:
                self.lost_keys.add(key)
                self.lost_steps.add((key, label))

    def _limits(self, network: str, reset: int) -> dict[str, str]:
        at = self.clock() + timedelta(seconds=reset)
        if network == "mastodon":
            iso = at.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
            return {
                "X-RateLimit-Limit": "300",
                "X-RateLimit-Remaining": "0",
                "X-RateLimit-Reset": iso,
            }
        return {
            "RateLimit-Limit": "100",
            "RateLimit-Remaining": "0",
            "RateLimit-Reset": str(int(at.timestamp()) + 1),
            "RateLimit-Policy": "100;w=300",
        }


def _root_ref(network: str, delivery: dict[str, Any]) -> Any:
    """Part 1's identity from the delivery (the network deleted or replaced the record)."""
    return {"uri": delivery.get("remote_id")} if network == "bluesky" else delivery.get("remote_id")


def _hostile(network: str, answer: TransportResponse, *, oversized: bool) -> TransportResponse:
    """``answer`` (a processed write's 200) with the id and URL a hostile network would send."""
    data = json.loads(answer.body)
    if network == "mastodon":
        if oversized:
            data.update(id="9" * 3000, url="https://h.example/" + "x" * 60_000)
        else:
            data.update(id=f"{data['id']} <b>", url="javascript:alert(document.cookie)")
        data["uri"] = data["url"]
    else:
        data["uri"] = "at://" + "d" * 60_000 if oversized else "javascript:alert(1)"
    return TransportResponse(status=200, headers=answer.headers, body=json.dumps(data).encode())


def _json(
    status: int, body: dict[str, Any], headers: dict[str, str] | None = None
) -> TransportResponse:
    return TransportResponse(
        status=status,
        headers={"Content-Type": "application/json", **(headers or {})},
        body=json.dumps(body).encode(),
    )


@dataclass
class NetworkChannel:
    """One network channel of a world."""

    network: str
    channel_id: str
    revoke_at: datetime | None
    revoked_at: datetime | None = None


class NetworkWorld:
    """A world's Mastodon stand-in, Bluesky account, worker transport and checks.

    Build with :meth:`start` (inside the world's time-machine travel), create the channels
    through the API with :meth:`channel_bodies`, give the worker :meth:`adapters`, call
    :meth:`tick` at every step of the play, then :meth:`check`, and :meth:`stop`.
    """

    def __init__(self, seed: int, plan: FaultPlan, clock: SimClock, pds_url: str) -> None:
        self.seed = seed
        self.plan = plan
        self.clock = clock
        self.pds_url = pds_url
        self.mastodon = MastodonStandIn(clock=clock.now)
        self.server: Any = None
        self.mastodon_url = ""
        self.token = ""
        self.pds_account: PdsAccount | None = None
        self.channels: dict[str, NetworkChannel] = {}
        self._keys: dict[tuple[str, int], str] = {}
        #: ``network -> post indexes`` whose first write may carry the network's forced fault.
        self._forced_candidates: dict[str, set[int]] = {}
        self.transport: NetworkFaults | None = None
        #: ``media_ids -> alt texts`` of the world's uploads (``tests/support/media_world.py``):
        #: a published delivery shows exactly these, in order.
        self.media_alts: Callable[[list[str]], list[str]] | None = None
        #: ``delivery key -> missing | changed``: what the network did to a published record
        #: (``tests/support/verify_world.py``).
        self.tampered: dict[str, str] = {}
        #: ``media_id -> SHA-256`` of the world's uploads, and the media steps' lost answers.
        self.media_sha: dict[str, str] = {}
        self.media_faults = MediaFaults(plan)
        #: The linked site of the worlds' Bluesky link cards (``thread_world.compose``).
        self.site = LinkSite()
        self._site: Any = None

    def start(self) -> None:
        """Serve the stand-in and create the accounts (one PDS account per world)."""
        self.server = self.mastodon.serve(0)
        port = int(self.server.server_address[1])
        self.mastodon_url = f"http://127.0.0.1:{port}"
        self.token = self.mastodon.add_account(f"world{self.seed}").token
        self.pds_account = create_account(self.pds_url, f"f{self.seed}x{secrets.token_hex(3)}")
        self._site = self.site.serving()
        self._site.__enter__()
        pds_port = int(self.pds_url.rsplit(":", 1)[1])
        self.transport = NetworkFaults(
            plan=self.plan,
            clock=self.clock.now,
            ports={port: "mastodon", pds_port: "bluesky"},
            key_of=self.key_of,
            media=self.media_faults,
            threads=ThreadFaults(self.plan),
        )

    @property
    def link_base(self) -> str:
        """The linked site's origin (``http://127.0.0.1:<port>``)."""
        return self.site.base

    def stop(self) -> None:
        if self._site is not None:
            self._site.__exit__(None, None, None)
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def channel_bodies(self) -> list[dict[str, Any]]:
        """``POST /v1/channels`` bodies of the world's two network channels."""
        assert self.pds_account is not None
        return [
            {
                "platform": "mastodon",
                "name": "toots",
                "instance_url": self.mastodon_url,
                "access_token": self.token,
            },
            {
                "platform": "bluesky",
                "name": "sky",
                "service_url": self.pds_url,
                "handle": self.pds_account.handle,
                "app_password": self.pds_account.app_password,
            },
        ]

    def add_channel(self, network: str, channel_id: str) -> None:
        """Record a channel the world created."""
        self.channels[channel_id] = NetworkChannel(network, channel_id, None)

    def forced_kind(self, network: str) -> str | None:
        """The fault kind this world forces on ``network`` (:func:`forced_kind`; ``None`` when
        the plan scripts no answer faults)."""
        if self.plan.rates.answer <= 0:
            return None
        return forced_kind(self.seed, network)

    def plan_revocations(self, begin: datetime, end: datetime) -> None:
        """Decide (seeded) whether and when, between ``begin`` and ``end``, each channel's
        credentials are revoked (always when the world forces ``401_mid_run`` on it)."""
        span = (end - begin).total_seconds()
        for channel in self.channels.values():
            share = REVOKE_SHARE if self.plan.rates.answer > 0 else 0.0
            forced = self.forced_kind(channel.network) == "401_mid_run"
            if self.plan.draw("revoke", channel.network) < share or forced:
                at = span * self.plan.draw("revoke-at", channel.network)
                channel.revoke_at = begin + timedelta(seconds=at)

    def plan_forced(self, posts: list[Any], skip: set[int]) -> None:
        """Choose the posts that may carry each network's forced write fault: those of
        ``posts`` (planned posts, after :meth:`plan_revocations`) sent to the network's
        channel, not in ``skip`` (posts edited, cancelled or poisoned), and due at least
        :data:`FORCED_BEFORE_REVOKE_SECONDS` before the channel's revocation (a revocation drawn
        earlier than that for every such post is moved to just after the first one's margin).
        The first of them the world creates gets it (:meth:`remember`)."""
        margin = timedelta(seconds=FORCED_BEFORE_REVOKE_SECONDS)
        for cid, channel in self.channels.items():
            if self.forced_kind(channel.network) not in NETWORK_FAULTS:
                continue
            fits = [p for p in posts if cid in p.channel_ids and p.index not in skip]
            if fits and channel.revoke_at is not None:
                # a revocation drawn before any of them could be written waits for the first
                latest = min(p.publish_at for p in fits) + margin
                channel.revoke_at = max(channel.revoke_at, latest + timedelta(seconds=1))
            self._forced_candidates[channel.network] = {
                p.index
                for p in fits
                if channel.revoke_at is None or p.publish_at + margin < channel.revoke_at
            }

    def remember(self, index: int, schedule_id: str) -> None:
        """The world created post ``index`` as ``schedule_id`` (the first candidate created for
        a network gets its forced fault)."""
        assert self.transport is not None
        for cid, channel in self.channels.items():
            key = f"{schedule_id}:{cid}"
            self._keys[(channel.network, index)] = key
            candidates = self._forced_candidates.get(channel.network)
            if candidates and index in candidates:
                kind = self.forced_kind(channel.network)
                assert kind is not None
                self.transport.forced[key] = kind
                candidates.clear()

    def key_of(self, network: str, text: str) -> str | None:
        match = _POST_TEXT.match(text)
        if match is None or int(match.group(2)) != self.seed:
            return None
        return self._keys.get((network, int(match.group(1))))

    def adapters(self, settings: Settings) -> dict[str, PlatformAdapter]:
        """The worker's ``mastodon`` and ``bluesky`` adapters over :class:`NetworkFaults`."""
        collaborators = network_collaborators(
            settings, channels=ChannelRepository(posts_table_name=settings.POSTS_TABLE_NAME)
        )
        return {
            name: KeyedAdapter(
                get_adapter(name, settings=settings, transport=self.transport, **collaborators),
                self.media_faults.current,
            )
            for name in ("mastodon", "bluesky")
        }

    def tick(self, now: datetime) -> None:
        """Revoke the credentials whose time came."""
        for channel in self.channels.values():
            if channel.revoke_at is None or channel.revoked_at or now < channel.revoke_at:
                continue
            channel.revoked_at = now
            self.plan.count(f"network_{channel.network}_401_mid_run")
            if channel.network == "mastodon":
                self.mastodon.revoke(self.token)
            else:
                assert self.pds_account is not None and self.transport is not None
                revoke_app_password(self.pds_url, self.pds_account)
                self.transport.revoke_tokens()

    # -- checks ----------------------------------------------------------------------------

    def on_network(self) -> dict[str, list[dict[str, Any]]]:
        """``channel_id -> posts on the network`` as ``{"text", "at", "id", "created_at"}``:
        every status of the stand-in's account and every post record of the PDS account."""
        assert self.pds_account is not None
        found: dict[str, list[dict[str, Any]]] = {cid: [] for cid in self.channels}
        by_network = {c.network: cid for cid, c in self.channels.items()}
        for status in self.mastodon.statuses:
            alts = [self.mastodon.media.items[i].description or "" for i in status.media_ids]
            found[by_network["mastodon"]].append(
                {
                    "text": status.text,
                    "at": status.created_at,
                    "id": status.id,
                    "alts": alts,
                    "ref": status.id,
                    "reply": {"parent": status.in_reply_to_id} if status.in_reply_to_id else None,
                    "options": {
                        "visibility": status.visibility,
                        "spoiler_text": status.spoiler_text,
                    },
                }
            )
        for record in list_posts(self.pds_url, self.pds_account.did):
            value = record.get("value") or {}
            embed = value.get("embed") or {}
            images = embed.get("images") if isinstance(embed, dict) else None
            reply = value.get("reply")
            found[by_network["bluesky"]].append(
                {
                    "alts": [str(i.get("alt")) for i in images or [] if isinstance(i, dict)],
                    "text": str(value.get("text")),
                    "created_at": value.get("createdAt"),
                    "id": record.get("uri"),
                    "ref": {"uri": record.get("uri"), "cid": record.get("cid")},
                    "reply": reply,
                    "options": {"tags": value.get("tags")},
                    "external": embed.get("external") if isinstance(embed, dict) else None,
                }
            )
        return found

    def check(
        self,
        posts: list[Any],
        states: Mapping[str, dict[str, Any]],
        channel_status: Callable[[str], str | None],
        totals: Counter[str],
    ) -> list[str]:
        """Every network delivery against what is on the network.

        ``posts`` are the world's planned posts; ``states`` their ``GET`` answers by schedule id.
        For each post and network channel: published -> exactly one post on the network, with
        the post's final text, its ``remote_id``, never made before ``publish_at`` (Mastodon:
        the status's ``created_at``; Bluesky: the first write that reached the PDS, and
        ``createdAt`` equal to ``publish_at``); cancelled -> none; failed -> only
        ``reauthorization_required`` on a channel whose credentials were revoked, with nothing
        on the network unless an earlier answer was lost. Every key the network answered 401
        ends ``reauthorization_required``; a channel with such a delivery says
        ``needs_reauthorization``; nothing on the network that no post owes. ``totals`` gains
        ``network_*`` counts and adds to ``duplicates`` and ``early``.
        """
        assert self.transport is not None
        problems: list[str] = []
        found = self.on_network()
        by_index: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for cid, items in found.items():
            totals[f"network_{self.channels[cid].network}_posts"] += len(items)
            for item in items:
                match = _POST_TEXT.match(item["text"])
                if match is None or int(match.group(2)) != self.seed:
                    totals["duplicates"] += 1
                    problems.append(f"{cid}: a post no post owes: {item['text']!r}")
                    continue
                by_index.setdefault((cid, int(match.group(1))), []).append(item)
        reauthorized: set[str] = set()
        for post in posts:
            if post.schedule_id is None:
                continue
            state = states.get(post.schedule_id)
            for cid, channel in self.channels.items():
                items = by_index.pop((cid, post.index), [])
                if cid not in post.channel_ids or state is None:
                    if items:
                        totals["duplicates"] += len(items)
                        problems.append(f"post {post.index}: on {cid} but not sent there")
                    continue
                key = f"{post.schedule_id}:{cid}"
                delivery = {d["channel_id"]: d for d in state["deliveries"]}[cid]
                by_label: dict[str, list[dict[str, Any]]] = {}
                for item in items:
                    by_label.setdefault(label_of(item["text"]), []).append(item)
                problems += self._check_delivery(key, channel, state, delivery, by_label, totals)
                problems += self._check_composed(key, cid, post, delivery, by_label, totals)
                problems += self._check_steps(key, channel, state, delivery, by_label, post, totals)
                if (delivery.get("last_error") or "").startswith("reauthorization_required"):
                    reauthorized.add(cid)
        for cid in sorted(reauthorized):
            if channel_status(cid) != "needs_reauthorization":
                problems.append(f"{cid}: deliveries ended reauthorization_required, channel not")
        problems += self._check_uploads(totals)
        return problems[:10]

    def _check_composed(
        self,
        key: str,
        cid: str,
        post: Any,
        delivery: dict[str, Any],
        by_label: dict[str, list[dict[str, Any]]],
        totals: Counter[str],
    ) -> list[str]:
        """The channel's variant (its text and options on the network) and, on Bluesky, the
        link card frozen at creation (``app.bsky.embed.external``; no card otherwise)."""
        comp = post.composition
        variant = comp.variants.get(cid) if comp is not None else None
        problems: list[str] = []
        totals["network_variants"] += variant is not None
        items = by_label.get("1", [])
        if delivery["status"] != "published" or len(items) != 1 or key in self.tampered:
            return problems
        item = items[0]
        options = {k: v for k, v in (variant or {}).items() if k != "content"}
        default = {"visibility": "public", "spoiler_text": "", "tags": None}
        for name, value in item["options"].items():
            if value != options.get(name, default[name]):
                problems.append(f"{key}: {name} {value!r} on the network, not {options}")
        if self.channels[cid].network != "bluesky":
            return problems
        card = comp.card_path if comp is not None else None
        external = item.get("external")
        if card is None:
            return problems + ([f"{key}: a card nobody asked for: {external}"] if external else [])
        totals["network_bluesky_link_cards"] += 1
        want = (f"{self.link_base}{card}", comp.card_title)
        got = (external or {}).get("uri"), (external or {}).get("title")
        return problems + ([f"{key}: card {got}, frozen {want}"] if got != want else [])

    def _check_steps(
        self,
        key: str,
        channel: NetworkChannel,
        state: dict[str, Any],
        delivery: dict[str, Any],
        by_label: dict[str, list[dict[str, Any]]],
        post: Any,
        totals: Counter[str],
    ) -> list[str]:
        """A thread's later parts and the first comment (``thread_world.check_thread``)."""
        assert self.transport is not None
        comp = post.composition
        if comp is None or (not comp.parts and comp.comment is None):
            extra = sorted(label for label in by_label if label != "1")
            return [f"{key}: {extra} on {channel.network}, a single post"] if extra else []
        if state["status"] == "cancelled" and delivery["status"] != "published":
            extra = sorted(label for label, items in by_label.items() if label != "1" and items)
            return [f"{key}: cancelled, {extra} on {channel.network}"] if extra else []
        if delivery["status"] not in ("published", "failed"):
            return []  # reported by _check_delivery
        writes: dict[str, datetime] = {}
        for write in self.transport.writes.get(key, []):
            writes.setdefault(write.label, write.at)
        lost = {label for k, label in self.transport.lost_steps if k == key}
        if key in self.tampered and not by_label.get("1"):  # part 1 deleted on the network
            by_label["1"] = [{"ref": _root_ref(channel.network, delivery)}]
        elif key in self.tampered:  # part 1 replaced: match the root by its uri
            by_label["1"] = [{**by_label["1"][0], "ref": _root_ref(channel.network, delivery)}]
        due = comment_due(state, comp.delay_seconds) if comp.comment is not None else None
        totals[f"network_{channel.network}_threads"] += bool(comp.parts)
        return check_thread(
            key,
            channel.network,
            delivery,
            by_label,
            comment_due=due,
            writes=writes,
            lost=lost,
            hostile=key in self.transport.hostile_keys,
            totals=totals,
        )

    def _check_uploads(self, totals: Counter[str]) -> list[str]:
        """No item uploaded to Mastodon twice (:meth:`MediaFaults.check`): every upload is
        attached to a status, except those of deliveries the instance refused (a revoked token
        after the upload) and those whose answer was lost."""
        items = list(self.mastodon.media.items.values())
        unattached = [m for m in items if m.status_id is None]
        totals["network_mastodon_uploads"] += len(items)
        totals["network_mastodon_unattached_uploads"] += len(unattached)
        assert self.transport is not None
        refused = len(self.transport.refused_keys)
        lost = sum(self.media_faults.lost_uploads.values())
        problems = self.media_faults.check(self.mastodon.media, self.media_sha, totals)
        if len(unattached) > refused + lost:
            problems.append(
                f"mastodon: {len(unattached)} uploads never attached ({refused} refusals, "
                f"{lost} upload answers lost)"
            )
        return problems

    def _check_delivery(
        self,
        key: str,
        channel: NetworkChannel,
        state: dict[str, Any],
        delivery: dict[str, Any],
        by_label: dict[str, list[dict[str, Any]]],
        totals: Counter[str],
    ) -> list[str]:
        """Part 1 (or the single post) of one delivery against the network."""
        items = by_label.get("1", [])
        assert self.transport is not None
        problems: list[str] = []
        status = delivery["status"]
        totals[f"network_delivery_{status}"] += 1
        if len(items) > 1:
            totals["duplicates"] += len(items) - 1
            totals["network_duplicates"] += len(items) - 1
            problems.append(f"{key}: {len(items)} posts on {channel.network}")
        refused_at = {label for k, label in self.transport.refused_steps if k == key}
        if refused_at == {COMMENT} and status == "published":
            totals["network_refused_at_the_comment"] += 1  # its state: _check_steps
        elif key in self.transport.refused_keys:
            totals["network_refused_keys"] += 1
            # a write whose answer was lost, confirmed by a public read after the refusal
            # (decision NF7), is published; it must then be on the network once (below)
            confirmed = status == "published" and key in self.transport.lost_keys
            if confirmed:
                totals["network_refused_then_confirmed"] += 1
            elif status != "failed" or not (delivery.get("last_error") or "").startswith(
                "reauthorization_required: "
            ):
                problems.append(f"{key}: {channel.network} refused it, delivery {status}")
        if state["status"] == "cancelled" and status != "published":
            # a post cancelled while it waited keeps the channels it had published (checked
            # as published below); every other channel is not on the network
            if items:
                problems.append(f"{key}: cancelled ({status}) but on {channel.network}")
            return problems
        final_at = parse_instant(state["publish_at"])
        if status == "published" and key in self.tampered:  # deleted or replaced, never again
            kind = self.tampered[key]
            if len(items) != (0 if kind == "missing" else 1):
                problems.append(f"{key}: {kind} on {channel.network}, then {len(items)} there")
            return problems
        if status == "published":
            if not items:
                problems.append(f"{key}: published but not on {channel.network}")
                return problems
            item = items[0]
            if item["text"] != delivery["content"]:  # the channel's own (its variant's)
                problems.append(f"{key}: {channel.network} holds stale text {item['text']!r}")
            if self.media_alts is not None:  # nothing published without its media, in order
                want = self.media_alts(list(state.get("media_ids") or []))
                if item.get("alts", []) != want:
                    shown = item.get("alts")
                    problems.append(f"{key}: {channel.network} shows media {shown}, not {want}")
                totals[f"network_{channel.network}_media"] += len(want)
            # a hostile answer's id is dropped, unless a retry learnt the real one
            ids = {item["id"], None} if key in self.transport.hostile_keys else {item["id"]}
            if delivery.get("remote_id") not in ids:
                problems.append(f"{key}: remote_id {delivery.get('remote_id')} is not {item['id']}")
            url = delivery.get("remote_url")
            if url is not None and (len(url) > 2048 or not url.startswith(_LINK_PREFIXES)):
                problems.append(f"{key}: remote_url {url[:80]!r} was kept")
            writes = self.transport.writes.get(key, [])
            first = min((w.at for w in writes if w.label == "1"), default=None)
            made = item.get("at") or first
            if made is None or made < final_at:
                totals["early"] += 1
                totals["network_early"] += 1
                problems.append(f"{key}: on {channel.network} at {made}, publish_at {final_at}")
            if channel.network == "bluesky" and item.get("created_at") != created_at(final_at):
                problems.append(f"{key}: createdAt {item.get('created_at')} is not publish_at")
            return problems
        error = delivery.get("last_error") or ""
        if status == "failed" and error.startswith("reauthorization_required: "):
            totals["network_reauthorization_required"] += 1
            if channel.revoked_at is None:
                problems.append(f"{key}: reauthorization_required but nothing was revoked")
            # a thread refused at a later part lists part 1 (checked with the parts)
            listed = bool(delivery.get("published_parts"))
            if items and key not in self.transport.lost_keys and not listed:
                problems.append(f"{key}: failed but on {channel.network}")
            elif items:
                totals["network_lost_then_revoked"] += 1
            return problems
        problems.append(f"{key}: delivery {status} ({error[:120]})")
        return problems
