"""The seeded world of the fault suite (issue 4): users, channels and posts created through the
real API handler, played through the real sweeper, worker and watchdog handlers on the
simulated clock while a :class:`FaultPlan` injects faults, then checked.

One seed fixes everything: the posts (many sharing the same second), who edits or cancels what
just before, at or after its fire time, the clock skews (up to 2 s for the API, each sweeper and
the watchdog; the worker's clock is the reference, which the receiver also uses), the fault
decisions, the worker batch size, how many sweepers run at once, a sweeper outage, and which
messages are delivered to a second invocation while the first is at its claim. Concurrency is
played as a deterministic interleaving (the second invocation or sweeper runs nested at a chosen
step of the first), and ``uuid.uuid4`` is seeded, so a seed reproduces.

Use :func:`run_scenario` (inside nothing: it starts moto and time-machine itself); it returns a
:class:`ScenarioResult` whose ``problems`` must be empty.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any
from unittest import mock

import boto3
import time_machine
from moto import mock_aws

from functions.reconciler.handler import make_lambda_handler as make_reconciler_handler
from functions.sweeper.handler import make_lambda_handler as make_sweeper_handler
from functions.watchdog.handler import make_lambda_handler as make_watchdog_handler
from functions.worker.handler import make_lambda_handler as make_worker_handler
from local.emulation.lambda_runtime import LambdaContext
from local.moto_speed import fast_moto_transactions
from scheduled_posts.api_app import ApiDependencies, set_dependencies
from scheduled_posts.clock import format_instant, parse_instant
from scheduled_posts.data.aws import reset_clients
from scheduled_posts.data.dlq import DeadLetterQueue
from scheduled_posts.data.due_index import DueIndex
from scheduled_posts.data.media_objects import S3MediaObjects
from scheduled_posts.data.post_store import PostStore
from scheduled_posts.data.queue import DispatchQueue
from scheduled_posts.data.reconcile import ReconcileStore
from scheduled_posts.logic.promotion import promote_entry
from scheduled_posts.logic.publish import MAX_IN_WORKER_WAIT_SECONDS, Publisher
from scheduled_posts.logic.reconcile import Reconciler
from scheduled_posts.logic.recovery import RecoveryDeps
from scheduled_posts.logic.redrive import Redriver
from scheduled_posts.logic.sweep import Sweeper
from scheduled_posts.logic.watchdog import rescue_expired_leases
from scheduled_posts.models.messages import DueEntry
from scheduled_posts.platforms.webhook import WebhookAdapter
from scheduled_posts.settings import SQS_MAX_DELAY_SECONDS
from tests.support.api import ApiClient, fake_resolver
from tests.support.clock import SimClock, WaitCountingClock
from tests.support.driver import BatchReport, Driver
from tests.support.faults import (
    FaultPlan,
    FaultRates,
    FaultyClient,
    FaultyResource,
    FaultySqs,
    FaultyTable,
    FaultyTransport,
    skewed_clock,
)
from tests.support.fixtures import (
    START,
    TEST_VISIBILITY_SECONDS,
    TEST_WORKER_TIMEOUT_SECONDS,
    AwsResources,
    create_resources,
)
from tests.support.lag_bounds import Timing
from tests.support.lateness import (
    Delivered,
    Touch,
    lateness_problems,
    lost_slots,
    rate_limit_wait_seconds,
)
from tests.support.link_site import og_page
from tests.support.media_world import WorldMedia
from tests.support.networks import PDS_URL_ENV, NetworkWorld
from tests.support.outbox_check import check_outbox
from tests.support.receiver import FakeReceiver, RecordedRequest
from tests.support.series_world import SERIES_SETTINGS, WorldSeries
from tests.support.thread_world import Composition, check_planned, compose
from tests.support.verify_world import VERIFY_SETTINGS, WorldVerifier
from tests.support.workflow_world import WorldWorkflow

TERMINAL = {"published", "partially_published", "failed", "cancelled", "missed"}
#: Settings of every world: short retries so simulated time stays small; no pending limit.
WORLD_SETTINGS: dict[str, Any] = {
    "RETRY_BASE_SECONDS": 2.0,
    "RETRY_CAP_SECONDS": 60.0,
    "RETRY_AFTER_CAP_SECONDS": 600.0,  # a huge Retry-After waits 10 min, not an hour
    "MAX_PENDING_POSTS": 1_000_000,
    "WRITE_SHARD_COUNT": 2,
    # the networks' stand-in and the reference PDS listen on 127.0.0.1 (tests/support/networks.py)
    "OUTBOUND_ALLOWED_ORIGINS": "http://127.0.0.1",
    **SERIES_SETTINGS,
    **VERIFY_SETTINGS,
}
#: How far apart the scenario's publish times spread at most (seconds after the first one).
PUBLISH_WINDOW_SECONDS = 900
#: Share of channels created with a ``rate_limit_per_minute`` (1 to 3).
RATE_LIMITED_SHARE = 0.2
#: Share of seeds with one poisoned post (its messages dead-lettered, then redriven).
POISON_SHARE = 0.3
#: Hard stop of a run, in simulated seconds after the last publish time.
SETTLE_LIMIT_SECONDS = 4 * 3600


def reproduce_command(seed: int, posts: int) -> str:
    """The one command that replays a seed."""
    return f".venv/bin/python -m tests.faults.run --seed {seed} --posts {posts}"


@contextlib.contextmanager
def seeded_uuid4(seed: int) -> Iterator[None]:
    """``uuid.uuid4`` from a seeded generator (schedule ids, lease tokens, moto's message ids),
    so a seed replays the same shards and the same SQS order."""
    rng = random.Random(f"uuid-{seed}")
    lock = threading.Lock()

    def uuid4() -> uuid.UUID:
        with lock:
            return uuid.UUID(int=rng.getrandbits(128), version=4)

    with mock.patch("uuid.uuid4", uuid4):
        yield


# -- the plan of the world ----------------------------------------------------------------------


@dataclass
class PlannedPost:
    """One post of the world and what the API answered about it."""

    index: int
    user: str
    channel_ids: list[str]
    publish_at: datetime
    create_at: datetime  # when the API is asked to create it (reference clock)
    content: str
    #: ``("cancel", offset_s)``, ``("move", offset_s, delta_s)``, ``("content", offset_s)``.
    action: tuple[Any, ...] | None = None
    schedule_id: str | None = None
    create_failed: str | None = None
    #: What the API answered the action: ``done``, ``refused`` (409/422) or ``unknown`` (5xx).
    action_result: str | None = None
    final_publish_at: datetime | None = None
    final_content: str | None = None
    #: The post's uploads (``tests/support/media_world.py``), in order.
    media_ids: list[str] = field(default_factory=list)
    #: Its thread, first comment, variants and link card (``tests/support/thread_world.py``).
    composition: Composition | None = None


@dataclass
class ScenarioResult:
    """Totals of one seed and every check that failed (``problems``)."""

    seed: int
    posts: int
    totals: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "posts": self.posts,
            "totals": dict(self.totals),
            "faults": dict(self.faults),
            "problems": self.problems,
        }


class FaultDriver(Driver):
    """The driver with fault gating and nested (deterministically interleaved) invocations.

    * Closes the plan's worker budget for a batch already received ``MAX_RECEIVE_COUNT - 2``
      times, so injected faults alone never dead-letter a message.
    * At a worker's claim (``before_claim``/``after_claim``), with probability
      ``concurrent_rate``, delivers the same SQS message to a second invocation that runs to the
      end before the first continues (SQS at-least-once delivery, played deterministically).
    """

    def __init__(self, *args: Any, plan: FaultPlan, concurrent_rate: float, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.plan = plan
        self.concurrent_rate = concurrent_rate
        self._stack: list[list[dict[str, Any]]] = []
        #: ``race(schedule_id)``: the world's hook to run a due edit or cancel at the claim.
        self.race: Callable[[str], None] | None = None
        self.max_receive = self.aws.settings.MAX_RECEIVE_COUNT

    def invoke(self, messages: list[dict[str, Any]]) -> BatchReport:
        counts = [
            int(m.get("Attributes", {}).get("ApproximateReceiveCount", "1")) for m in messages
        ]
        previous = self.plan.worker_budget_open
        self.plan.worker_budget_open = previous and max(counts) <= self.max_receive - 2
        self._stack.append(messages)
        try:
            return super().invoke(messages)
        finally:
            self._stack.pop()
            self.plan.worker_budget_open = previous

    def interleave(self, point: str, identity: str) -> None:
        """Called by the plan at each crash point: maybe run, right there, the post's edit or
        cancel (between the worker's read and its claim) or a duplicate invocation."""
        if point not in ("before_claim", "after_claim") or len(self._stack) != 1:
            return
        if point == "before_claim" and self.race is not None:
            self.race(identity.split("/", maxsplit=1)[0].removeprefix("POST#"))
        if not self.plan.chance(self.concurrent_rate, "concurrent", point, identity):
            return
        schedule_id = identity.split("/", maxsplit=1)[0].removeprefix("POST#")
        for message in self._stack[-1]:
            if json.loads(message["Body"]).get("schedule_id") == schedule_id:
                self.plan.count(f"concurrent_duplicate_{point}")
                self.plan.touch("in_progress", f"concurrent_duplicate_{point}", schedule_id)
                super_invoke = super().invoke
                self._stack.append([message])
                try:
                    super_invoke([message])
                finally:
                    self._stack.pop()
                return


class _InterleavingPlan(FaultPlan):
    """A plan that gives the driver a chance to interleave at every crash point."""

    driver: FaultDriver | None = None

    def maybe_crash(self, point: str, identity: str) -> None:
        if self.driver is not None and self.enabled:
            self.driver.interleave(point, identity)
        super().maybe_crash(point, identity)


# -- the world -----------------------------------------------------------------------------------


class World:
    """One seed's resources, actors and plan. Build inside ``mock_aws`` and time-machine."""

    def __init__(
        self,
        seed: int,
        posts: int,
        clock: SimClock,
        *,
        rates: FaultRates | None = None,
        concurrent_rate: float = 0.05,
        max_sweepers: int = 3,
        pds_url: str | None = None,
    ) -> None:
        self.seed = seed
        self.n_posts = posts
        self.clock = clock
        self.rng = random.Random(seed)
        self.plan = _InterleavingPlan(seed=seed, rates=rates or FaultRates())
        self.plan.now = clock.now
        self.plan.retry_base_seconds = WORLD_SETTINGS["RETRY_BASE_SECONDS"]
        self.plan.retry_cap_seconds = WORLD_SETTINGS["RETRY_CAP_SECONDS"]
        #: The worker's clock: the reference, counting in-Lambda waits.
        self.worker_clock = WaitCountingClock(clock._traveller)
        self._hot: set[int] = set()
        self.max_sweepers = max_sweepers
        reset_clients()
        self.aws: AwsResources = create_resources(prefix=f"s{seed}", **WORLD_SETTINGS)
        settings = self.settings
        self.receiver = FakeReceiver(clock)  # the reference clock
        #: The users' uploads and the media of each post.
        self.media = WorldMedia(seed, settings, self._call)
        self.receiver.responder = self.plan.responder(self.receiver)
        self.resource = boto3.resource("dynamodb", region_name="us-east-1")
        self.sqs = boto3.client("sqs", region_name="us-east-1")
        skew = lambda: round(self.rng.uniform(-2.0, 2.0), 3)  # noqa: E731
        self.skews = {
            "api": skew(),
            "watchdog": skew(),
            "reconciler": skew(),
            **{f"sweeper{i}": skew() for i in range(max_sweepers)},
        }
        # the worker: reference clock, faulty table, idempotency client, queue, transport
        worker_table = FaultyTable(
            self.resource.Table(settings.POSTS_TABLE_NAME), self.plan, "worker"
        )
        from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

        persistence = DynamoDBPersistenceLayer(
            table_name=settings.IDEMPOTENCY_TABLE_NAME,
            boto3_client=FaultyClient(
                boto3.client("dynamodb", region_name="us-east-1"), self.plan, "worker"
            ),
        )
        transport = FaultyTransport(self.receiver, self.plan)
        #: The world's Mastodon and Bluesky channels (with a reference PDS only).
        self.networks: NetworkWorld | None = None
        if pds_url is not None:
            self.networks = NetworkWorld(seed, self.plan, clock, pds_url)
            self.networks.start()
        self.publisher = Publisher(
            settings,
            store=PostStore(settings.POSTS_TABLE_NAME, table=worker_table),
            queue=DispatchQueue(
                settings.DISPATCH_QUEUE_URL, sqs=self._sqs("worker", self.worker_clock)
            ),
            adapters={
                "webhook": WebhookAdapter(
                    settings,
                    transport=transport,
                    resolver=self.receiver.resolver,
                    media=S3MediaObjects(settings.MEDIA_BUCKET_NAME),
                ),
                **(self.networks.adapters(settings) if self.networks else {}),
            },
            clock=self.worker_clock,
            uniform=random.Random(f"jitter-{seed}").uniform,
            persistence=persistence,
        )
        self.driver = FaultDriver(
            self.aws,
            clock,
            worker=make_worker_handler(lambda: self.publisher),
            sweeper=self.sweep,
            watchdog=self.watchdog,
            batch_size=self.rng.choice([3, 10]),
            plan=self.plan,
            concurrent_rate=concurrent_rate,
        )
        self.plan.driver = self.driver
        self.driver.on_failed = self._redelivered
        self.driver.race = self._race
        # the API: skewed clock, faulty resource, a promoter over faulty collaborators
        api_clock = skewed_clock(clock, self.skews["api"])
        api_due = DueIndex(
            settings.DUE_INDEX_TABLE_NAME,
            table=FaultyTable(self.resource.Table(settings.DUE_INDEX_TABLE_NAME), self.plan, "api"),
        )
        api_queue = DispatchQueue(settings.DISPATCH_QUEUE_URL, sqs=self._sqs("api", api_clock))

        def promote(entry: DueEntry) -> None:
            promote_entry(
                entry, settings=settings, due_index=api_due, queue=api_queue, clock=api_clock
            )

        set_dependencies(
            ApiDependencies(
                settings=settings,
                clock=api_clock,
                resolver=fake_resolver,
                promoter=promote,
                dynamodb=FaultyResource(self.resource, self.plan, "api"),
                # not throttled: see docs/reliability.md, "Known gaps" (a create committed
                # whose idempotency record then fails is created again on a later retry)
                idempotency_client=FaultyClient(
                    boto3.client("dynamodb", region_name="us-east-1"), self.plan, "api_idempotency"
                ),
            )
        )
        self.posts: list[PlannedPost] = []
        self._by_id: dict[str, PlannedPost] = {}
        self.users: dict[str, ApiClient] = {}
        self._api_lock = threading.RLock()
        self.channels: dict[str, list[str]] = {}
        self.outage: tuple[datetime, datetime] | None = None
        self.channel_urls: dict[str, str] = {}
        #: The post whose messages are poisoned until they reach the DLQ (then redriven).
        self.poison: PlannedPost | None = None
        self.redriven_at: datetime | None = None
        self.redrive_problems: list[str] = []
        #: ``rate_limit_per_minute`` of the rate-limited channels, by URL.
        self.rate_limits: dict[str, int] = {}
        self.totals: Counter[str] = Counter()
        #: The world's recurring schedules and the materializer (issue 13).
        self.series = WorldSeries(self)
        #: The network verifier's runs and the networks' deletions (issue 31).
        self.verifier = WorldVerifier(self)
        #: The posting queue's concurrent creates and cancels, the crashed import (issue 27).
        self.workflow = WorldWorkflow(self)

    @property
    def settings(self) -> Any:
        return self.aws.settings

    def _sqs(self, role: str, clock: SimClock) -> FaultySqs:
        """``role``'s SQS client: faulty, recording each send on ``clock`` (the sender's), and
        heating the second its message becomes visible (so time moves in 1 s steps there)."""
        sqs = FaultySqs(self.sqs, self.plan, role, clock)
        sqs.on_visible = lambda at: self._heat(at, before=0)
        return sqs

    def _redelivered(self, report: BatchReport) -> None:
        """A worker invocation left messages to reappear after the visibility timeout: touch
        their posts (not the post whose crash after its claim the watchdog recovers) and heat
        the second they reappear."""
        spared = None
        if report.crashed and self.plan.last_crash and self.plan.last_crash[0] != "before_claim":
            spared = self.plan.last_crash[1]
        failed = set(report.failed_ids)
        for mid, body in zip(report.message_ids, report.bodies, strict=True):
            sid = body.get("schedule_id") if isinstance(body, dict) else None
            if mid in failed and sid and sid != spared:
                kind = "crash_batch" if report.crashed else "record_failed"
                self.plan.touch("record_redelivered", kind, sid)
        self._heat(self.clock.now() + timedelta(seconds=TEST_VISIBILITY_SECONDS), before=0)

    # -- actors ----------------------------------------------------------------------------

    def sweep(self) -> None:
        """The sweeper schedule: one to three sweepers at once (the later ones run nested in
        the first one's first send, after its reads), none during the outage."""
        now = self.clock.now()
        if self.outage is not None and self.outage[0] <= now < self.outage[1]:
            self.plan.count("sweeper_outage_skipped_run")
            return
        n = 1
        while n < self.max_sweepers and self.plan.draw("sweepers", now.isoformat(), n) < 0.2:
            n += 1
        runs = [self._sweeper_run(i) for i in range(n)]
        if n > 1:
            self.plan.count(f"sweepers_at_once_{n}")
            first_queue = runs[0][1]
            pending = list(runs[1:])

            def others() -> None:
                first_queue.before_send = None
                for run, _ in pending:
                    run()

            first_queue.before_send = others
        runs[0][0]()

    def _sweeper_run(self, i: int) -> tuple[Any, FaultySqs]:
        settings = self.settings
        sqs = self._sqs("sweeper", skewed_clock(self.clock, self.skews[f"sweeper{i}"]))
        sweeper = Sweeper(
            settings,
            due_index=DueIndex(
                settings.DUE_INDEX_TABLE_NAME,
                table=FaultyTable(
                    self.resource.Table(settings.DUE_INDEX_TABLE_NAME), self.plan, "sweeper"
                ),
            ),
            queue=DispatchQueue(settings.DISPATCH_QUEUE_URL, sqs=sqs),
            clock=skewed_clock(self.clock, self.skews[f"sweeper{i}"]),
        )
        handler = make_sweeper_handler(lambda: sweeper)

        def run() -> None:
            try:
                handler({}, LambdaContext("sweeper", 60, clock=self.clock.seconds))
            except Exception:  # a failed invocation; the next scheduled run catches up
                self.totals["sweeper_invocation_errors"] += 1

        return run, sqs

    def watchdog(self) -> None:
        settings = self.settings
        store = PostStore(
            settings.POSTS_TABLE_NAME,
            table=FaultyTable(
                self.resource.Table(settings.POSTS_TABLE_NAME), self.plan, "watchdog"
            ),
        )
        queue = DispatchQueue(
            settings.DISPATCH_QUEUE_URL,
            sqs=self._sqs("watchdog", skewed_clock(self.clock, self.skews["watchdog"])),
        )
        clock = skewed_clock(self.clock, self.skews["watchdog"])
        handler = make_watchdog_handler(
            lambda: rescue_expired_leases(settings, store=store, queue=queue, clock=clock)
        )
        try:
            handler({}, LambdaContext("watchdog", 60, clock=self.clock.seconds))
        except Exception:
            self.totals["watchdog_invocation_errors"] += 1

    def reconcile(self) -> None:
        """The reconciler schedule's run, with its own skewed clock and faulty collaborators."""
        settings = self.settings
        role = "reconciler"
        reconciler = Reconciler(
            settings,
            due_index=DueIndex(
                settings.DUE_INDEX_TABLE_NAME,
                table=FaultyTable(
                    self.resource.Table(settings.DUE_INDEX_TABLE_NAME), self.plan, role
                ),
            ),
            store=ReconcileStore(
                settings.POSTS_TABLE_NAME,
                settings.IDEMPOTENCY_TABLE_NAME,
                dynamodb=FaultyResource(self.resource, self.plan, role),
            ),
            dispatch=PostStore(
                settings.POSTS_TABLE_NAME,
                table=FaultyTable(self.resource.Table(settings.POSTS_TABLE_NAME), self.plan, role),
            ),
            queue=DispatchQueue(
                settings.DISPATCH_QUEUE_URL,
                sqs=self._sqs(role, skewed_clock(self.clock, self.skews[role])),
            ),
            clock=skewed_clock(self.clock, self.skews[role]),
        )
        handler = make_reconciler_handler(reconciler.run)
        try:
            answer = handler({}, LambdaContext("reconciler", 300, clock=self.clock.seconds))
            self.totals["reconciler_rescued"] += len(answer.get("rescued") or {})
        except Exception:
            self.totals["reconciler_invocation_errors"] += 1

    # -- API calls (retried like a client would on 5xx) -------------------------------------

    def _call(self, user: str, method: str, path: str, body: Any = None, **kw: Any) -> Any:
        # One API invocation at a time, as in one Lambda execution environment: the worker
        # runs a batch's records on threads, and an edit or cancel at the claim calls the API
        # from them; Powertools' resolver keeps the current request on its module-level app.
        with self._api_lock:
            client = self.users[user]
            answer = None
            for _ in range(8):
                answer = client.request(method, path, body, **kw)
                if answer.status < 500:
                    return answer
                self.totals["api_5xx_retried"] += 1
            return answer

    # -- building and playing ---------------------------------------------------------------

    def build(self) -> None:
        """Users and channels (through the API), then the plan of posts and actions."""
        rng = self.rng
        limits = random.Random(f"rate-limit-{self.seed}")  # leaves the world's draws alone
        n_users = max(1, min(4, self.n_posts // 20 or 1))
        for u in range(n_users):
            user = f"user{u}-{self.seed}"
            self.users[user] = ApiClient(user)
            ids = []
            for c in range(rng.randint(2, 4)):
                url = f"https://hooks.example.com/{user}/c{c}"
                body: dict[str, Any] = {"platform": "webhook", "name": f"c{c}", "url": url}
                if limits.random() < RATE_LIMITED_SHARE:
                    body["rate_limit_per_minute"] = limits.choice([1, 2, 3])
                answer = self._call(user, "POST", "/v1/channels", body)
                assert answer.status == 201, answer.json
                ids.append(answer.json["channel_id"])
                self.channel_urls[answer.json["channel_id"]] = url
                if "rate_limit_per_minute" in body:
                    self.rate_limits[url] = body["rate_limit_per_minute"]
                self.receiver.add_secret(url, answer.json["signing_secret"])
            self.channels[user] = ids
        if self.networks is not None:
            self._add_network_channels(next(iter(self.users)))
            self.networks.media_alts = self.media.alts
        self.media.build(list(self.users))
        if self.networks is not None:
            self.networks.media_sha = {m: u.sha256 for m, u in self.media.by_id.items()}
        start = self.clock.now()
        first = start + timedelta(seconds=30)
        seconds = max(1, self.n_posts // 8)  # about eight posts per second
        window = max(120, min(PUBLISH_WINDOW_SECONDS, self.n_posts))
        slots = sorted(rng.sample(range(window), min(seconds, window)))
        for i in range(self.n_posts):
            user = rng.choice(list(self.users))
            count = rng.choice([1, 1, 2, 2, 3])
            channels = rng.sample(self.channels[user], min(count, len(self.channels[user])))
            ms = rng.choice([0, 0, 0, 1, 500, 999])
            publish_at = first + timedelta(seconds=rng.choice(slots), milliseconds=ms)
            if rng.random() < 0.5:  # beyond the API's promotion window: the sweeper sends it
                publish_at += timedelta(seconds=self.settings.LOOKAHEAD_SECONDS + 120)
            create_at = start
            if rng.random() < 0.15:  # created late, inside the lookahead: promoted at once
                create_at = max(start, publish_at - timedelta(seconds=rng.randint(4, 120)))
            action: tuple[Any, ...] | None = None
            roll = rng.random()
            offset = rng.choice([-5, -2, -1, 0, 0, 1, 2, 5])
            if roll < 0.06:
                action = ("cancel", offset)
            elif roll < 0.12:
                action = ("move", offset, rng.choice([-20, -8, 30, 90]))
            elif roll < 0.15:
                action = ("content", offset)
            self.posts.append(
                PlannedPost(
                    index=i,
                    user=user,
                    channel_ids=channels,
                    publish_at=publish_at,
                    create_at=create_at,
                    content=f"post {i} of seed {self.seed}",
                    action=action,
                    media_ids=self.media.choose(user),
                )
            )
            self._compose(self.posts[-1])
        poison = random.Random(f"poison-{self.seed}")
        if poison.random() < POISON_SHARE:
            candidates = [p for p in self.posts if p.action is None]
            if candidates:
                self.poison = poison.choice(candidates)
        last = max(p.publish_at for p in self.posts)
        if self.networks is not None:
            self.networks.plan_revocations(first, last)
            skip = {p.index for p in self.posts if p.action is not None or p is self.poison}
            self.networks.plan_forced(self.posts, skip)
            self.verifier.plan()
        if rng.random() < 0.5:  # a sweeper outage somewhere in the window
            begin = first + timedelta(seconds=rng.randint(0, window + 720))
            self.outage = (begin, min(begin + timedelta(seconds=rng.randint(120, 600)), last))
            self.plan.count("sweeper_outage")
        self.series.build()
        self.workflow.build()

    def _compose(self, post: PlannedPost) -> None:
        """The post's thread, comment, variants and card (``thread_world.compose``)."""
        networks = self.networks
        platforms = {
            cid: networks.channels[cid].network
            if networks is not None and cid in networks.channels
            else "webhook"
            for cid in post.channel_ids
        }
        link = networks.link_base if networks is not None else None
        post.composition = compose(
            self.seed, post.index, platforms, has_media=bool(post.media_ids), link=link
        )

    def _add_network_channels(self, user: str) -> None:
        """The world's Mastodon and Bluesky channels, for ``user`` (through the API, which
        checks the credentials with the stand-in and the PDS)."""
        assert self.networks is not None
        for body in self.networks.channel_bodies():
            answer = self._call(user, "POST", "/v1/channels", body)
            assert answer.status == 201, answer.json
            cid = answer.json["channel_id"]
            self.channels[user].append(cid)
            self.channel_urls[cid] = body.get("instance_url") or body["service_url"]
            self.networks.add_channel(body["platform"], cid)

    def _create(self, post: PlannedPost) -> None:
        comp = post.composition or Composition()
        site = self.networks.site if self.networks is not None else None
        if comp.card_path and site is not None:
            site.html(comp.card_path, og_page(comp.card_title or "", "a page", None))
        answer = self._call(
            post.user,
            "POST",
            "/v1/scheduled-posts",
            {
                "content": post.content,
                "publish_at": format_instant(post.publish_at),
                "channel_ids": post.channel_ids,
                "media_ids": post.media_ids,
                **comp.body(),
            },
            headers=(
                {"Idempotency-Key": f"create-{self.seed}-{post.index}"} if post.index % 2 else {}
            ),
        )
        if answer.status != 201:
            post.create_failed = f"{answer.status} {answer.json}"
            return
        post.schedule_id = answer.json["schedule_id"]
        self._by_id[post.schedule_id] = post
        if comp.card_path and site is not None:  # the page changes: the card stays frozen
            self.totals["link_cards_fetched"] += answer.json.get("link_card") is not None
            site.html(comp.card_path, og_page("changed after scheduling", "changed", None))
        if self.networks is not None:
            self.networks.remember(post.index, post.schedule_id)
        if post is self.poison:
            self.plan.poisoned.add(post.schedule_id)
            self.plan.count("poison_message")
        post.final_publish_at = post.publish_at
        post.final_content = post.content

    def _race(self, schedule_id: str) -> None:
        """At a worker's claim: run this post's edit or cancel now when it is due within 5 s
        (the claim and the API's write race on ``status = scheduled AND version = :v``); for
        an occurrence, maybe its series' due edit."""
        self.series.race(schedule_id)
        post = self._by_id.get(schedule_id)
        if post is None or post.action is None or post.action_result is not None:
            return
        at = post.publish_at + timedelta(seconds=post.action[1])
        if abs((at - self.clock.now()).total_seconds()) > 5:
            return
        if self.plan.draw("race", post.index) < 0.7:
            self.plan.count("api_write_at_the_claim")
            self._act(post)

    def _act(self, post: PlannedPost) -> None:
        assert post.action is not None and post.schedule_id is not None
        path = f"/v1/scheduled-posts/{post.schedule_id}"
        kind = post.action[0]
        if kind == "cancel":
            answer = self._call(post.user, "DELETE", path)
        elif kind == "move":
            new = max(
                post.publish_at + timedelta(seconds=post.action[2]),
                self.clock.now() + timedelta(seconds=3),
            )
            answer = self._call(post.user, "PATCH", path, {"publish_at": format_instant(new)})
            if answer.status == 200:
                post.final_publish_at = parse_instant(answer.json["publish_at"])
                self._heat(post.final_publish_at)
        else:
            content = f"{post.content} (edited)"
            answer = self._call(post.user, "PATCH", path, {"content": content})
            if answer.status == 200:
                post.final_content = content
        self.totals[f"api_{kind}_{answer.status}"] += 1
        if answer.status == 200:
            post.action_result = "done"
        elif answer.status in (409, 422):
            post.action_result = "refused"
        else:
            post.action_result = "unknown"

    def play(self) -> None:
        """Create, act and tick on the simulated clock until every post settled.

        Time moves in 1 s steps around every publish time and while the worker is busy, and
        jumps (at most 5 s, 30 s once everything is due) over idle stretches.
        """
        events: list[tuple[datetime, int, str, PlannedPost]] = []
        for post in self.posts:
            events.append((post.create_at, 0, "create", post))
            if post.action is not None:
                at = post.publish_at + timedelta(seconds=post.action[1])
                at = max(at, post.create_at + timedelta(seconds=1))
                events.append((at, 1, "act", post))
        events.sort(key=lambda e: (e[0], e[1], e[3].index))
        last_publish = max(*(p.publish_at for p in self.posts), self.series.last_instant())
        limit = last_publish + timedelta(seconds=SETTLE_LIMIT_SECONDS)
        for post in self.posts:
            self._heat(post.publish_at)
        self.next_reconcile_at = self.clock.now()
        i = 0
        while True:
            now = self.clock.now()
            # API calls due now: some before the worker drains this second, some after
            before, after = [], []
            while i < len(events) and events[i][0] <= now:
                _, _, what, post = events[i]
                i += 1
                if what == "act" and (post.schedule_id is None or post.action_result):
                    continue
                late = what == "act" and self.plan.draw("order", post.index) < 0.5
                (after if late else before).append((what, post))
            for what, post in before:
                self._create(post) if what == "create" else self._act(post)
            reports_before = len(self.driver.reports)
            if self.networks is not None:
                self.networks.tick(now)
            busy_series = self.series.tick()
            busy_series = self.workflow.tick(now) or busy_series
            self.verifier.tick(now)
            if now >= self.next_reconcile_at:
                self.reconcile()
                self.next_reconcile_at = now + timedelta(
                    seconds=self.settings.RECONCILE_INTERVAL_SECONDS
                )
            self.driver.tick()
            busy_dlq = self._maybe_redrive()
            for what, post in after:
                if what == "create":
                    self._create(post)
                elif post.action_result is None:
                    self._act(post)
            busy = len(self.driver.reports) > reports_before or bool(after) or busy_dlq
            busy = busy or busy_series
            now = self.clock.now()
            done = i >= len(events) and self.series.done()
            done = done and self.workflow.done(now)
            done = done and self.verifier.settled(now)
            if done and now > last_publish and not busy and self._settled():
                return
            if now >= limit:
                self.totals["hit_settle_limit"] += 1
                return
            second = int(now.timestamp())
            if busy or second + 1 in self._hot or second in self._hot:
                step = 1.0
            else:
                step = 5.0 if now <= last_publish + timedelta(seconds=120) else 30.0
                hot_after = [h for h in range(second + 1, second + int(step) + 1) if h in self._hot]
                if hot_after:
                    step = max(1.0, hot_after[0] - now.timestamp())
                upcoming = [
                    self.driver.next_sweep_at,
                    self.driver.next_watchdog_at,
                    self.next_reconcile_at,
                    *self.series.upcoming(),
                    *self.workflow.upcoming(),
                    *([self.verifier.next_run_at] if self.verifier.next_run_at else []),
                ]
                if i < len(events):
                    upcoming.append(events[i][0])
                for at in upcoming:
                    if at > now:
                        step = min(step, max(0.001, (at - now).total_seconds()))
            self.clock.advance(step)
            self.totals["ticks"] += 1

    def _maybe_redrive(self) -> bool:
        """Once the poisoned post's messages reach the DLQ: end the poison and redrive the DLQ
        inside the world (``logic/redrive.py``, as ``make redrive`` does), then again whenever
        a later message of that post (a reconciler's rescue, poisoned too) arrives there. A
        redriven message of any other post is a problem (no fault forced it there). True when
        the DLQ held something."""
        if self.poison is None or self.poison.schedule_id is None:
            return False
        depth = self.sqs.get_queue_attributes(
            QueueUrl=self.settings.DISPATCH_DLQ_URL,
            AttributeNames=["ApproximateNumberOfMessages"],
        )["Attributes"]["ApproximateNumberOfMessages"]
        if not int(depth):
            return False
        self.plan.poisoned.clear()
        self.redriven_at = self.redriven_at or self.clock.now()
        settings = self.settings
        deps = RecoveryDeps(
            settings,
            clock=self.clock,
            dispatch=PostStore(settings.POSTS_TABLE_NAME),
            store=ReconcileStore(settings.POSTS_TABLE_NAME, settings.IDEMPOTENCY_TABLE_NAME),
            queue=DispatchQueue(
                settings.DISPATCH_QUEUE_URL, sqs=self.sqs
            ),  # the operator: no faults
        )
        lines = Redriver(deps, dlq=DeadLetterQueue(settings.DISPATCH_DLQ_URL, sqs=self.sqs)).run()
        for line in lines:
            self.totals[f"redrive_{line.action}"] += 1
            if line.schedule_id != self.poison.schedule_id:
                self.redrive_problems.append(
                    f"DLQ held a message of {line.schedule_id} no fault forced there "
                    f"({line.why_there}); redrive: {line.action}"
                )
        return True

    def _heat(self, publish_at: datetime, before: int = 2) -> None:
        second = int(publish_at.timestamp())
        self._hot.update(range(second - before, second + 3))

    def _settled(self) -> bool:
        attrs = self.sqs.get_queue_attributes(
            QueueUrl=self.settings.DISPATCH_QUEUE_URL,
            AttributeNames=[
                "ApproximateNumberOfMessages",
                "ApproximateNumberOfMessagesNotVisible",
                "ApproximateNumberOfMessagesDelayed",
            ],
        )["Attributes"]
        if any(int(v) for v in attrs.values()):
            return False
        table = self.resource.Table(self.settings.POSTS_TABLE_NAME)
        for shard in range(self.settings.WRITE_SHARD_COUNT):
            found = table.query(
                IndexName="by_lease",
                KeyConditionExpression="lease_shard = :s",
                ExpressionAttributeValues={":s": f"LEASE#{shard}"},
                Limit=1,
            )
            if found.get("Items"):
                return False
        overdue = table.scan(  # the harness may scan; the service never does
            FilterExpression="#s = :scheduled AND publish_at < :now",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={
                ":scheduled": "scheduled",
                ":now": format_instant(self.clock.now()),
            },
        )
        return not overdue.get("Items")

    # -- checks ----------------------------------------------------------------------------

    def check(self) -> ScenarioResult:
        """Every check of issue 4; returns totals and problems (empty when all hold)."""
        self.plan.enabled = False
        result = ScenarioResult(seed=self.seed, posts=self.n_posts)
        problems = result.problems
        totals = result.totals
        totals.update(self.totals)
        receiver = self.receiver
        by_pair: dict[tuple[str, str], list[RecordedRequest]] = {}
        for r in receiver.requests:
            payload = r.payload or {}
            pair = (str(payload.get("schedule_id")), str(payload.get("channel_id")))
            by_pair.setdefault(pair, []).append(r)
        totals["requests"] = receiver.count()
        totals["raw_resends"] = receiver.raw_resends()
        if receiver.raw_resends() > self.plan.unobserved_2xx:
            problems.append(
                f"{receiver.raw_resends()} raw re-sends but only {self.plan.unobserved_2xx} 2xx "
                "went unobserved: a delivery the worker knew of was sent again"
            )
        totals["deliveries"] = len(receiver.accepted_keys())
        totals["bad_signatures"] = len(receiver.bad_signatures())
        if receiver.bad_signatures():
            problems.append(f"{len(receiver.bad_signatures())} request(s) with a bad signature")
        early = list(receiver.early_requests())
        expected_keys: set[str] = set()
        delivered: dict[str, Delivered] = {}
        versions: dict[str, tuple[str, int]] = {}
        states: dict[str, dict[str, Any]] = {}
        network_ids = set(self.networks.channels) if self.networks is not None else set()
        for post in self.posts:
            totals["posts"] += 1
            if post.schedule_id is None:
                problems.append(f"post {post.index}: create failed: {post.create_failed}")
                continue
            sid = post.schedule_id
            got = self._call(post.user, "GET", f"/v1/scheduled-posts/{sid}")
            attempts = self._call(post.user, "GET", f"/v1/scheduled-posts/{sid}/attempts")
            if got.status != 200 or attempts.status != 200:
                problems.append(f"post {sid}: GET answered {got.status}/{attempts.status}")
                continue
            state = got.json
            states[sid] = state
            status = state["status"]
            totals[f"status_{status}"] += 1
            versions[sid] = (status, int(state["version"]))
            if status not in TERMINAL:
                totals["stuck"] += 1
                problems.append(f"post {sid}: stuck in {status!r} ({state['deliveries']})")
                continue
            cancel = post.action is not None and post.action[0] == "cancel"
            if cancel and post.action_result == "done" and status != "cancelled":
                problems.append(f"post {sid}: cancel answered 200 but status is {status}")
            if status == "cancelled":
                if not cancel or post.action_result == "refused":
                    problems.append(f"post {sid}: cancelled but nobody cancelled it")
                # A post cancelled while it waited for its next attempt keeps the channels it
                # had published (decision "A post waiting for its next attempt can be
                # cancelled"); every other channel was never accepted. Network channels: below.
                deliveries = {d["channel_id"]: d for d in state["deliveries"]}
                for cid in post.channel_ids:
                    key = f"{sid}:{cid}"
                    if cid in network_ids:
                        continue
                    accepted = receiver.accepted_request(key)
                    if deliveries[cid]["status"] == "published":
                        expected_keys.add(key)
                        if accepted is None:
                            problems.append(f"{key}: published but never accepted by the receiver")
                    elif accepted is not None:
                        problems.append(
                            f"{key}: cancelled ({deliveries[cid]['status']}) but accepted"
                        )
                continue
            if cancel and post.action_result == "done":
                continue
            final_at = parse_instant(state["publish_at"])
            if post.action_result != "unknown" and post.final_publish_at != final_at:
                problems.append(
                    f"post {sid}: publish_at {state['publish_at']} but the API answered "
                    f"{post.final_publish_at}"
                )
            if post.action_result != "unknown" and state["content"] != post.final_content:
                problems.append(f"post {sid}: content {state['content']!r} is not the last edit")
            rows_by_channel: dict[str, list[dict[str, Any]]] = {}
            for row in attempts.json["items"]:
                rows_by_channel.setdefault(row["channel_id"], []).append(row)
            deliveries = {d["channel_id"]: d for d in state["deliveries"]}
            published = 0
            for cid in post.channel_ids:
                problems += check_planned(
                    f"{sid}:{cid}", post.composition, cid, deliveries[cid], state["content"]
                )
                if cid in network_ids:  # checked on the network below
                    published += deliveries[cid]["status"] == "published"
                    continue
                key = f"{sid}:{cid}"
                requests = by_pair.get((sid, cid), [])
                rows = rows_by_channel.get(cid, [])
                delivery = deliveries[cid]
                rejected = key in self.plan.rejected_keys
                early += [r for r in requests if r.at < final_at and r not in early]
                keys_2xx = {r.idempotency_key for r in requests if r.answer.succeeds}
                if len(keys_2xx) > 1:
                    totals["duplicates"] += len(keys_2xx) - 1
                    problems.append(f"{key}: 2xx under {len(keys_2xx)} Idempotency-Keys")
                accepted = receiver.accepted_request(key)
                want = "failed" if rejected else "published"
                if delivery["status"] != want:
                    problems.append(f"{key}: delivery {delivery['status']}, expected {want}")
                if want == "published":
                    published += 1
                    expected_keys.add(key)
                    if accepted is None:
                        problems.append(f"{key}: published but never accepted by the receiver")
                    else:
                        payload = accepted.payload or {}
                        if payload.get("publish_at") != state["publish_at"]:
                            problems.append(f"{key}: delivered a stale publish_at")
                        if payload.get("content") != delivery["content"]:  # its own text
                            problems.append(f"{key}: delivered stale content")
                        if payload.get("parts", []) != delivery["parts"]:  # in the one body
                            problems.append(f"{key}: delivered parts {payload.get('parts')}")
                        problems += self.media.check_webhook(key, payload, post.media_ids)
                        last = delivered.get(sid)
                        if last is None or accepted.at > last.delivered_at:
                            delivered[sid] = Delivered(final_at, accepted.at)
                if len(requests) > len(rows):
                    problems.append(
                        f"{key}: receiver saw {len(requests)} requests, attempts list {len(rows)}"
                    )
                n_published = sum(1 for r in rows if r["outcome"] == "published")
                if n_published != (1 if delivery["status"] == "published" else 0):
                    problems.append(f"{key}: {n_published} published attempt(s) in the history")
                statuses = Counter(r.answer.status for r in requests if r.answer.kind == "http")
                for row in rows:
                    h = row.get("http_status")
                    if h is not None and row["outcome"] != "published" and statuses[h] == 0:
                        problems.append(f"{key}: attempt with HTTP {h} the receiver never sent")
                if delivery["attempts"] < (1 if requests else 0):
                    problems.append(f"{key}: {len(requests)} request(s) but attempts = 0")
                problems += _rate_limited_used_attempts(key, rows, totals)
            want_status = (
                "published"
                if published == len(post.channel_ids)
                else "partially_published"
                if published
                else "failed"
            )
            if status != want_status:
                problems.append(f"post {sid}: status {status}, expected {want_status}")
        problems += self.series.check(totals, expected_keys, versions)
        problems += self.workflow.check(totals)
        unexpected = receiver.accepted_keys() - expected_keys
        if unexpected:
            totals["duplicates"] += len(unexpected)
            problems.append(f"{len(unexpected)} accepted key(s) not owed: {sorted(unexpected)[:3]}")
        totals["early"] = len(early)
        for r in early[:5]:
            problems.append(
                f"early request {r.idempotency_key} at {format_instant(r.at)} "
                f"(publish_at {(r.payload or {}).get('publish_at')})"
            )
        if self.networks is not None:
            problems += self.networks.check(self.posts, states, self._channel_status, totals)
        problems += self._check_lateness(delivered, totals)
        problems += self._check_sends(totals)
        problems += self._check_sweeper_resends(versions, totals)
        problems += self._check_rate_limits(totals)
        began = {  # cancelled after a channel published: the entry stays for the verifier
            sid
            for sid, state in states.items()
            if any(d["status"] == "published" for d in state["deliveries"])
        }
        problems += self._check_due_index(versions, began, totals)
        if self.poison is not None and self.redriven_at is None:
            problems.append(f"post {self.poison.schedule_id}: poisoned but never dead-lettered")
        problems += self.redrive_problems[:5]
        dlq = self._drain_dlq()
        totals["dlq"] = len(dlq)
        if dlq:  # the plan never lets injected faults alone dead-letter a message
            problems.append(f"DLQ holds {len(dlq)} message(s) no fault forced there: {dlq[:3]}")
        result.faults.update(self.plan.injected)
        result.totals["faults"] = sum(self.plan.injected.values())
        return result

    def _channel_status(self, channel_id: str) -> str | None:
        user = next(iter(self.users))
        answer = self._call(user, "GET", f"/v1/channels/{channel_id}")
        return answer.json.get("status") if answer.status == 200 else None

    def timing(self) -> Timing:
        """The failure table's numbers in this world."""
        return Timing.of(self.settings, worker_timeout_seconds=TEST_WORKER_TIMEOUT_SECONDS)

    def _check_lateness(self, delivered: dict[str, Delivered], totals: Counter[str]) -> list[str]:
        """Every delivered post within the lag its faults explain (``tests.support.lateness``);
        a sweeper outage touches each post due before it ended by what was left of it, plus one
        sweep."""
        touches = list(self.plan.touches) + self._rate_limit_touches(delivered)
        poisoned = self.poison.schedule_id if self.poison is not None else None
        if poisoned in delivered and self.redriven_at is not None:
            waited = (self.redriven_at - delivered[poisoned].publish_at).total_seconds()
            touches.append(
                Touch("dlq_redrive", "poison_message", self.redriven_at, poisoned, waited)
            )
        if self.outage is not None:
            begin, end = self.outage
            sweep = float(self.settings.SWEEP_INTERVAL_SECONDS)
            for sid, post in delivered.items():
                if post.publish_at <= end + timedelta(seconds=sweep):
                    left = max(0.0, (end - max(begin, post.publish_at)).total_seconds())
                    if begin <= post.publish_at + timedelta(seconds=self.timing().lookahead):
                        touches.append(
                            Touch("sweeper_outage", "sweeper_outage", begin, sid, left + sweep)
                        )
        return lateness_problems(delivered, touches, self.timing(), totals)[:10]

    def _rate_limit_touches(self, delivered: dict[str, Delivered]) -> list[Touch]:
        """A post on a rate-limited channel may wait one minute per ``rate_limit_per_minute``
        requests the channel received between its ``publish_at`` and its delivery, and slots
        that worker faults of the channel's other posts may have left unused
        (:func:`tests.support.lateness.lost_slots`), plus one."""
        touches = []
        faults = list(self.plan.touches)
        for post in self.posts:
            sid = post.schedule_id
            if sid is None or sid not in delivered:
                continue
            d = delivered[sid]
            for cid in post.channel_ids:
                url = self.channel_urls[cid]
                limit = self.rate_limits.get(url)
                if limit is None:
                    continue
                ahead = sum(
                    1
                    for r in self.receiver.requests
                    if r.url == url and d.publish_at <= r.at < d.delivered_at
                )
                others = {
                    p.schedule_id
                    for p in self.posts
                    if p.schedule_id not in (None, sid) and cid in p.channel_ids
                }
                lost = lost_slots(faults, others, d.publish_at, d.delivered_at)
                wait = rate_limit_wait_seconds(ahead, lost, limit)
                kind = f"rate_limit_{limit} ({ahead} ahead, {lost} lost)"
                touches.append(Touch("rate_limited", kind, d.publish_at, sid, wait))
        return touches

    def _check_rate_limits(self, totals: Counter[str]) -> list[str]:
        """At the receiver: no rate-limited channel got more requests in one UTC minute (the
        reference clock) than its ``rate_limit_per_minute``."""
        per_minute: Counter[tuple[str, str]] = Counter()
        for r in self.receiver.requests:
            if r.url in self.rate_limits:
                per_minute[(r.url, r.at.strftime("%Y-%m-%dT%H:%M"))] += 1
        totals["rate_limited_requests"] += sum(per_minute.values())
        problems = []
        for (url, minute), n in sorted(per_minute.items()):
            if n > self.rate_limits[url]:
                totals["rate_limit_exceeded"] += 1
                problems.append(
                    f"{url} got {n} requests in {minute}, its limit is {self.rate_limits[url]}"
                )
        return problems[:5]

    def _check_sends(self, totals: Counter[str]) -> list[str]:
        """No message surfaces before its time: each accepted send's visibility time by its
        sender's clock (the clock that chose ``DelaySeconds``) is not before ``max(publish_at,
        not_before)``, unless the wait exceeded the 900 s SQS limit (a chained wait); and every
        in-Lambda wait of the worker is at most ``MAX_IN_WORKER_WAIT_SECONDS``."""
        problems: list[str] = []
        for role, sent_at, delay, body in self.plan.sends:
            totals["sends"] += 1
            if "publish_at" not in body:
                continue
            target = parse_instant(body["publish_at"])
            if body.get("not_before"):
                target = max(target, parse_instant(body["not_before"]))
            if delay < SQS_MAX_DELAY_SECONDS and sent_at + timedelta(seconds=delay) < target:
                totals["early_surface"] += 1
                if len(problems) < 5:
                    problems.append(
                        f"message of {body.get('schedule_id')} sent by the {role} at "
                        f"{format_instant(sent_at)} with DelaySeconds={delay} surfaces before "
                        f"{format_instant(target)}"
                    )
        waits = self.worker_clock.waits
        totals["in_lambda_waits"] += len(waits)
        totals["in_lambda_wait_ms"] += round(sum(waits) * 1000)
        longest = max(waits, default=0.0)
        if longest > MAX_IN_WORKER_WAIT_SECONDS:
            problems.append(f"the worker waited {longest:.3f} s in Lambda (at most 1 s)")
        return problems

    def _check_sweeper_resends(
        self, versions: dict[str, tuple[str, int]], totals: Counter[str]
    ) -> list[str]:
        """A refused sweeper send is sent again by a sweeper (or was sent by the API's
        promotion), never left to the reconciler: the watermark moves only past pages whose
        every send SQS accepted (``logic/sweep.py``; the failure table's row
        ``sweeper_send_refused``). Checked for the world's own posts still at the refused
        message's version and not cancelled (an edit or cancel moves or deletes the entry;
        series occurrences are promoted by the materializer through a queue the harness does
        not record)."""
        sent = {
            (str(body.get("schedule_id")), body.get("version"))
            for role, _, _, body in self.plan.sends
            if role in ("sweeper", "api")
        }
        own = {p.schedule_id for p in self.posts if p.schedule_id is not None}
        problems: list[str] = []
        for role, at, body in self.plan.refused_sends:
            sid, version = str(body.get("schedule_id")), body.get("version")
            if role != "sweeper" or sid not in own or sid not in versions:
                continue
            status, current = versions[sid]
            if status == "cancelled" or current != version:
                continue
            totals["sweeper_refusals_checked"] += 1
            if (sid, version) not in sent and len(problems) < 5:
                problems.append(
                    f"post {sid}: the sweeper's send of version {version} was refused at "
                    f"{format_instant(at)} and no sweeper sent it again (the watermark moved "
                    "past it)"
                )
        return problems

    def _check_due_index(
        self, versions: dict[str, tuple[str, int]], began: set[str], totals: Counter[str]
    ) -> list[str]:
        """No due-index entry (or late marker) left behind: each names a post at its current
        version, and no cancelled post has one unless it was cancelled after an attempt
        (``began``: the reconciler and the verifier read a post that began publishing there)."""
        table = self.resource.Table(self.settings.DUE_INDEX_TABLE_NAME)
        items: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {}
        while True:  # the harness may scan; the service never does
            page = table.scan(**kwargs)
            items += page.get("Items", [])
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        problems: list[str] = []
        for item in items:
            sid = item.get("schedule_id")
            if sid is None or sid not in versions:
                continue
            status, version = versions[sid]
            left = status == "cancelled" and (sid not in began or "entry_bucket" in item)
            if left or int(item["version"]) != version:
                totals["stale_due_entries"] += 1
                if len(problems) < 5:
                    problems.append(
                        f"due entry {item['bucket']}/{item['due']} left behind: version "
                        f"{item['version']}, the post is {status} at version {version}"
                    )
        return problems

    def _drain_dlq(self) -> list[dict[str, Any]]:
        bodies: list[dict[str, Any]] = []
        while True:
            got = self.sqs.receive_message(
                QueueUrl=self.settings.DISPATCH_DLQ_URL,
                MaxNumberOfMessages=10,
                VisibilityTimeout=3600,
            ).get("Messages", [])
            if not got:
                return bodies
            bodies += [json.loads(m["Body"]) for m in got]


def _rate_limited_used_attempts(
    key: str, rows: list[dict[str, Any]], totals: Counter[str]
) -> list[str]:
    """A 429 uses no attempt (``lifecycle/retry.plan_retry``): the try after a finished
    ``rate_limited`` row carries the same attempt number (a lost round leaves only a ``started``
    row and changes no count either)."""
    ordered = sorted(rows, key=lambda r: (r["started_at"], r["attempt"]))
    problems = []
    for before, after in pairwise(ordered):
        if before["outcome"] != "rate_limited":
            continue
        totals["tries_after_429"] += 1
        if after["attempt"] != before["attempt"]:
            problems.append(
                f"{key}: the try after a 429 (attempt {before['attempt']}) is attempt "
                f"{after['attempt']}: the 429 used an attempt"
            )
    return problems


def run_scenario(
    seed: int,
    posts: int,
    *,
    rates: FaultRates | None = None,
    concurrent_rate: float = 0.05,
    pds_url: str | None = None,
) -> ScenarioResult:
    """Build, play and check one seeded world of ``posts`` posts (fresh moto, simulated time
    starting at :data:`tests.support.fixtures.START`), with a Mastodon and a Bluesky channel on
    the reference PDS at ``pds_url`` (default ``FAULT_PDS_URL``; neither: webhooks only)."""
    start = START.astimezone(UTC)
    pds_url = pds_url or os.environ.get(PDS_URL_ENV)
    with (
        seeded_uuid4(seed),
        fast_moto_transactions(),
        time_machine.travel(start, tick=False) as traveller,
        mock_aws(),
    ):
        world = World(
            seed,
            posts,
            SimClock(traveller),
            rates=rates,
            concurrent_rate=concurrent_rate,
            pds_url=pds_url,
        )
        try:
            world.build()
            world.play()
            result = world.check()
            events: dict[str, Any] = {}
            outbox_totals, outbox_problems = check_outbox(world, keep=events)
            result.totals.update(outbox_totals)
            result.problems.extend(outbox_problems)
            result.problems.extend(world.verifier.check(events, result.totals))
        finally:
            if world.networks is not None:
                world.networks.stop()
            set_dependencies(None)
            reset_clients()
    if result.problems:
        result.problems.insert(0, f"reproduce: {reproduce_command(seed, posts)}")
    return result
