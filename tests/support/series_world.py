"""Recurring schedules in the fault worlds (issue 13).

Each world gets :data:`SERIES_PER_WORLD` recurring schedules, created through the API, whose
occurrences go through the same sweeper, worker and receiver as the world's posts. On top of the
world's faults:

* the **materializer** runs on its schedule (``MATERIALIZE_INTERVAL_SECONDS``, a skewed clock,
  a throttled DynamoDB role ``materializer``) and, at any write of a run after the first,
  **crashes** (:class:`MaterializerCrash`, a Lambda killed between two writes), or runs a
  **second materializer at once** to its end right there (the same series read by both), or
  runs a due edit of a series (an edit between a run's read and its write);
* **series edits** (``PATCH`` of the content, the rule, or both) are planned around the fire
  time of an occurrence (-5 s to +5 s), and run either then or at the worker's claim of that
  occurrence (between its read and its conditional claim).

:meth:`WorldSeries.check` then asserts, for every series:

* no duplicate: one post per series and occurrence instant (whose ``schedule_id`` is the one
  derived from them), and at the receiver at most one accepted delivery per series, occurrence
  and channel;
* nothing under an old version: every request for an occurrence that was not yet claimed when
  an edit answered 200 carries that edit's content (or a later one's) and an instant the edit's
  rule has; an occurrence claimed before is held to the version in force when it was claimed;
* nothing early: no request before its occurrence's instant;
* every occurrence post settled, its deliveries agreeing with the receiver.

Everything is drawn from generators seeded apart from the world's own (``series-<seed>``), so
adding series leaves the draws of the world's posts as they were.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Attr

from functions.materializer.handler import make_lambda_handler as make_materializer_handler
from local.emulation.lambda_runtime import LambdaContext
from scheduled_posts import recurrence
from scheduled_posts.clock import format_instant
from scheduled_posts.data.posts import PostRepository
from scheduled_posts.data.series import SeriesRepository
from scheduled_posts.logic.materialize import MaterializeDeps, materialize_due
from scheduled_posts.models.post import Post, PostStatus
from scheduled_posts.recurrence import Rule
from tests.support.driver import Crash
from tests.support.faults import FaultyResource, skewed_clock

if TYPE_CHECKING:
    from tests.support.scenario import World

#: Settings every world adds for its series: a one-minute rule is allowed, a small buffer ahead
#: (so the materializer, not the create, writes most occurrences) and a run every minute.
SERIES_SETTINGS: dict[str, Any] = {
    "MIN_RECURRENCE_INTERVAL_SECONDS": 60,
    "RECURRENCE_MAX_AHEAD": 2,
    "MATERIALIZE_INTERVAL_SECONDS": 60,
}
#: Recurring schedules per world.
SERIES_PER_WORLD = 2
#: How long a series runs (``ends_at`` after its create), in minutes: the world's posts span
#: about 14 minutes, so the series add little simulated time. Long enough that an edit in its
#: first half leaves more instants than ``RECURRENCE_MAX_AHEAD``: an edit whose own
#: materialization ends the series would refuse a racing run's write for that reason alone,
#: hiding a missing version check (FS17).
SERIES_MINUTES = 16
#: The rules a series starts with or is edited to; the two-minute ones have no instant in
#: common, so an occurrence delivered under the wrong one is seen.
CRONS = ("* * * * *", "0-59/2 * * * *", "1-59/2 * * * *")
ZONES = ("UTC", "Europe/Berlin", "America/New_York")
#: Chance per write of a run (after its first) that the materializer crashes there (none in a
#: world without worker crashes).
CRASH_RATE = 0.15
#: Chance per write of a run that a second materializer runs to its end right there (none in
#: a world without concurrent invocations).
AT_ONCE_RATE = 0.3
#: Chance that a due edit runs inside a materializer run or at the worker's claim.
RACE_RATE = 0.6
#: An edit runs at the worker's claim when it is due within this many seconds ...
RACE_WINDOW_SECONDS = 5
#: ... and inside a materializer run's write of its series when due before the next run.
RUN_RACE_WINDOW_SECONDS = 60
#: Statuses of a post nobody claimed (yet).
UNCLAIMED = frozenset({PostStatus.SCHEDULED, PostStatus.CANCELLED})


class MaterializerCrash(Crash):
    """The materializer dies between two writes (a timeout or a kill): a ``BaseException``,
    so nothing in the service catches it; the next scheduled run picks up."""


@dataclass(frozen=True)
class SeriesVersion:
    """What an answer (the create's 201 or an edit's 200) promised: the rule and content in
    force, and the occurrence posts already claimed when it came (those keep what they had)."""

    cron: str
    content: str
    claimed: frozenset[str]


@dataclass
class PlannedEdit:
    """A PATCH planned at ``at`` (reference clock); ``None`` fields are left alone."""

    at: datetime
    content: str | None
    cron: str | None
    result: str | None = None  # done, refused (409/412/422), unknown (5xx after retries)


@dataclass
class PlannedSeries:
    """One recurring schedule of the world and what the API answered about it."""

    index: int
    user: str
    channel_ids: list[str]
    timezone: str
    cron: str
    content: str
    create_at: datetime
    ends_at: datetime
    max_occurrences: int | None
    edits: list[PlannedEdit] = field(default_factory=list)
    series_id: str | None = None
    create_failed: str | None = None
    #: The create's version, then one per edit that answered 200, in order.
    versions: list[SeriesVersion] = field(default_factory=list)
    #: Versions an edit may have saved without saying so (a 5xx after its retries).
    unsure: list[SeriesVersion] = field(default_factory=list)

    @property
    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "content": self.content,
            "channel_ids": self.channel_ids,
            "timezone": self.timezone,
            "cron": self.cron,
            "ends_at": format_instant(self.ends_at),
        }
        if self.max_occurrences is not None:
            body["max_occurrences"] = self.max_occurrences
        return body


def matches(cron: str, timezone: str, instant: datetime) -> bool:
    """Whether ``cron`` read in ``timezone`` has an occurrence exactly at ``instant``."""
    found = next(recurrence.iter_occurrences(Rule(timezone, cron), not_before=instant), None)
    return found is not None and found.occurrence_at == instant


def rule_instants(cron: str, timezone: str, start: datetime, end: datetime) -> Iterator[datetime]:
    """The instants of ``cron`` in ``timezone`` from ``start`` through ``end``."""
    for occurrence in recurrence.iter_occurrences(Rule(timezone, cron), not_before=start):
        if occurrence.occurrence_at > end:
            return
        yield occurrence.occurrence_at


class _HookedClient:
    """A DynamoDB client whose ``transact_write_items`` calls ``before`` first."""

    def __init__(self, client: Any, before: Callable[[dict[str, Any]], None]) -> None:
        self._client = client
        self._before = before

    def transact_write_items(self, **kwargs: Any) -> Any:
        self._before(kwargs)
        return self._client.transact_write_items(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


class _HookedResource:
    """A DynamoDB resource whose client's transactions (every write of a series or occurrence)
    pass through ``before``."""

    def __init__(self, resource: Any, before: Callable[[dict[str, Any]], None]) -> None:
        self._resource = resource
        self.meta = type("Meta", (), {"client": _HookedClient(resource.meta.client, before)})()

    def Table(self, name: str) -> Any:
        return self._resource.Table(name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._resource, name)


class WorldSeries:
    """The series of one :class:`tests.support.scenario.World`: plan, actors and checks."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.rng = random.Random(f"series-{world.seed}")
        self.skew = round(self.rng.uniform(-2.0, 2.0), 3)
        self.series: list[PlannedSeries] = []
        self.next_run_at: datetime | None = None
        self.runs = 0
        self.run_race_forced = False
        world.plan.throttled_roles = world.plan.throttled_roles | {"materializer"}

    # -- plan ------------------------------------------------------------------------------

    def build(self) -> None:
        """Plan the series: owner, channels, zone, rule, bounds and edits."""
        rng, world = self.rng, self.world
        start = world.clock.now()
        # Webhook channels without a rate limit only: see docs/reliability.md, "Recurring
        # schedules" (the network channels' checks know only the world's own posts).
        networks = set(world.networks.channels) if world.networks is not None else set()
        unlimited = {
            user: [
                c
                for c in ids
                if world.channel_urls[c] not in world.rate_limits and c not in networks
            ]
            for user, ids in world.channels.items()
        }
        owners = sorted(user for user, ids in unlimited.items() if ids)
        for i in range(SERIES_PER_WORLD if owners else 0):
            user = rng.choice(owners)
            channels = unlimited[user]
            chosen = rng.sample(channels, min(rng.choice([1, 2]), len(channels)))
            create_at = start + timedelta(seconds=rng.randint(0, 90))
            planned = PlannedSeries(
                index=i,
                user=user,
                channel_ids=chosen,
                timezone=rng.choice(ZONES),
                cron=rng.choice(CRONS),
                content=f"series {i} of seed {world.seed}",
                create_at=create_at,
                ends_at=create_at + timedelta(minutes=SERIES_MINUTES),
                max_occurrences=None,
            )
            cron = planned.cron
            edit_from = create_at + timedelta(minutes=2)
            for k in range(rng.randint(1, 3)):
                times = list(rule_instants(cron, planned.timezone, edit_from, planned.ends_at))
                if not times:
                    break
                fire = rng.choice(times[: max(1, len(times) // 2)])
                kind = rng.choice(["content", "rule", "both"])
                new_cron = rng.choice([c for c in CRONS if c != cron])
                planned.edits.append(
                    PlannedEdit(
                        at=fire + timedelta(seconds=rng.choice([-5, -2, -1, 0, 0, 1, 2, 5])),
                        content=f"{planned.content} (edit {k})" if kind != "rule" else None,
                        cron=new_cron if kind != "content" else None,
                    )
                )
                cron = new_cron if kind != "content" else cron
                edit_from = fire + timedelta(minutes=1)
            if all(e.cron is None for e in planned.edits) and rng.random() < 0.5:
                planned.max_occurrences = rng.randint(3, 8)
            self.series.append(planned)
        self.next_run_at = min((s.create_at for s in self.series), default=None)
        for planned in self.series:
            for edit in planned.edits:
                self.world._heat(edit.at)
            crons = {planned.cron, *(e.cron for e in planned.edits if e.cron is not None)}
            for cron in sorted(crons):
                for at in rule_instants(cron, planned.timezone, start, planned.ends_at):
                    self.world._heat(at)

    def last_instant(self) -> datetime:
        """The last instant any series may fire (the world's start when it has none)."""
        return max((s.ends_at for s in self.series), default=self.world.clock.now())

    def upcoming(self) -> list[datetime]:
        """When this part of the world next has something to do."""
        times = [s.create_at for s in self.series if s.series_id is None and not s.create_failed]
        times += [e.at for s in self.series for e in s.edits if e.result is None]
        if self.next_run_at is not None:
            times.append(self.next_run_at)
        return times

    def done(self) -> bool:
        """Every series created (or refused) and every edit answered."""
        pending = [s for s in self.series if s.series_id is None and s.create_failed is None]
        return not pending and all(e.result is not None for s in self.series for e in s.edits)

    # -- actors ----------------------------------------------------------------------------

    def tick(self) -> bool:
        """Create and edit what is due, run the materializer when its schedule says; True
        when something ran."""
        now = self.world.clock.now()
        busy = False
        for planned in self.series:
            if planned.series_id is None and planned.create_failed is None:
                if planned.create_at <= now:
                    self._create(planned)
                    busy = True
                continue
            for edit in planned.edits:
                if edit.result is None and edit.at <= now and planned.series_id is not None:
                    self._edit(planned, edit)
                    busy = True
        if self.next_run_at is not None and now >= self.next_run_at:
            self._run_materializer(nested=False)
            interval = timedelta(seconds=self.world.settings.MATERIALIZE_INTERVAL_SECONDS)
            self.next_run_at = max(self.next_run_at + interval, now)
            busy = True
        return busy

    def _create(self, planned: PlannedSeries) -> None:
        world = self.world
        answer = world._call(
            planned.user,
            "POST",
            "/v1/recurring-schedules",
            planned.body,
            headers={"Idempotency-Key": f"series-{world.seed}-{planned.index}"},
        )
        world.totals[f"api_series_create_{answer.status}"] += 1
        if answer.status != 201:
            planned.create_failed = f"{answer.status} {answer.json}"
            return
        planned.series_id = answer.json["series_id"]
        planned.versions.append(SeriesVersion(planned.cron, planned.content, frozenset()))

    def _edit(self, planned: PlannedSeries, edit: PlannedEdit) -> None:
        """PATCH the series now; a 200 records the version and what was claimed by then."""
        world = self.world
        assert planned.series_id is not None and edit.result is None
        edit.result = "running"
        body: dict[str, Any] = {}
        if edit.content is not None:
            body["content"] = edit.content
        if edit.cron is not None:
            body["cron"] = edit.cron
        path = f"/v1/recurring-schedules/{planned.series_id}"
        answer = world._call(planned.user, "PATCH", path, body)
        kind = "both" if len(body) == 2 else next(iter(body))
        world.totals[f"api_series_{kind}_{answer.status}"] += 1
        if answer.status == 200:
            edit.result = "done"
            version = SeriesVersion(
                answer.json["cron"], answer.json["content"], self._claimed(planned.series_id)
            )
            planned.versions.append(version)
        elif answer.status in (409, 412, 422):
            edit.result = "refused"
        else:
            edit.result = "unknown"
            last = planned.versions[-1]
            planned.unsure.append(
                SeriesVersion(edit.cron or last.cron, edit.content or last.content, frozenset())
            )

    def _due_edit(
        self, now: datetime, *, window: float = RACE_WINDOW_SECONDS, text: str | None = None
    ) -> tuple[PlannedSeries, PlannedEdit] | None:
        """The first edit not yet run that is due within ``window`` seconds of ``now`` (of a
        series whose id occurs in ``text``, when given)."""
        for planned in self.series:
            if planned.series_id is None or (text is not None and planned.series_id not in text):
                continue
            for edit in planned.edits:
                if edit.result is None and abs((edit.at - now).total_seconds()) <= window:
                    return planned, edit
        return None

    def race(self, schedule_id: str) -> None:
        """At a worker's claim of an occurrence: maybe run its series' due edit right now."""
        world = self.world
        due = self._due_edit(world.clock.now())
        if due is None:
            return
        planned, edit = due
        post = self._posts().get(schedule_id)
        if post is None or post.series_id != planned.series_id:
            return
        if world.plan.chance(RACE_RATE, "series_race", planned.index, format_instant(edit.at)):
            world.plan.count("series_edit_at_the_claim")
            self._edit(planned, edit)

    def _run_materializer(self, *, nested: bool) -> None:
        """One materializer invocation with its faults (see the module docstring)."""
        world = self.world
        settings = world.settings
        self.runs += 1
        run = self.runs
        writes = 0

        def before_write(kwargs: dict[str, Any]) -> None:
            nonlocal writes
            n = writes
            writes += 1
            plan = world.plan
            due = self._due_edit(
                world.clock.now(), window=RUN_RACE_WINDOW_SECONDS, text=repr(kwargs)
            )
            forced = self._forced_run_race(kwargs)
            if forced is not None or (
                due is not None and plan.chance(RACE_RATE, "series_edit_in_run", run, n)
            ):
                plan.count("series_edit_in_materializer_run")
                self._edit(*(forced or due))
            at_once = AT_ONCE_RATE if world.driver.concurrent_rate else 0.0
            if not nested and plan.chance(at_once, "materializers_at_once", run, n):
                plan.count("materializers_at_once")
                self._run_materializer(nested=True)
            crash = CRASH_RATE if plan.rates.crash else 0.0
            if n >= 1 and plan.chance(crash, "materializer_crash", run, n):
                plan.count("crash_materializer_between_writes")
                raise MaterializerCrash(f"run {run}, before write {n + 1}")

        resource = FaultyResource(
            _HookedResource(world.resource, before_write), world.plan, "materializer"
        )
        posts = PostRepository(
            posts_table_name=settings.POSTS_TABLE_NAME,
            due_table_name=settings.DUE_INDEX_TABLE_NAME,
            misfire_grace_seconds=settings.MISFIRE_GRACE_SECONDS,
            dynamodb=resource,
        )
        deps = MaterializeDeps(
            series=SeriesRepository(
                posts_table_name=settings.POSTS_TABLE_NAME,
                due_table_name=settings.DUE_INDEX_TABLE_NAME,
                posts=posts,
                dynamodb=resource,
            ),
            posts=posts,
            settings=settings,
            clock=skewed_clock(world.clock, self.skew),
        )
        handler = make_materializer_handler(lambda: materialize_due(deps=deps))
        try:
            handler({}, LambdaContext("materializer", 120, clock=world.clock.seconds))
            world.totals["materializer_runs"] += 1
        except MaterializerCrash:
            world.totals["materializer_crashed_runs"] += 1
        except Exception:  # a run with a failed series: the next run retries it
            world.totals["materializer_invocation_errors"] += 1

    def _forced_run_race(self, kwargs: dict[str, Any]) -> tuple[PlannedSeries, PlannedEdit] | None:
        """The world's one forced edit inside a run (FS17), or ``None``: at the first write of
        an occurrence post by a run (not a save or a cancel), the series' next PATCH when it
        changes the rule, run now (before its planned time) when it leaves the series more
        instants than ``RECURRENCE_MAX_AHEAD``; faulted worlds only. Only a rule change can
        show a stale write: a content edit materializes at once the very instants the run
        would write, so the run finds them written. And an edit whose own materialization
        ends the series would refuse the run's write for that reason alone."""
        if self.run_race_forced or not self.world.plan.enabled:
            return None
        writes = [
            item["Put"]["Item"]
            for item in kwargs.get("TransactItems", [])
            if "series_id" in item.get("Put", {}).get("Item", {})
        ]
        if not writes:
            return None
        planned = next((p for p in self.series if p.series_id == writes[0]["series_id"]), None)
        if planned is None or not planned.versions:
            return None
        edit = next((e for e in planned.edits if e.result is None), None)
        if edit is None or edit.cron is None:
            return None
        cron = edit.cron
        now = self.world.clock.now()
        left = sum(1 for _ in rule_instants(cron, planned.timezone, now, planned.ends_at))
        if left <= self.world.settings.RECURRENCE_MAX_AHEAD:
            return None
        self.run_race_forced = True
        return planned, edit

    # -- harness reads (the harness may scan; the service never does) ----------------------

    def _posts(self) -> PostRepository:
        settings = self.world.settings
        return PostRepository(
            posts_table_name=settings.POSTS_TABLE_NAME,
            due_table_name=settings.DUE_INDEX_TABLE_NAME,
            dynamodb=self.world.resource,
        )

    def _occurrence_posts(self, series_id: str | None = None) -> list[Post]:
        table = self.world.resource.Table(self.world.settings.POSTS_TABLE_NAME)
        condition = Attr("series_id").exists() & Attr("sk").eq("POST")
        if series_id is not None:
            condition = Attr("series_id").eq(series_id) & Attr("sk").eq("POST")
        items: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {"FilterExpression": condition, "ConsistentRead": True}
        while True:
            page = table.scan(**kwargs)
            items += page.get("Items", [])
            if "LastEvaluatedKey" not in page:
                return [Post.from_item(i) for i in items]
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def _claimed(self, series_id: str) -> frozenset[str]:
        return frozenset(
            p.schedule_id for p in self._occurrence_posts(series_id) if p.status not in UNCLAIMED
        )

    # -- checks ----------------------------------------------------------------------------

    def check(
        self,
        totals: Counter[str],
        expected_keys: set[str],
        versions: dict[str, tuple[str, int]],
    ) -> list[str]:
        """The series' checks (module docstring). Adds the deliveries the series owe to
        ``expected_keys`` and each occurrence's ``(status, version)`` to ``versions`` (the
        world's due-index check); counts into ``totals``."""
        problems: list[str] = []
        by_id = {s.series_id: s for s in self.series if s.series_id is not None}
        for planned in self.series:
            totals["series"] += 1
            if planned.series_id is None:
                problems.append(f"series {planned.index}: create failed: {planned.create_failed}")
        posts = [p for p in self._occurrence_posts() if p.series_id in by_id]
        post_by_id = {p.schedule_id: p for p in posts}
        requests = defaultdict(list)
        for r in self.world.receiver.requests:
            sid = str((r.payload or {}).get("schedule_id"))
            if sid in post_by_id:
                requests[sid].append(r)
        problems += self._check_posts(posts, by_id, totals, versions)
        accepted: dict[tuple[str, str, str], set[str]] = defaultdict(set)
        for post in posts:
            planned = by_id[post.series_id or ""]
            instant = post.occurrence_at or post.publish_at
            for r in requests[post.schedule_id]:
                payload = r.payload or {}
                totals["series_requests"] += 1
                problems += self._check_request(planned, post, r.at, payload, totals)
                if r.answer.succeeds:
                    where = (
                        post.series_id or "",
                        format_instant(instant),
                        str(payload["channel_id"]),
                    )
                    accepted[where].add(str(r.idempotency_key))
            problems += self._check_deliveries(post, totals, expected_keys)
        for (series_id, at, channel), keys in sorted(accepted.items()):
            totals["series_deliveries"] += 1
            if len(keys) > 1:
                totals["series_duplicates"] += len(keys) - 1
                problems.append(
                    f"series {series_id} occurrence {at} channel {channel}: accepted under "
                    f"{len(keys)} Idempotency-Keys"
                )
        totals["duplicates"] += totals["series_duplicates"]
        return problems[:20]

    def _check_posts(
        self,
        posts: list[Post],
        by_id: dict[str, PlannedSeries],
        totals: Counter[str],
        versions: dict[str, tuple[str, int]],
    ) -> list[str]:
        """One post per series and occurrence instant, under the derived id, at that instant;
        each settled; at most ``max_occurrences`` of a series."""
        problems: list[str] = []
        seen: Counter[tuple[str, datetime]] = Counter()
        for post in posts:
            assert post.series_id is not None
            totals["series_occurrences"] += 1
            totals[f"series_status_{post.status.value}"] += 1
            versions[post.schedule_id] = (post.status.value, post.version)
            if post.occurrence_at is None:
                problems.append(f"occurrence {post.schedule_id}: no occurrence_at")
                continue
            seen[(post.series_id, post.occurrence_at)] += 1
            derived = recurrence.occurrence_schedule_id(post.series_id, post.occurrence_at)
            if post.schedule_id != derived:
                problems.append(f"occurrence {post.schedule_id}: id is not {derived}")
            if post.publish_at != post.occurrence_at and not post.detached:
                problems.append(f"occurrence {post.schedule_id}: publish_at is not its instant")
            if post.status not in (
                PostStatus.PUBLISHED,
                PostStatus.PARTIALLY_PUBLISHED,
                PostStatus.FAILED,
                PostStatus.CANCELLED,
                PostStatus.MISSED,
            ):
                totals["stuck"] += 1
                problems.append(f"occurrence {post.schedule_id}: stuck in {post.status.value}")
        for (series_id, at), n in sorted(seen.items()):
            if n > 1:
                totals["series_duplicates"] += n - 1
                problems.append(f"series {series_id}: {n} posts for {format_instant(at)}")
        for series_id, planned in by_id.items():
            limit = planned.max_occurrences
            written = sum(1 for p in posts if p.series_id == series_id)
            if limit is not None and written > limit:
                problems.append(f"series {series_id}: {written} occurrences, max {limit}")
        return problems

    def _check_request(
        self,
        planned: PlannedSeries,
        post: Post,
        at: datetime,
        payload: dict[str, Any],
        totals: Counter[str],
    ) -> list[str]:
        """Never early; under the version in force when the occurrence was claimed."""
        problems: list[str] = []
        assert post.occurrence_at is not None
        instant = post.occurrence_at
        if at < instant:
            totals["series_early"] += 1
            problems.append(
                f"occurrence {post.schedule_id} requested at {format_instant(at)}, "
                f"before {format_instant(instant)}"
            )
        if payload.get("publish_at") != format_instant(instant):
            problems.append(f"occurrence {post.schedule_id}: delivered a publish_at not its own")
        # The last version whose answer came before the claim, or the next one (the claim
        # may fall inside that edit's request); plus any an unanswered edit may have saved.
        if not planned.versions:
            return [*problems, f"occurrence {post.schedule_id} of a series never created"]
        last = max(i for i, v in enumerate(planned.versions) if post.schedule_id not in v.claimed)
        allowed = planned.versions[last : last + 2] + planned.unsure
        content = payload.get("content")
        if not any(
            v.content == content and matches(v.cron, planned.timezone, instant) for v in allowed
        ):
            totals["series_stale"] += 1
            governing = planned.versions[last]
            problems.append(
                f"occurrence {post.schedule_id} at {format_instant(instant)} delivered "
                f"{content!r} after version {last} ({governing.cron!r}, "
                f"{governing.content!r}) answered"
            )
        return problems

    def _check_deliveries(
        self, post: Post, totals: Counter[str], expected_keys: set[str]
    ) -> list[str]:
        """A published delivery was accepted by the receiver; owed keys for the world's check
        of accepted keys nobody owes."""
        problems: list[str] = []
        receiver = self.world.receiver
        for channel_id, delivery in post.deliveries.items():
            key = f"{post.schedule_id}:{channel_id}"
            if delivery.status.value == "published":
                expected_keys.add(key)
                if receiver.accepted_request(key) is None:
                    problems.append(f"{key}: published but never accepted by the receiver")
            elif post.status == PostStatus.CANCELLED and receiver.accepted_request(key):
                problems.append(f"{key}: cancelled but accepted by the receiver")
        return problems
