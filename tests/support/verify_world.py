"""The network verifier in the fault worlds (issue 31): the scheduled read-back
(``functions/verifier``, ``logic/verify_job.py``) runs on the world's clock, while the networks
delete or replace some published records.

* **Tampering.** Of the network deliveries of the world's own posts, :data:`TAMPER_SHARE`
  are tampered with on the network
  some time after they were published (0 to :data:`TAMPER_DELAY_SECONDS`, seeded; so some before
  the verifier's first read, some after it verified them): the Mastodon status is deleted
  (``missing``), the Bluesky record is deleted (``missing``) or, for half of them, replaced by
  another record at the same key (``changed``: a different CID).
* **Lost writes answered late** are the networks' ``accept_then_lose`` faults
  (``tests/support/networks.py``): the write is stored, its answer lost, the retry finds it;
  the verifier must find those healthy.
* The verifier runs every ``VERIFY_INTERVAL_SECONDS`` (60 s here; re-reads after 180 s) on a
  clock skewed like the other schedules, and the world plays on until every tampered delivery
  was read again after its tampering and every delivery was published two runs ago.

:meth:`WorldVerifier.check` (the oracle, from the stream's committed events and the posts
table): each tampered delivery is still ``published`` with its ``remote_id`` (never
republished; ``NetworkWorld.check`` also sees nothing new on the network), shows its finding,
and has exactly one ``delivery.verification_failed`` event with that finding (at most one
on a channel whose credentials were revoked: the verifier stops reading it); no other
delivery has any finding or such event; every other published, readable network delivery has
``verified_at`` (the lost-then-found ones counted in ``verify_lost_then_verified``).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from functions.verifier.handler import make_lambda_handler
from local.bluesky import delete_post, rewrite_post
from local.emulation.lambda_runtime import LambdaContext
from scheduled_posts import keys
from scheduled_posts.lifecycle.states import TERMINAL_POST_STATUSES, DeliveryStatus
from scheduled_posts.logic.verify_job import VerifyJob, VerifyJobDeps
from scheduled_posts.models.events import BaseEvent, DeliveryVerificationFailed
from scheduled_posts.models.post import Post
from tests.support.faults import skewed_clock

if TYPE_CHECKING:
    from tests.support.scenario import World

#: Settings the worlds add for the verifier: a run a minute, a re-read after three.
VERIFY_SETTINGS: dict[str, Any] = {"VERIFY_INTERVAL_SECONDS": 60, "VERIFY_REVERIFY_SECONDS": 180}
#: Share of the eligible network deliveries tampered with, and the delay after publishing.
TAMPER_SHARE = 0.3
TAMPER_DELAY_SECONDS = 420


@dataclass
class Tamper:
    """A delivery the network deletes (``missing``) or replaces (``changed``)."""

    index: int
    channel_id: str
    network: str
    kind: str
    delay: float
    key: str | None = None
    remote_id: str | None = None
    done_at: datetime | None = None
    dropped: bool = False


class WorldVerifier:
    """The verifier's schedule, the networks' tampering and the oracle (module docstring)."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.settings = world.settings
        rng = random.Random(f"verify-{world.seed}")  # leaves the world's own draws alone
        self.clock = skewed_clock(world.clock, round(rng.uniform(-2.0, 2.0), 3))
        self.next_run_at: datetime | None = None
        self.targets: list[Tamper] = []
        #: The latest ``published_at`` of a network delivery seen.
        self._last_published: datetime | None = None
        self.totals: Counter[str] = Counter()

    @property
    def enabled(self) -> bool:
        return self.world.networks is not None

    def plan(self) -> None:
        """Choose the tampered deliveries (after the networks planned their revocations)."""
        networks = self.world.networks
        if networks is None or self.world.plan.rates.answer <= 0:
            return
        for post in self.world.posts:
            for cid, channel in networks.channels.items():
                if cid not in post.channel_ids:
                    continue
                plan = self.world.plan
                if plan.draw("tamper", post.index, cid) >= TAMPER_SHARE:
                    continue
                kind = "missing"
                if channel.network == "bluesky" and plan.draw("tamper-kind", post.index) < 0.5:
                    kind = "changed"
                delay = TAMPER_DELAY_SECONDS * plan.draw("tamper-at", post.index, cid)
                self.targets.append(Tamper(post.index, cid, channel.network, kind, delay))

    # -- playing ---------------------------------------------------------------------------

    def tick(self, now: datetime) -> None:
        """At each run's time: tamper with what is due, then one verifier run."""
        if not self.enabled:
            return
        if self.next_run_at is None:
            self.next_run_at = now
        if now < self.next_run_at:
            return
        self._tamper(now)
        self._run()
        self.next_run_at = now + timedelta(seconds=self.settings.VERIFY_INTERVAL_SECONDS)

    def settled(self, now: datetime) -> bool:
        """Every target tampered (or dropped) and read again since, every delivery read."""
        if not self.enabled:
            return True
        if any(t.done_at is None and not t.dropped for t in self.targets):
            return False
        interval = timedelta(seconds=self.settings.VERIFY_INTERVAL_SECONDS)
        reread = timedelta(seconds=self.settings.VERIFY_REVERIFY_SECONDS)
        ends = [t.done_at + reread + 2 * interval for t in self.targets if t.done_at]
        if self._last_published is not None:
            ends.append(self._last_published + 2 * interval)
        return all(now >= end for end in ends)

    def _run(self) -> None:
        job = VerifyJob(self.settings, VerifyJobDeps.from_settings(self.settings, self.clock))
        handler = make_lambda_handler(job.run)
        try:
            answer = handler({}, LambdaContext("verifier", 300, clock=self.world.clock.seconds))
        except RuntimeError:
            self.totals["verify_runs_failed"] += 1
            return
        self.totals["verify_runs"] += 1
        for outcome, count in answer["outcomes"].items():
            self.totals[f"verify_reads_{outcome}"] += count

    def _posts(self) -> dict[str, Post]:
        """The world's posts to a network channel, read from the table (the harness may)."""
        networks = self.world.networks
        assert networks is not None
        ids = [
            p.schedule_id
            for p in self.world.posts
            if p.schedule_id and set(p.channel_ids) & set(networks.channels)
        ]
        found: dict[str, Post] = {}
        table = self.world.resource.Table(self.settings.POSTS_TABLE_NAME)
        for item in _get_all(table, ids):
            post = Post.from_item(item)
            found[post.schedule_id] = post
        return found

    def _tamper(self, now: datetime) -> None:
        posts = self._posts()
        published = [d.published_at for p in posts.values() for d in p.deliveries.values()]
        self._last_published = max(filter(None, [*published, self._last_published]), default=None)
        by_index = {p.index: p for p in self.world.posts}
        for target in self.targets:
            if target.done_at is not None or target.dropped:
                continue
            post = posts.get(by_index[target.index].schedule_id or "")
            if post is None:
                continue  # not created yet
            delivery = post.deliveries.get(target.channel_id)
            if delivery is None or delivery.status != DeliveryStatus.PUBLISHED:
                target.dropped = delivery is None or post.status in TERMINAL_POST_STATUSES
                continue
            if not delivery.remote_id or delivery.published_at is None:
                target.dropped = True  # a hostile answer's id was dropped: nothing to read
                continue
            if now < delivery.published_at + timedelta(seconds=target.delay):
                continue
            target.key = f"{post.schedule_id}:{target.channel_id}"
            target.remote_id = delivery.remote_id
            self._apply(target, post)
            target.done_at = now

    def _apply(self, target: Tamper, post: Post) -> None:
        networks = self.world.networks
        assert networks is not None and networks.pds_account is not None
        assert target.remote_id is not None and target.key is not None
        self.world.plan.count(f"network_{target.network}_record_{target.kind}")
        networks.tampered[target.key] = target.kind
        if target.network == "mastodon":
            assert networks.mastodon.delete_status(target.remote_id), target.remote_id
            return
        rkey = target.remote_id.rsplit("/", 1)[-1]
        if target.kind == "missing":
            delete_post(networks.pds_url, networks.pds_account, rkey)
        else:
            rewrite_post(networks.pds_url, networks.pds_account, rkey, f"{post.content} (edited)")

    # -- the oracle ------------------------------------------------------------------------

    def check(self, events: dict[str, BaseEvent], totals: Counter[str]) -> list[str]:
        """The promises of the module docstring; ``events`` are the committed events by id."""
        totals.update(self.totals)
        if not self.enabled:
            return []
        networks = self.world.networks
        assert networks is not None and networks.transport is not None
        problems: list[str] = []
        reported: Counter[tuple[str, str]] = Counter()
        for event in events.values():
            if isinstance(event, DeliveryVerificationFailed):
                reported[(f"{event.schedule_id}:{event.channel.channel_id}", event.finding)] += 1
        expected = {t.key: t for t in self.targets if t.key is not None}
        found = Counter(reported)

        def count_of(key: str) -> int:
            return found[(key, expected[key].kind)]

        for key, target in expected.items():
            totals[f"verify_tampered_{target.kind}"] += 1
            count = reported.pop((key, target.kind), 0)
            # a channel whose credentials were refused is no longer read: at most once there
            revoked = networks.channels[target.channel_id].revoked_at is not None
            totals["verify_tampered_reported"] += count
            if count > 1 or (count == 0 and not revoked):
                problems.append(f"{key}: {target.kind} on {target.network}, reported {count} times")
        for (key, finding), count in sorted(reported.items()):
            problems.append(f"{key}: healthy, but reported {finding} x{count}")
        for post in self._posts().values():
            for cid, d in post.deliveries.items():
                if cid not in networks.channels:
                    continue
                key = f"{post.schedule_id}:{cid}"
                target = expected.get(key)
                if target is not None:
                    if d.status != "published" or d.remote_id != target.remote_id:
                        problems.append(f"{key}: {target.kind}, then {d.status} {d.remote_id}")
                    if d.verification != (target.kind if count_of(key) else None):
                        problems.append(f"{key}: {target.kind}, the post shows {d.verification}")
                    continue
                if d.verification is not None:
                    problems.append(f"{key}: healthy, the post shows {d.verification}")
                if d.status != "published" or not d.remote_id:
                    continue
                if networks.channels[cid].revoked_at is not None:
                    # A refused channel is not read (decision "The verifier and media lost
                    # answers in the fault suite").
                    continue
                if d.verified_at is None:
                    problems.append(
                        f"{key}: published on {networks.channels[cid].network}, never verified"
                    )
                elif key in networks.transport.lost_keys:
                    totals["verify_lost_then_verified"] += 1
                totals["verify_verified"] += 1
        return problems[:10]


def _get_all(table: Any, schedule_ids: list[str]) -> list[dict[str, Any]]:
    """The post items of ``schedule_ids`` (BatchGetItem, 100 at a time)."""
    items: list[dict[str, Any]] = []
    client = table.meta.client
    for start in range(0, len(schedule_ids), 100):
        wanted = [
            {"pk": keys.post_pk(s), "sk": keys.POST_SK} for s in schedule_ids[start : start + 100]
        ]
        request: dict[str, Any] = {table.name: {"Keys": wanted}}
        while request:
            answer = client.batch_get_item(RequestItems=request)
            items += answer["Responses"].get(table.name, [])
            request = answer.get("UnprocessedKeys") or {}
    return items
