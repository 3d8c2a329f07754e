"""AWS scale model: publish lag when 10,000 / 100,000 / 1,000,000 posts fall due in one minute.

A small, deterministic (seeded) discrete-event simulation of the deployed fire path, stdlib only:

1. **Sweeper.** An EventBridge Scheduler schedule starts it once a minute (at a fixed second of
   the minute). Each run reads, per write shard, the due entries in
   ``(previous run + lookahead, this run + lookahead]`` with Query pages of at most 500 entries
   and sends them with SendMessageBatch (10 per call, a page split per dispatch queue), one
   call at a time per shard, as ``logic/sweep.py`` does, with a watermark write after each page
   that has a next; it writes no mark per entry (issue 16, W4; ``due_mark_write_units`` 0).
   Shards are processed by ``sweeper_parallelism`` threads (``SWEEP_PARALLELISM``), each shard
   by one; the run's CPU (``sweeper_cpu_s_per_message``, over the sweeper memory's share of a
   vCPU) is serial across threads. A run stops at ``sweeper_timeout_s`` and the next run
   carries on from the watermarks (W15); the notes count such runs.
2. **Delay queue.** Each message gets ``DelaySeconds = ceil(publish_at - send time)`` (0 when
   late), so it becomes visible at ``publish_at`` (rounded up to a whole second) or at once.
3. **Event source mapping.** Lambda polls with 5 concurrent batches while the queue is idle and,
   once messages are visible, adds up to 300 concurrent batches per minute (modelled as a linear
   ramp) up to ``min(MaximumConcurrency, 1,000 per mapping, regional concurrency left)``. Each
   batch takes up to ``batch_size`` visible messages (no batching window).
4. **Worker.** Messages of a batch run one after another (Powertools ``BatchProcessor``): reads
   and the claim, then the webhook call (seeded log-normal latency), then the final writes. A new
   execution environment adds a cold start. Every DynamoDB write is charged against its table's
   write throughput in one-second bins; a request that finds its second full waits for the next.
5. **Outbox relay** (issue 14). The posts table's stream is the outbox: it adds no write unit
   to the post's own writes, and stream reads by a Lambda trigger are free. The relay writes one
   feed item per outcome event into the posts table (``GET /v1/events``): ``post.claimed`` after
   the claim, ``delivery.published`` and ``post.published`` after the final write, each charged
   to the posts table's bins ``relay_delay_s`` after its commit. They are off the publish path
   (no post waits for them) but share the table's write throughput with the worker, so later
   posts' writes wait for them. The feed items' replicated writes to the ``by_owner`` index go
   to the index's own throughput and are not modelled.

Lag is measured when the webhook answers (what a reader of the destination sees). The model
never delivers early: a message is never visible before its ``publish_at``. Every documented
limit used is in :data:`LIMITS` with the AWS page it comes from (the shared ``AWS-FACTS.md``);
every other number is an assumption in :class:`Assumptions`, listed in ``docs/capacity.md``.

Run ``python -m bench.capacity_sim`` (``--quick`` for a small grid).
"""

from __future__ import annotations

import argparse
import heapq
import math
import random
import time
from array import array
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from bench.report import percentile, table, write_result


@dataclass(frozen=True)
class Limit:
    """A documented AWS limit: its value, unit and the page that documents it."""

    value: float
    unit: str
    source: str


