"""The creator workflow in the fault worlds (issue 27): a posting queue filled concurrently, and
a bulk import whose background commit crashes mid-way and is retried.

* **The queue.** The first user gets two webhook channels with posting schedules (UTC, one
  slot a minute from the third minute on; the second channel in fewer minutes, so a post on
  both takes a slot free in both). :data:`QUEUED` posts are created with ``"publish_at":
  "next_free_slot"`` (one or both channels, each with its ``Idempotency-Key``), :data:`CANCELS`
  of them are cancelled a minute later (freeing their slots) and :data:`REFILLS` more are
  queued after that. Concurrency is a deterministic interleaving: at a create's first
  reservation write (after it read the held slots), a planned create or cancel runs right
  there, nested, through the same API. Each answer (create or cancel) may be lost and the
  request re-sent with the same ``Idempotency-Key``; the world's throttles hit every write.
* **The import.** An import of :data:`IMPORT_ROWS` valid CSV rows (channels by name or id,
  times inside the world's window) is committed through ``POST /v1/imports`` (its answer may
  be lost: the request is re-sent with the same key). The harness is the importer's event
  source mapping (short visibility timeout): the first run crashes after ``k`` rows (a Lambda
  killed mid-chunk: nothing deleted), the request is re-sent while the chunk waits, a later
  run may lose its delete (the chunk runs once more), and the run after that completes it.
  The world's throttles can fail a whole run; a chunk SQS dead-letters after
  ``IMPORT_MAX_RECEIVES`` receives goes to the importer's DLQ mapping, which the harness plays
  too (it marks the import ``failed``).

:meth:`WorldWorkflow.check` (the oracle, with the world's own delivery checks, which cover
these posts: every one fires exactly once and never early): no live post of the queue's
channels shares a channel and instant with another, each live queued post's slot item names it
and its instant is a slot of every channel of it; no text (a queued create or an import row) is
in two posts; the import is ``completed`` with every row done, in line order, each under its
derived id (``logic/imports.row_schedule_id``). ``failed`` is accepted only when every
receive of the chunk went wrong (explained by the counted crash, throttled runs and lost
deletes), its error naming the rows, and the rows made before it under their derived ids.
"""

from __future__ import annotations

import random
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from unittest import mock

from aws_lambda_powertools.event_handler.api_gateway import BaseRouter

from functions.importer.handler import ImporterDeps, make_lambda_handler
from local.emulation.lambda_runtime import LambdaContext
from local.emulation.sqs import to_event_record
from scheduled_posts import keys
from scheduled_posts.api.resolver import app
from scheduled_posts.api_app import get_dependencies
from scheduled_posts.clock import format_instant, parse_instant
from scheduled_posts.data.posting_queue import slot_sk
from scheduled_posts.lifecycle.states import PostStatus
from scheduled_posts.logic import imports as import_logic
from scheduled_posts.models.post import Post
from scheduled_posts.tables import IMPORT_MAX_RECEIVES
from tests.support.faults import WorkerCrash

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.support.scenario import PlannedPost, World

#: Queued creates at the start, cancels a minute later, queued creates after the cancels.
QUEUED, CANCELS, REFILLS = 5, 2, 1
#: Minutes after the world's start with a slot on the first / the second channel.
SLOT_MINUTES = (range(2, 14), (2, 3, 4, 6, 8, 10, 12))
#: Share of creates whose first reservation write meets a nested create or cancel.
INTERLEAVE_SHARE = 0.6
#: Share of answers (create, cancel, import) lost and the request re-sent.
LOST_ANSWER_SHARE = 0.3
#: Rows of the world's import (all valid) and the importer's visibility timeout (seconds).
IMPORT_ROWS = 10
#: An import row's publish_at is at least this far after the world's start.
ROW_LEAD = timedelta(seconds=120)
IMPORT_VISIBILITY_SECONDS = 30


@dataclass
class Queued:
    """One planned ``next_free_slot`` create (and maybe its cancel)."""

    n: int
    channel_ids: list[str]
    create_at: datetime
    cancel_at: datetime | None = None
    post: PlannedPost | None = None
    done: bool = False
    cancelled: bool = False


