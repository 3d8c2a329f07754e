"""Sweep read amplification: due-index items read by one sweep / posts due in its window.

For each size of far-future backlog (0, 10,000 and 100,000 pending posts by default), in moto
in-process under a frozen clock:

1. create the tables and queues (``tests.support.fixtures.create_resources``);
2. seed the far-future due entries with BatchWriteItem, spread from just after the sweep's
   horizon (the same hour bucket included) to 30 days ahead, over every write shard;
3. seed ``--due`` posts due inside the sweep's window;
4. run the real sweeper (``scheduled_posts.logic.sweep.Sweeper``) twice: a *first* sweep (no
   watermark: it reads from ``now - MISFIRE_GRACE_SECONDS``), and a *steady* sweep one minute
   later whose window is ``(previous horizon, now + LOOKAHEAD_SECONDS]`` with new posts due in it;
5. count, with the botocore-hook meter, the items every due-index Query read (``ScannedCount``)
   and every request.

The goal is an amplification of 1.0 at every backlog size. Items are counted, never timed (moto
Query time grows with table size; AWS's does not).
"""

from __future__ import annotations

import argparse
import os
import random
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3

from bench.meter import Meter
from bench.report import table, write_result

START = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
DEFAULT_SIZES = (0, 10_000, 100_000)


def _fake_aws_env() -> None:
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
        "POWERTOOLS_METRICS_NAMESPACE": "Bench",
        "POWERTOOLS_METRICS_DISABLED": "true",
    }.items():
        os.environ[name] = value
    os.environ.pop("AWS_ENDPOINT_URL", None)


def _entry(publish_at: datetime, schedule_id: str, shards: int) -> dict[str, Any]:
    from scheduled_posts import keys
    from scheduled_posts.clock import format_instant

    shard = keys.shard_for(schedule_id, shards)
    return {
        "bucket": keys.due_bucket(publish_at, shard),
        "due": keys.order_key(publish_at, schedule_id),
        "schedule_id": schedule_id,
        "publish_at": format_instant(publish_at),
        "version": 1,
        "shard": shard,
    }


def _seed(table_name: str, entries: list[dict[str, Any]]) -> None:
    table_resource = boto3.resource("dynamodb", region_name="us-east-1").Table(table_name)
    with table_resource.batch_writer() as batch:
        for item in entries:
            batch.put_item(Item=item)


def measure(far_future: int, due: int, shards: int = 8, seed: int = 1) -> dict[str, Any]:
    """Run the two sweeps over a backlog of ``far_future`` entries; returns the counts.

    Returns a dict with, per sweep (``first``, ``steady``): posts due in its window, items read
    by due-index Queries, Query calls, all DynamoDB requests, messages sent, and
    ``amplification`` = items read / posts due.
    """
    import time_machine
    from moto import mock_aws

    from scheduled_posts.clock import SystemClock
    from scheduled_posts.data import aws as aws_clients
    from scheduled_posts.logic.sweep import Sweeper
    from tests.support.fixtures import create_resources

    rng = random.Random(seed)
    lookahead = 600
    out: dict[str, Any] = {"far_future": far_future, "due_per_sweep": due, "shards": shards}
    with time_machine.travel(START, tick=False) as traveller, mock_aws():
        aws_clients.reset_clients()
        res = create_resources(
            prefix=f"bench{far_future}", LOOKAHEAD_SECONDS=lookahead, WRITE_SHARD_COUNT=shards
        )
        settings = res.settings
        horizon_1 = START + timedelta(seconds=lookahead)
        horizon_2 = horizon_1 + timedelta(seconds=60)
        month = 30 * 86400
        far = [
            _entry(horizon_2 + timedelta(seconds=1 + rng.random() * month), f"far-{i:07d}", shards)
            for i in range(far_future)
        ]
        seeded_at = time.perf_counter()
        _seed(settings.DUE_INDEX_TABLE_NAME, far)
        out["seed_seconds_moto"] = round(time.perf_counter() - seeded_at, 1)
        windows = {
            "first": (START, horizon_1),
            "steady": (horizon_1, horizon_2),
        }
        for name, (low, high) in windows.items():
            span = (high - low).total_seconds()
            _seed(
                settings.DUE_INDEX_TABLE_NAME,
                [
                    _entry(low + timedelta(seconds=0.001 + rng.random() * (span - 0.002)),
                           f"{name}-{i:05d}", shards)
                    for i in range(due)
                ],
            )  # fmt: skip
            meter = Meter()
            with meter.installed():
                aws_clients.reset_clients()
                meter.phase = "sweep"
                result = Sweeper(settings, clock=SystemClock()).sweep()
            queries = [r for r in meter.usage.rows() if r["operation"] == "Query"]
            items_read = sum(r["items_read"] for r in queries)
            out[name] = {
                "posts_due_in_window": due,
                "items_read": items_read,
                "sweeper_scanned_count": result.scanned_count,
                "query_calls": sum(r["calls"] for r in queries),
                "dynamodb_requests": meter.usage.total("calls", service="dynamodb"),
                "read_units": meter.usage.total("read_units", service="dynamodb"),
                "write_units": meter.usage.total("write_units", service="dynamodb"),
                "sqs_requests": meter.usage.total("requests", service="sqs"),
                "enqueued": result.enqueued,
                "amplification": items_read / due if due else float("nan"),
            }
            traveller.shift(timedelta(seconds=60))
        aws_clients.reset_clients()
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes", default=",".join(str(s) for s in DEFAULT_SIZES), help="far-future backlogs"
    )
    parser.add_argument("--due", type=int, default=200, help="posts due in each sweep's window")
    parser.add_argument("--shards", type=int, default=8)
    args = parser.parse_args(argv)
    _fake_aws_env()
    started = time.perf_counter()
    runs = [measure(int(s), args.due, args.shards) for s in args.sizes.split(",")]
    payload = {"runs": runs, "wall_seconds": round(time.perf_counter() - started, 1)}
    path = write_result("sweep_reads", payload)
    rows = [
        [
            r["far_future"],
            sweep,
            r[sweep]["posts_due_in_window"],
            r[sweep]["items_read"],
            r[sweep]["amplification"],
            r[sweep]["query_calls"],
            r[sweep]["dynamodb_requests"],
            r[sweep]["read_units"],
            r[sweep]["enqueued"],
        ]
        for r in runs
        for sweep in ("first", "steady")
    ]
    headers = [
        "far-future pending", "sweep", "due in window", "items read", "amplification",
        "queries", "DynamoDB requests", "read units", "enqueued",
    ]  # fmt: skip
    print(table(headers, rows))
    print(f"\nwrote {path} ({payload['wall_seconds']} s)")
    return payload


if __name__ == "__main__":
    main()