#: Documented limits used by the model (values and pages from the shared ``AWS-FACTS.md``).
LIMITS: dict[str, Limit] = {
    "partition_write_units_per_s": Limit(
        1000,
        "WCU/s per partition",
        "DynamoDB Developer Guide, 'Understanding DynamoDB warm throughput'",
    ),
    "partition_read_units_per_s": Limit(
        3000,
        "RCU/s per partition",
        "DynamoDB Developer Guide, 'Understanding DynamoDB warm throughput'",
    ),
    "query_page_bytes": Limit(
        1_048_576,
        "bytes per Query page",
        "DynamoDB Developer Guide, 'Constraints' (Query/Scan 1 MB)",
    ),
    "new_table_write_units_per_s": Limit(
        4000,
        "WRU/s a new on-demand table serves at once",
        "DynamoDB Developer Guide, 'On-demand capacity mode' (initial throughput)",
    ),
    "read_unit_bytes": Limit(
        4096,
        "bytes per strongly consistent read unit (half for eventually consistent)",
        "DynamoDB Developer Guide, 'DynamoDB read and write operations'",
    ),
    "sqs_batch_max": Limit(
        10, "messages per SendMessageBatch", "SQS Developer Guide, 'Amazon SQS message quotas'"
    ),
    "sqs_max_delay_s": Limit(
        900, "seconds of DelaySeconds", "SQS Developer Guide, 'Amazon SQS delay queues'"
    ),
    "sqs_in_flight_max": Limit(
        120_000,
        "in-flight messages per standard queue",
        "SQS Developer Guide, 'Amazon SQS standard queue quotas'",
    ),
    "esm_initial_batches": Limit(
        5,
        "concurrent batches when scaling starts",
        "Lambda Developer Guide, 'SQS event source mapping' scaling",
    ),
    "esm_ramp_per_minute": Limit(
        300,
        "concurrent batches added per minute",
        "Lambda Developer Guide, 'SQS event source mapping' scaling",
    ),
    "esm_max_per_mapping": Limit(
        1000,
        "concurrent batches per mapping (MaximumConcurrency 2-1,000)",
        "Lambda Developer Guide, 'SQS event source mapping' parameters",
    ),
    "lambda_region_concurrency": Limit(
        1000,
        "concurrent executions per Region (default)",
        "Lambda Developer Guide, 'Lambda quotas'",
    ),
    "lambda_full_vcpu_mb": Limit(
        1769,
        "MB of function memory that gets one full vCPU (less memory, a proportional share)",
        "Lambda Developer Guide, 'Configure Lambda function memory'",
    ),
    "lambda_max_timeout_s": Limit(
        900, "seconds per invocation", "Lambda Developer Guide, 'Lambda quotas'"
    ),
    "scheduler_period_s": Limit(
        60,
        "seconds between sweeper runs (minimum; fired within the minute)",
        "EventBridge Scheduler User Guide, 'Schedule types'",
    ),
}


def _lim(name: str) -> float:
    return LIMITS[name].value


@dataclass(frozen=True)
class Assumptions:
    """Numbers the model needs that AWS does not document as limits (all stated in the docs).

    Latencies are seconds; sizes bytes; write units per post from the worker's code path
    (``bench/cost.py`` counts them from the real code when it runs; these are the defaults).
    """

    due_entry_bytes: int = 220
    query_latency_s: float = 0.015
    sqs_send_batch_latency_s: float = 0.020
    dynamodb_latency_s: float = 0.008
    #: Concurrent SendMessageBatch calls one sweeper thread keeps in flight: 1, as
    #: ``logic/sweep.py`` sends a shard's batches one after another.
    sweeper_io_concurrency: int = 1
    #: The sweeper's Lambda timeout (``infra/config.py`` ``sweeper_timeout_seconds``): a run
    #: stops there, and the next run sends the rest from the watermark.
    sweeper_timeout_s: float = 50.0
    #: Entries per due-index Query page (``DueIndex`` ``page_size``).
    query_page_limit: int = 500
    #: CPU seconds the sweeper spends per due entry (read and send) with one full vCPU:
    #: ``bench/sweeper_cpu.py`` measured 197 µs to send and 30 µs to read one on this
    #: machine's x86_64 CPython (2026-12-01), not on Lambda's arm64.
    sweeper_cpu_s_per_message: float = 0.000227
    #: Second of the minute the sweeper's schedule fires (Scheduler fires within the minute).
    sweep_offset_s: float = 30.0
    invoke_overhead_s: float = 0.030
    cold_start_s: float = 1.0
    webhook_median_s: float = 0.200
    webhook_sigma: float = 0.6
    #: GetItem post, claim UpdateItem (start marks), release UpdateItem, idempotency PutItem
    worker_calls_before_send: int = 4
    worker_calls_after_send: int = 2  # idempotency save, final UpdateItem (issue 16, W2)
    #: Worker write units per post, matched to ``bench/cost.py``'s measurement of the real worker
    #: (5 per one-channel post since issue 16, W10: claim 1 and pending release 1 before the
    #: send, the final post update 1 after it, the item being under 1 KB; idempotency put 1 and
    #: completion 1). The sweeper writes no mark per entry (W4).
    posts_write_units_before_send: float = 2.0
    posts_write_units_after_send: float = 1.0
    idempotency_write_units_before_send: float = 1.0
    idempotency_write_units_after_send: float = 1.0
    due_mark_write_units: float = 0.0
    other_lambda_concurrency: int = 0
    #: Feed items the relay writes to the posts table per post during the burst (issue 14,
    #: decision "The event feed lives in `PostsTable`"): ``post.claimed`` after the claim, then
    #: ``delivery.published`` and ``post.published`` after the final write (``post.scheduled`` was
    #: written at create, before the minute). Write units per feed item: one (a feed item is under
    #: 1 KB; ``bench/cost.py`` measures ``relay_write_units`` per post over the whole life).
    feed_write_units_before_send: float = 1.0
    feed_write_units_after_send: float = 2.0
    #: Seconds from a commit to the relay's feed write (Lambda polls a stream shard about four
    #: times a second; one batch of records, then the bus put, then the feed put).
    relay_delay_s: float = 1.0