class WorldWorkflow:
    """The queue, the import and the oracle (see the module docstring)."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.rng = random.Random(f"workflow-{world.seed}")  # leaves the world's draws alone
        self.totals: Counter[str] = Counter()
        self.problems: list[str] = []
        self.queued: list[Queued] = []
        self.slots: dict[str, set[datetime]] = {}
        self.user = ""
        self.import_at: datetime | None = None
        self.import_id: str | None = None
        self.rows: list[tuple[int, datetime, list[str], str]] = []
        self.csv = ""
        self.runs = 0
        self.next_receive_at: datetime | None = None
        self.finished = False
        self._depth = 0

    @property
    def key(self) -> str:
        return f"import-{self.world.seed}"

    # -- building --------------------------------------------------------------------------

    def build(self) -> None:
        """The two queue channels and their schedules, the queue's plan and the import file."""
        world, rng = self.world, self.rng
        self.user = user = next(iter(world.users))
        start = world.clock.now()
        base = start.replace(second=0, microsecond=0)
        channels = []
        for name, minutes in zip(("qa", "qb"), SLOT_MINUTES, strict=True):
            url = f"https://hooks.example.com/{user}/{name}"
            made = world._call(
                user, "POST", "/v1/channels", {"platform": "webhook", "name": name, "url": url}
            )
            assert made.status == 201, made.json
            cid = made.json["channel_id"]
            world.channel_urls[cid] = url
            world.receiver.add_secret(url, made.json["signing_secret"])
            at = [base + timedelta(minutes=m) for m in minutes]
            self.slots[cid] = set(at)
            days: dict[str, list[str]] = {}
            for a in at:
                days.setdefault(a.strftime("%a").lower(), []).append(a.strftime("%H:%M"))
            slots = [{"days": [day], "times": times} for day, times in days.items()]
            body = {"timezone": "UTC", "slots": slots}
            put = world._call(user, "PUT", f"/v1/channels/{cid}/posting-schedule", body)
            assert put.status == 200, put.json
            channels.append(cid)
        for n in range(QUEUED + REFILLS):
            chosen = rng.choice([[channels[0]], [channels[0]], [channels[1]], channels])
            offset = rng.uniform(1, 50) if n < QUEUED else rng.uniform(85, 100)
            self.queued.append(Queued(n, chosen, start + timedelta(seconds=round(offset, 3))))
        for q in rng.sample(self.queued[:QUEUED], CANCELS):
            q.cancel_at = start + timedelta(seconds=round(rng.uniform(60, 80), 3))
        self._plan_import(start, channels)
        store = get_dependencies().queue_deps.store
        store.reserve = self._interleaving(store.reserve)  # type: ignore[method-assign]

    def _plan_import(self, start: datetime, channels: list[str]) -> None:
        rng = self.rng
        lines = ["publish_at,channels,content"]
        # at the world's own publish instants (already stepped through second by second), late
        # enough that a chunk re-run after the crash still finds every row in the future
        times = sorted({p.publish_at for p in self.world.posts if p.publish_at > start + ROW_LEAD})
        for line in range(2, IMPORT_ROWS + 2):
            at = rng.choice(times) if times else start + ROW_LEAD
            chosen = rng.choice([[channels[0]], [channels[1]], [channels[0]], channels])
            names = " ".join(
                c if rng.random() < 0.5 else ("qa", "qb")[channels.index(c)] for c in chosen
            )
            content = f"import row {line} of seed {self.world.seed}"
            lines.append(f"{format_instant(at)},{names},{content}")
            self.rows.append((line, at, chosen, content))
            self.world._heat(at)
        self.csv = "\r\n".join(lines) + "\r\n"
        self.import_at = start + timedelta(seconds=5)

    # -- playing ---------------------------------------------------------------------------

    def tick(self, now: datetime) -> bool:
        """What is due now: creates, cancels, the import and its chunks; True when busy."""
        busy = False
        for q in self.queued:
            if not q.done and q.create_at <= now:
                self._create(q)
                busy = True
            if q.cancel_at is not None and not q.cancelled and q.cancel_at <= now and q.done:
                self._cancel(q)
                busy = True
        if self.import_at is not None and self.import_at <= now:
            self.import_at = None
            self._submit()
            self.next_receive_at = now
            busy = True
        if self.next_receive_at is not None and self.next_receive_at <= now:
            busy = self._import_step(now) or busy
        return busy

    def upcoming(self) -> list[datetime]:
        """The next instants this module acts at (the world steps onto them)."""
        at = [q.create_at for q in self.queued if not q.done]
        at += [q.cancel_at for q in self.queued if q.cancel_at and not q.cancelled]
        at += [t for t in (self.import_at, self.next_receive_at) if t is not None]
        return at

    def done(self, now: datetime) -> bool:
        """Every request made, the import finished, every post of this module due."""
        pending = any(not q.done or (q.cancel_at and not q.cancelled) for q in self.queued)
        due = [q.post.publish_at for q in self.queued if q.post and q.cancel_at is None]
        due += [at for _, at, _, _ in self.rows]
        return not pending and self.finished and all(now > at for at in due)

    @contextmanager
    def _nested(self) -> Iterator[None]:
        """Keep the outer request's Powertools state across a nested API request."""
        event, context, saved = (
            BaseRouter.current_event,
            BaseRouter.lambda_context,
            dict(app.context),
        )
        try:
            yield
        finally:
            BaseRouter.current_event, BaseRouter.lambda_context = event, context
            app.context.clear()
            app.context.update(saved)

    def _interleaving(self, reserve: Any) -> Any:
        """``reserve`` that first runs, maybe, a planned create or cancel (nested)."""

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            if self._depth == 0 and self.world.plan.enabled:
                self._depth += 1
                try:
                    self._maybe_interleave(kwargs["schedule_id"])
                finally:
                    self._depth -= 1
            return reserve(*args, **kwargs)

        return wrapped

    def _maybe_interleave(self, schedule_id: str) -> None:
        if (
            self.world.plan.draw("queue-interleave", schedule_id, self.totals["reserve"])
            >= INTERLEAVE_SHARE
        ):
            self.totals["reserve"] += 1
            return
        self.totals["reserve"] += 1
        now = self.world.clock.now()
        cancel = next(
            (q for q in self.queued if q.cancel_at and not q.cancelled and q.done and q.post),
            None,
        )
        create = next((q for q in self.queued if not q.done), None)
        with self._nested():
            if cancel is not None and (
                create is None or cancel.cancel_at - now < create.create_at - now
            ):  # type: ignore[operator]
                self.totals["queue_cancel_interleaved"] += 1
                self._cancel(cancel)
            elif create is not None:
                self.totals["queue_create_interleaved"] += 1
                self._create(create)

    def _lost(self, *parts: object) -> bool:
        return self.world.plan.chance(LOST_ANSWER_SHARE, "workflow-lost", *parts)

    def _create(self, q: Queued) -> None:
        from tests.support.scenario import PlannedPost

        q.done = True
        world = self.world
        content = f"queued {q.n} of seed {world.seed}"
        body = {"content": content, "publish_at": "next_free_slot", "channel_ids": q.channel_ids}
        headers = {"Idempotency-Key": f"queue-{world.seed}-{q.n}"}
        answer = world._call(self.user, "POST", "/v1/scheduled-posts", body, headers=headers)
        if answer.status == 201 and self._lost("create", q.n):
            self.totals["queue_create_answer_lost"] += 1
            again = world._call(self.user, "POST", "/v1/scheduled-posts", body, headers=headers)
            first = (answer.json["schedule_id"], answer.json["publish_at"])
            if (
                again.status != 201
                or (again.json["schedule_id"], again.json["publish_at"]) != first
            ):
                self.problems.append(
                    f"queued {q.n}: re-sent create answered {again.status} {again.json}, "
                    f"first {first}"
                )
        self.totals[f"queue_create_{answer.status}"] += 1
        if answer.status != 201:
            return
        at = parse_instant(answer.json["publish_at"])
        post = PlannedPost(
            index=world.n_posts + 1000 + q.n,
            user=self.user,
            channel_ids=q.channel_ids,
            publish_at=at,
            create_at=world.clock.now(),
            content=content,
            schedule_id=answer.json["schedule_id"],
            final_publish_at=at,
            final_content=content,
        )
        q.post = post
        world.posts.append(post)
        world._by_id[answer.json["schedule_id"]] = post
        world._heat(at)
        if answer.json.get("queue_slot") != answer.json["publish_at"]:
            self.problems.append(
                f"queued {q.n}: queue_slot {answer.json.get('queue_slot')}, publish_at {at}"
            )
        if at > world.clock.now() + timedelta(minutes=20):  # keep the world short
            self.problems.append(
                f"queued {q.n}: given {answer.json['publish_at']}, past the day's slots"
            )
            q.cancel_at = q.cancel_at or world.clock.now()

    def _cancel(self, q: Queued) -> None:
        q.cancelled = True
        post = q.post
        if post is None:
            return
        path = f"/v1/scheduled-posts/{post.schedule_id}"
        answer = self.world._call(self.user, "DELETE", path)
        if answer.status == 200 and self._lost("cancel", q.n):
            self.totals["queue_cancel_answer_lost"] += 1
            again = self.world._call(self.user, "DELETE", path)
            self.totals[f"queue_cancel_resent_{again.status}"] += 1
        self.totals[f"queue_cancel_{answer.status}"] += 1
        post.action = ("cancel", 0)
        post.action_result = (
            "done"
            if answer.status == 200
            else "refused"
            if answer.status in (409, 422)
            else "unknown"
        )

    def _submit(self) -> None:
        body = {"content": self.csv, "format": "csv", "dry_run": False}
        headers = {"Idempotency-Key": self.key}
        answer = self.world._call(self.user, "POST", "/v1/imports", body, headers=headers)
        self.totals[f"import_submit_{answer.status}"] += 1
        if answer.status == 202 and self._lost("import"):
            self.totals["import_answer_lost"] += 1
            answer = self.world._call(self.user, "POST", "/v1/imports", body, headers=headers)
        if answer.status != 202:
            self.problems.append(f"import: answered {answer.status} {answer.json}")
            self.finished = True
            return
        self.import_id = answer.json["import_id"]

    def _import_step(self, now: datetime) -> bool:
        """One receive of the import queue as the importer's event source mapping: the first
        run crashes after ``k`` rows, the request is re-sent, a later run may lose its delete."""
        settings, sqs = self.world.settings, self.world.sqs
        self.next_receive_at = now + timedelta(seconds=1)
        got = sqs.receive_message(
            QueueUrl=settings.IMPORT_QUEUE_URL,
            MaxNumberOfMessages=2,
            VisibilityTimeout=IMPORT_VISIBILITY_SECONDS,
            AttributeNames=["All"],
        ).get("Messages", [])
        if not got:
            return self._dead_letters() or self._finish_if_done(settings.IMPORT_QUEUE_URL)
        arn = sqs.get_queue_attributes(
            QueueUrl=settings.IMPORT_QUEUE_URL, AttributeNames=["QueueArn"]
        )["Attributes"]["QueueArn"]
        self.runs += 1
        api = get_dependencies()
        deps = ImporterDeps(posts=api.post_deps, store=api.imports, files=api.import_files)
        handler = make_lambda_handler(lambda: deps)
        event = {"Records": [to_event_record(m, arn) for m in got]}
        context = LambdaContext("importer", 120, clock=self.world.clock.seconds)
        try:
            with self._crash_after(
                self.rng.randint(1, IMPORT_ROWS - 1) if self.runs == 1 else None
            ):
                answer = handler(event, context)  # type: ignore[arg-type]
        except WorkerCrash:
            self.totals["import_crash_mid_chunk"] += 1
            self._resend()
            return True
        except Exception:  # every record failed (a throttle): the whole batch comes back
            self.totals["import_run_failed"] += 1
            return True
        failed = {f["itemIdentifier"] for f in answer.get("batchItemFailures", [])}
        self.totals["import_chunk_failed"] += len(failed)
        if self.runs == 2 and self._lost("import-delete"):
            self.totals["import_delete_lost"] += 1
            return True
        done = [m for m in got if m["MessageId"] not in failed]
        for m in done:
            sqs.delete_message(QueueUrl=settings.IMPORT_QUEUE_URL, ReceiptHandle=m["ReceiptHandle"])
        return True

    def _dead_letters(self) -> bool:
        """The importer's second mapping, on the import DLQ (decision "A stuck import is
        reported, never left running"): a chunk SQS moved there after ``IMPORT_MAX_RECEIVES``
        receives marks its import ``failed``. True when it ran."""
        settings, sqs = self.world.settings, self.world.sqs
        got = sqs.receive_message(
            QueueUrl=settings.IMPORT_DLQ_URL, MaxNumberOfMessages=2, AttributeNames=["All"]
        ).get("Messages", [])
        if not got:
            return False
        arn = sqs.get_queue_attributes(
            QueueUrl=settings.IMPORT_DLQ_URL, AttributeNames=["QueueArn"]
        )["Attributes"]["QueueArn"]
        api = get_dependencies()
        deps = ImporterDeps(
            posts=api.post_deps,
            store=api.imports,
            files=api.import_files,
            dlq_name=settings.IMPORT_DLQ_URL.rsplit("/", 1)[-1],
        )
        event = {"Records": [to_event_record(m, arn) for m in got]}
        context = LambdaContext("importer", 120, clock=self.world.clock.seconds)
        try:
            answer = make_lambda_handler(lambda: deps)(event, context)  # type: ignore[arg-type]
        except Exception:  # a throttled run: the records come back
            self.totals["import_dlq_run_failed"] += 1
            return True
        failed = {f["itemIdentifier"] for f in answer.get("batchItemFailures", [])}
        for m in got:
            if m["MessageId"] not in failed:
                self.totals["import_chunk_dead_lettered"] += 1
                sqs.delete_message(
                    QueueUrl=settings.IMPORT_DLQ_URL, ReceiptHandle=m["ReceiptHandle"]
                )
        return True

    @contextmanager
    def _crash_after(self, k: int | None) -> Iterator[None]:
        """The importer dies once ``k`` rows' posts are written (None: it does not)."""
        if k is None:
            yield
            return
        create = import_logic.create_post
        made = [0]

        def counting(*args: Any, **kwargs: Any) -> Any:
            post = create(*args, **kwargs)
            made[0] += 1
            if made[0] >= k:
                raise WorkerCrash(f"importer killed after {k} rows")
            return post

        with mock.patch.object(import_logic, "create_post", counting):
            yield

    def _resend(self) -> None:
        body = {"content": self.csv, "format": "csv", "dry_run": False}
        answer = self.world._call(
            self.user, "POST", "/v1/imports", body, headers={"Idempotency-Key": self.key}
        )
        self.totals[f"import_resent_{answer.status}"] += 1
        if answer.status != 202 or answer.json["import_id"] != self.import_id:
            self.problems.append(f"import: re-sent request answered {answer.status} {answer.json}")

    def _finish_if_done(self, queue_url: str) -> bool:
        """Finished once the import is and no chunk message is left (in flight or not)."""
        if self.import_id is None:
            self.finished = True
            return False
        names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        left = self.world.sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=names)
        if any(int(v) for v in left["Attributes"].values()):
            self.next_receive_at = self.world.clock.now() + timedelta(seconds=5)
            return False
        got = self.world._call(self.user, "GET", f"/v1/imports/{self.import_id}")
        if got.status == 200 and got.json["status"] in ("completed", "failed"):
            self.finished = True
            self.next_receive_at = None
            self._add_imported(got.json)
        else:  # the chunk waits for its visibility timeout
            self.next_receive_at = self.world.clock.now() + timedelta(seconds=5)
        return False

    def _add_imported(self, state: dict[str, Any]) -> None:
        from tests.support.scenario import PlannedPost

        world = self.world
        by_line = {r["line"]: r.get("schedule_id") for r in state.get("results", [])}
        for line, at, chosen, content in self.rows:
            sid = by_line.get(line)
            if sid is None:
                continue
            post = PlannedPost(
                index=world.n_posts + 2000 + line,
                user=self.user,
                channel_ids=chosen,
                publish_at=at,
                create_at=at,
                content=content,
                schedule_id=sid,
                final_publish_at=at,
                final_content=content,
            )
            world.posts.append(post)
            world._by_id[sid] = post

    # -- the oracle ------------------------------------------------------------------------

    def check(self, totals: Counter[str]) -> list[str]:
        """The promises of the module docstring."""
        totals.update(self.totals)
        problems = list(self.problems)
        problems += self._check_slots(totals)
        problems += self._check_import(totals)
        return problems[:10]

    def _posts(self) -> list[Post]:
        """Every post on a queue channel, read from the table (the harness may scan)."""
        table = self.world.resource.Table(self.world.settings.POSTS_TABLE_NAME)
        kwargs: dict[str, Any] = {
            "FilterExpression": "sk = :sk",
            "ExpressionAttributeValues": {":sk": keys.POST_SK},
        }
        found: list[Post] = []
        while True:
            page = table.scan(**kwargs)
            found += [Post.from_item(i) for i in page.get("Items", [])]
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return [p for p in found if p.owner == self.user and set(p.channel_ids) & set(self.slots)]

    def _check_slots(self, totals: Counter[str]) -> list[str]:
        problems: list[str] = []
        posts = self._posts()
        texts = Counter(p.content for p in posts)
        for text, n in sorted(texts.items()):
            if n > 1:
                problems.append(
                    f"{n} posts with the text {text!r} (one request, one row: one post)"
                )
        held: dict[tuple[str, datetime], list[str]] = {}
        table = self.world.resource.Table(self.world.settings.POSTS_TABLE_NAME)
        for p in posts:
            if p.status == PostStatus.CANCELLED or p.queue_slot is None:
                continue
            for cid in p.channel_ids:
                held.setdefault((cid, p.queue_slot), []).append(p.schedule_id)
            totals["queue_live_posts"] += 1
            if any(p.queue_slot not in self.slots[c] for c in p.channel_ids):
                problems.append(
                    f"post {p.schedule_id}: queued at {p.queue_slot}, not a slot of every "
                    f"channel of {p.channel_ids}"
                )
            for cid in p.channel_ids:
                item = table.get_item(
                    Key={"pk": keys.owner_pk(self.user), "sk": slot_sk(cid, p.queue_slot)}
                ).get("Item")
                holder = item["schedule_id"] if item else None
                if holder != p.schedule_id:
                    where = f"{cid}@{format_instant(p.queue_slot)}"
                    problems.append(f"post {p.schedule_id}: its slot {where} names {holder}")
        for (cid, at), ids in sorted(held.items()):
            if len(ids) > 1:
                problems.append(f"slot {cid}@{format_instant(at)} holds {len(ids)} posts: {ids}")
        return problems

    def _check_import(self, totals: Counter[str]) -> list[str]:
        if self.import_id is None:
            return []
        got = self.world._call(self.user, "GET", f"/v1/imports/{self.import_id}")
        if got.status != 200:
            return [f"import {self.import_id}: GET answered {got.status}"]
        state = got.json
        totals["import_rows_done"] += state["rows_done"]
        want = {
            line: import_logic.row_schedule_id(self.user, self.key, line) for line, *_ in self.rows
        }
        results = [(r["line"], r.get("schedule_id")) for r in state["results"]]
        problems = []
        bad = self.totals["import_crash_mid_chunk"] + self.totals["import_run_failed"]
        bad += self.totals["import_chunk_failed"] + self.totals["import_delete_lost"]
        if state["status"] == "failed" and bad >= IMPORT_MAX_RECEIVES:
            # every receive of the chunk went wrong (the planned crash and the world's
            # throttles): reported failed, naming the rows, with the rows made before it
            totals["import_failed_explained"] += 1
            if not state.get("error") or "rows 1-" not in state["error"]:
                problems.append(f"import {self.import_id}: failed without naming its rows")
            if len(results) != IMPORT_ROWS:
                problems.append(f"import {self.import_id}: failed with {len(results)} results")
            results = [(line, sid) for line, sid in results if sid is not None]
            want = {line: sid for line, sid in want.items() if line in dict(results)}
        elif (state["status"], state["rows_total"], state["rows_done"], state["rows_failed"]) != (
            "completed",
            IMPORT_ROWS,
            IMPORT_ROWS,
            0,
        ):
            problems.append(
                f"import {self.import_id}: {state['status']}, {state['rows_done']}/"
                f"{state['rows_total']} done, {state['rows_failed']} failed ({state.get('error')})"
            )
        if results != sorted(want.items()):
            problems.append(
                f"import {self.import_id}: results {results[:3]}..., not every row under its "
                "derived id"
            )
        return problems