@dataclass(frozen=True)
class Config:
    """The settings under test (the service's knobs plus the tables' write throughput)."""

    write_shards: int = 8
    lookahead_s: int = 600
    max_concurrency: int = 1000
    batch_size: int = 10
    sweeper_parallelism: int = 8
    #: Write units/s each table serves (4,000 = a new on-demand table; more needs warm throughput).
    table_write_units_per_s: float = 4000.0
    #: Messages of one batch delivered concurrently (threads) instead of one after another.
    batch_parallel: bool = False
    #: Dispatch queues, each with its own event source mapping (posts hashed over them).
    dispatch_queues: int = 1
    #: The account's Lambda concurrency in the Region (1,000 by default; raised on request).
    region_concurrency: int = 1000
    #: The sweeper Lambda's memory (MB), which sets its share of a vCPU.
    sweeper_memory_mb: int = 512

    def label(self) -> str:
        return (
            f"shards={self.write_shards} lookahead={self.lookahead_s}s "
            f"maxconc={self.max_concurrency} batch={self.batch_size} "
            f"sweepers={self.sweeper_parallelism} table_wru={self.table_write_units_per_s:g} "
            f"parallel={self.batch_parallel} queues={self.dispatch_queues} "
            f"region={self.region_concurrency}"
        )


@dataclass
class Result:
    """What one simulation run predicts. Lags in seconds."""

    posts: int
    config: Config
    delivered: int
    early: int
    p50: float
    p95: float
    p99: float
    max: float
    longest_sweep_s: float
    sweeps_late: int
    peak_concurrency: int
    cold_starts: int
    table_wait_s_total: float
    peak_in_flight: int
    drained_after_s: float
    notes: list[str] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        data = asdict(self)
        data["config"] = asdict(self.config)
        data["p99_under_60s"] = self.p99 < 60.0
        return data


class _SecondBins:
    """A table's write throughput as one-second bins: a request waits for a second with room."""

    def __init__(self, units_per_s: float) -> None:
        self.rate = units_per_s
        self.used: dict[int, float] = {}
        self.skip: dict[int, int] = {}  # full bin -> a later bin to try (path-compressed)

    def _find(self, b: int) -> int:
        path = []
        while b in self.skip:
            path.append(b)
            b = self.skip[b]
        for p in path:
            self.skip[p] = b
        return b

    def take(self, at: float, units: float) -> float:
        """Charge ``units`` at time ``at``; returns when the request is served (>= ``at``)."""
        if units <= 0:
            return at
        b = self._find(math.floor(at))
        while True:
            room = self.rate - self.used.get(b, 0.0)
            if room >= units or (room > 0 and units > self.rate):
                self.used[b] = self.used.get(b, 0.0) + units
                if self.used[b] >= self.rate:
                    self.skip[b] = b + 1
                return max(at, float(b))
            self.skip[b] = b + 1
            b = self._find(b + 1)


def _due_times(posts: int, rng: random.Random, start: float) -> list[float]:
    """``posts`` instants spread uniformly over the minute starting at ``start`` (ms resolution)."""
    return sorted(start + math.ceil(rng.random() * 60_000) / 1000 for _ in range(posts))


def simulate(
    posts: int,
    config: Config,
    assumptions: Assumptions | None = None,
    seed: int = 1,
) -> Result:
    """Simulate ``posts`` posts falling due in one minute under ``config``.

    Parameters
    ----------
    posts
        Number of posts (>= 1), each with one channel, due uniformly in ``[T, T + 60 s)``.
    config
        The settings under test.
    assumptions
        Latencies and sizes (defaults: :class:`Assumptions`).
    seed
        Seed of the only random source (due instants, shard choice, webhook latency).

    Returns
    -------
    Result
        Lag percentiles (seconds after ``publish_at`` at which the webhook answered) and the
        internals that explain them.

    Raises
    ------
    ValueError
        When ``posts`` < 1 or a setting is outside its documented range.
    """
    a = assumptions or Assumptions()
    if posts < 1:
        raise ValueError("posts must be >= 1")
    if not 1 <= config.lookahead_s <= _lim("sqs_max_delay_s"):
        raise ValueError("lookahead_s must be 1..900 (SQS DelaySeconds limit)")
    if config.dispatch_queues < 1 or config.region_concurrency < 1:
        raise ValueError("dispatch_queues and region_concurrency must be >= 1")
    if not 2 <= config.max_concurrency <= _lim("esm_max_per_mapping"):
        raise ValueError("max_concurrency must be 2..1000 (ESM MaximumConcurrency)")
    if not 1 <= config.batch_size <= 10:
        raise ValueError("batch_size must be 1..10 (no batching window in this model)")
    rng = random.Random(seed)
    period = _lim("scheduler_period_s")
    due_start = 3600.0  # T: leaves room for the longest lookahead before it
    due = _due_times(posts, rng, due_start)
    shard_of = [rng.randrange(config.write_shards) for _ in range(posts)]

    # ---- 1. sweeper -------------------------------------------------------------------------
    send_time = [0.0] * posts
    by_shard: list[list[int]] = [[] for _ in range(config.write_shards)]
    for i in range(posts):  # due is sorted, so each shard's list is in due order
        by_shard[shard_of[i]].append(i)
    page_items = max(1, min(a.query_page_limit, int(_lim("query_page_bytes") // a.due_entry_bytes)))
    active = max(1, min(config.sweeper_parallelism, config.write_shards))
    partition_wcu = min(
        _lim("partition_write_units_per_s"), config.table_write_units_per_s / active
    )
    per_mark_s = (
        max(
            a.due_mark_write_units / partition_wcu,
            a.dynamodb_latency_s / a.sweeper_io_concurrency,
        )
        if a.due_mark_write_units
        else 0.0
    )
    per_send_s = a.sqs_send_batch_latency_s / a.sweeper_io_concurrency
    page_read_s = a.query_latency_s + (page_items * a.due_entry_bytes / 8192) / _lim(
        "partition_read_units_per_s"
    )
    # The sweeper's CPU per message, slowed by its memory's share of a vCPU; threads share
    # one interpreter, so the run's CPU work is serial whatever the threads do.
    vcpu_share = min(1.0, config.sweeper_memory_mb / _lim("lambda_full_vcpu_mb"))
    cpu_per_message_s = a.sweeper_cpu_s_per_message / vcpu_share
    queues = config.dispatch_queues
    first_sweep = (
        math.floor((due_start - config.lookahead_s) / period) * period + a.sweep_offset_s - period
    )
    shard_free = [0.0] * config.write_shards
    cursor = [0] * config.write_shards
    longest_sweep = 0.0
    sweeps_late = 0
    sweeps_cut = 0
    k = 0
    while any(cursor[s] < len(by_shard[s]) for s in range(config.write_shards)):
        run_at = first_sweep + k * period
        horizon = run_at + config.lookahead_s
        deadline = run_at + a.sweeper_timeout_s
        threads = [run_at] * active
        planned: list[tuple[float, int, int]] = []  # (I/O-bound send time, shard, position)
        for s in range(config.write_shards):
            items = by_shard[s]
            lo = cursor[s]
            hi = lo
            while hi < len(items) and due[items[hi]] <= horizon:
                hi += 1
            if hi == lo:
                continue
            slot = min(range(active), key=threads.__getitem__)
            t = max(threads[slot], shard_free[s])
            for page_lo in range(lo, hi, page_items):
                if t > deadline:
                    break
                t += page_read_s
                page_hi = min(hi, page_lo + page_items)
                m = page_hi - page_lo
                # A page's messages go out per queue, at most 10 per call.
                calls = m if m < queues else queues * math.ceil(m / (10 * queues))
                calls = max(calls, math.ceil(m / 10))
                for c in range(calls):
                    t += per_send_s
                    first = page_lo + c * m // calls
                    last = page_lo + (c + 1) * m // calls
                    for j in range(first, last):
                        planned.append((t, s, j))
                    t += per_mark_s * (last - first)
                if page_hi < hi:
                    t += a.dynamodb_latency_s  # the watermark write after a page with a next
            threads[slot] = t
        planned.sort()
        run_end = run_at
        sent_upto = {s: cursor[s] for s in range(config.write_shards)}
        cut = False
        for rank, (io_t, s, j) in enumerate(planned):
            at = max(io_t, run_at + (rank + 1) * cpu_per_message_s)
            if at > deadline or j != sent_upto[s]:
                cut = True  # stopped by the timeout (a shard stops at its first unsent entry)
                continue
            send_time[by_shard[s][j]] = at
            sent_upto[s] = j + 1
            run_end = max(run_end, at)
        for s in range(config.write_shards):
            cursor[s] = sent_upto[s]
            shard_free[s] = max(shard_free[s], min(run_end, deadline))
        if cut or any(cursor[s] < len(by_shard[s]) and due[by_shard[s][cursor[s]]] <= horizon
                      for s in range(config.write_shards)):  # fmt: skip
            sweeps_cut += 1
        longest_sweep = max(longest_sweep, run_end - run_at)
        if run_end - run_at > _lim("lambda_max_timeout_s"):
            sweeps_late += 1
        k += 1

    # ---- 2. delay queue ---------------------------------------------------------------------
    visible = [send_time[i] + max(0, math.ceil(due[i] - send_time[i])) for i in range(posts)]
    order = sorted(range(posts), key=visible.__getitem__)

    # ---- 3 + 4. event source mapping and worker ---------------------------------------------
    queues = config.dispatch_queues
    cap = min(
        queues * min(config.max_concurrency, int(_lim("esm_max_per_mapping"))),
        config.region_concurrency - a.other_lambda_concurrency,
    )
    initial = queues * int(_lim("esm_initial_batches"))
    ramp = queues * _lim("esm_ramp_per_minute")
    posts_table = _SecondBins(config.table_write_units_per_s)
    idem_table = _SecondBins(config.table_write_units_per_s)
    mu = math.log(a.webhook_median_s)
    lags = array("d")
    early = 0
    table_wait = 0.0
    busy: list[tuple[float, int]] = []  # (batch end, messages in it)
    in_flight = 0
    warm = initial
    cold_starts = 0
    peak_conc = 0
    peak_in_flight = 0
    scale_from = visible[order[0]]
    t = scale_from
    i = 0
    last_done = t
    while i < posts:
        while busy and busy[0][0] <= t:
            in_flight -= heapq.heappop(busy)[1]
        allowed = min(cap, initial + int(ramp * (t - scale_from) / 60.0))
        if len(busy) < allowed and visible[order[i]] <= t:
            j = i
            while j < posts and j - i < config.batch_size and visible[order[j]] <= t:
                j += 1
            cur = t + a.invoke_overhead_s
            if len(busy) + 1 > warm:
                warm += 1
                cold_starts += 1
                cur += a.cold_start_s
            batch_start = cur
            batch_end = cur
            for m in range(i, j):
                p = order[m]
                if config.batch_parallel:
                    cur = batch_start
                cur += a.worker_calls_before_send * a.dynamodb_latency_s
                served = max(
                    posts_table.take(cur, a.posts_write_units_before_send),
                    idem_table.take(cur, a.idempotency_write_units_before_send),
                )
                table_wait += served - cur
                cur = served
                posts_table.take(cur + a.relay_delay_s, a.feed_write_units_before_send)
                if cur < due[p]:
                    early += 1
                cur += rng.lognormvariate(mu, a.webhook_sigma)
                lags.append(cur - due[p])
                cur += a.worker_calls_after_send * a.dynamodb_latency_s
                served = max(
                    posts_table.take(cur, a.posts_write_units_after_send),
                    idem_table.take(cur, a.idempotency_write_units_after_send),
                )
                table_wait += served - cur
                cur = served
                posts_table.take(cur + a.relay_delay_s, a.feed_write_units_after_send)
                batch_end = max(batch_end, cur)
            cur = batch_end
            heapq.heappush(busy, (cur, j - i))
            in_flight += j - i
            last_done = max(last_done, cur)
            peak_conc = max(peak_conc, len(busy))
            peak_in_flight = max(peak_in_flight, in_flight)
            i = j
            continue
        candidates = []
        if busy:
            candidates.append(busy[0][0])
        if len(busy) < allowed:
            candidates.append(visible[order[i]])
        elif allowed < cap:
            candidates.append(scale_from + 60.0 * (allowed + 1 - initial) / ramp)
        t = max(min(candidates), t + 1e-9)

    ordered = sorted(lags)
    notes = []
    if peak_in_flight > _lim("sqs_in_flight_max"):
        notes.append("in-flight messages exceed the standard-queue quota")
    if sweeps_cut:
        notes.append(
            f"{sweeps_cut} sweeper run(s) stopped by the {a.sweeper_timeout_s:.0f} s timeout "
            "(later runs sent the rest)"
        )
    return Result(
        posts=posts,
        config=config,
        delivered=len(lags),
        early=early,
        p50=percentile(ordered, 50),
        p95=percentile(ordered, 95),
        p99=percentile(ordered, 99),
        max=ordered[-1],
        longest_sweep_s=longest_sweep,
        sweeps_late=sweeps_late,
        peak_concurrency=peak_conc,
        cold_starts=cold_starts,
        table_wait_s_total=table_wait,
        peak_in_flight=peak_in_flight,
        drained_after_s=last_done - due_start,
        notes=notes,
    )


BASELINE = Config()
#: The settings that carry a million posts (``infra/config.py`` ``MILLION_A_MINUTE_OVERRIDES`` on
#: top of prod, held equal to the synthesized template by ``tests/infrastructure``): 64 shards
#: swept on 64 threads by a sweeper of 1,769 MB (one vCPU), ten queues and mappings of up to
#: 1,000 batches, tables warm at 100,000 write units/s, batches delivered concurrently, and the
#: Region's concurrency raised to 4,000.
SCALED = Config(
    write_shards=64,
    sweeper_parallelism=64,
    sweeper_memory_mb=1769,
    max_concurrency=1000,
    batch_size=5,
    table_write_units_per_s=100_000.0,
    batch_parallel=True,
    dispatch_queues=10,
    region_concurrency=4_000,
)
#: The CDK app's stage defaults as the model sees them (``infra/config.py`` ``STAGE_DEFAULTS``,
#: held equal to the synthesized templates by ``tests/infrastructure/test_capacity_defaults.py``):
#: shards, lookahead, the worker mapping's maximum concurrency and batch size, the posts and
#: idempotency tables' warm write throughput (4,000 = none set, a new on-demand table), the
#: batch's records delivered concurrently (decisions H12), one dispatch queue, the Region's
#: default concurrency, and ``SWEEP_PARALLELISM`` (dev sweeps its shards in turn, prod on 8).
CDK_DEFAULTS: dict[str, Config] = {
    "dev": Config(
        write_shards=8, max_concurrency=5, batch_size=5, sweeper_parallelism=1, batch_parallel=True
    ),
    "prod": Config(
        write_shards=16,
        max_concurrency=500,
        batch_size=5,
        sweeper_parallelism=8,
        batch_parallel=True,
        table_write_units_per_s=20_000.0,
    ),
}
#: One factor at a time around the baseline, then the smallest settings that meet p99 < 60 s.
VARIATIONS: dict[str, tuple[Any, ...]] = {
    "write_shards": (1, 8, 32),
    "lookahead_s": (30, 60, 300, 600, 900),
    "max_concurrency": (100, 300, 1000),
    "batch_size": (1, 10),
    "sweeper_parallelism": (1, 8),
}


def configs_for_sweep() -> list[Config]:
    """The baseline, each one-factor variation, then the grid of the capacity levers, then the
    CDK app's stage defaults (:data:`CDK_DEFAULTS`)."""
    configs = [BASELINE]
    for name, values in VARIATIONS.items():
        configs += [replace(BASELINE, **{name: v}) for v in values]
    configs += [
        replace(
            BASELINE,
            table_write_units_per_s=wru,
            batch_parallel=parallel,
            dispatch_queues=queues,
            region_concurrency=region,
        )
        for wru in (4000.0, 40_000.0, 200_000.0)
        for parallel in (False, True)
        for queues, region in ((1, 1000), (4, 4000), (10, 10_000))
    ]
    configs += [replace(SCALED, lookahead_s=lk) for lk in (30, 60, 120, 600)]
    configs += [replace(SCALED, write_shards=shards) for shards in (1, 8, 32)]
    configs += list(CDK_DEFAULTS.values())
    return list(dict.fromkeys(configs))


def sweep(sizes: tuple[int, ...], seed: int = 1) -> list[Result]:
    """Every size under every configuration of :func:`configs_for_sweep`."""
    return [simulate(posts, config, seed=seed) for posts in sizes for config in configs_for_sweep()]


def passing(results: list[Result]) -> dict[int, list[str]]:
    """Per size, the labels of the configurations whose p99 lag is under 60 s."""
    out: dict[int, list[str]] = {}
    for r in results:
        out.setdefault(r.posts, [])
        if r.p99 < 60.0:
            out[r.posts].append(r.config.label())
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="sizes 1000,10000 only")
    args = parser.parse_args(argv)
    sizes = (1000, 10_000) if args.quick else tuple(int(s) for s in args.sizes.split(","))
    started = time.perf_counter()
    results = sweep(sizes, seed=args.seed)
    payload = {
        "seed": args.seed,
        "sizes": list(sizes),
        "limits": {k: asdict(v) for k, v in LIMITS.items()},
        "assumptions": asdict(Assumptions()),
        "baseline": asdict(BASELINE),
        "cdk_defaults": {stage: asdict(config) for stage, config in CDK_DEFAULTS.items()},
        "million_settings": asdict(SCALED),
        "runs": [r.row() for r in results],
        "p99_under_60s": passing(results),
        "wall_seconds": round(time.perf_counter() - started, 1),
    }
    path = write_result("capacity_sim", payload)
    headers = [
        "posts", "shards", "lookahead s", "max conc", "batch", "sweepers", "table WRU/s",
        "parallel", "queues", "region conc",
        "p50 s", "p95 s", "p99 s", "max s", "longest sweep s", "peak conc", "p99<60",
    ]  # fmt: skip
    rows = [
        [
            r.posts,
            r.config.write_shards,
            r.config.lookahead_s,
            r.config.max_concurrency,
            r.config.batch_size,
            r.config.sweeper_parallelism,
            int(r.config.table_write_units_per_s),
            "yes" if r.config.batch_parallel else "no",
            r.config.dispatch_queues,
            r.config.region_concurrency,
            r.p50,
            r.p95,
            r.p99,
            r.max,
            r.longest_sweep_s,
            r.peak_concurrency,
            "yes" if r.p99 < 60 else "no",
        ]
        for r in results
    ]
    print(table(headers, rows))
    print(f"\nwrote {path} ({payload['wall_seconds']} s)")
    return payload


if __name__ == "__main__":
    main()
