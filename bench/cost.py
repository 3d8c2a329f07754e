"""Cost per post: every AWS request and DynamoDB unit from create to published, in dollars.

**This service, measured.** In moto in-process under a simulated clock, ``--posts`` posts (over
``--users`` users whose ids are 36-character Cognito subs, one webhook channel each,
280-character content) go through the real code:
the API Lambda handler (``POST /v1/scheduled-posts`` with API Gateway v2 events), the sweeper
handler every minute, the SQS delay queue, the worker handler (played by the test driver as the
event source mapping, batches of ``--batch-size``) and a fake webhook receiver. The meter
(``bench/meter.py``, botocore hooks) counts requests per operation and charges DynamoDB units
by AWS's sizing rules. Posts are due two hours after creation (the common case: found by the
sweeper, not promoted by the API).

Per post, the bill is: the API Gateway request, the API and worker Lambda invocations and their
GB-seconds (duration *modelled* as ``calls x ASSUMED_CALL_SECONDS + webhook time``: moto's
timings are not AWS's), the DynamoDB units measured per phase, and the SQS requests: the
sweeper's sends (measured) plus the event source mapping's ReceiveMessage and
DeleteMessageBatch per worker batch (what Lambda does; the driver's own calls are not billed).
Sweeps and watchdog runs happen every minute whatever the load: they are reported as a fixed
monthly cost, measured from idle runs, not per post.

**A one-image post** (``--media``, on by default): the same pipeline run again with one ready PNG
upload per post, made through the API; its row and the ``media`` key come from
``bench/media_cost.py``.

**What a user would pick instead, modelled with the same prices and the measured post item size:**

* (a) One EventBridge Scheduler one-time schedule per post invoking a Lambda (create: API
  request, API Lambda, one PutItem, one free CreateSchedule; fire: one Scheduler invocation,
  one Lambda that reads the post, claims it, calls the webhook and writes the result).
* (b) A naive poller: a Lambda every minute that Scans the posts table for due rows (read
  units grow with every pending post), then publishes inline. Assumptions: ``PENDING_POSTS``
  pending posts, ``POSTS_PER_MONTH`` posts a month, a poll every 60 s.
* (c) The same poller Querying a ``status/publish_at`` GSI instead of scanning (reads grow with
  due rows; one hot partition caps writes at 1,000 units/s).
"""

from __future__ import annotations

import argparse
import os
import time
import uuid
import warnings
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.media_cost import Uploader, media_cost
from bench.meter import Meter
from bench.prices import PRICES, PRICES_TAKEN
from bench.report import table, write_result
from bench.units import read_units, write_units

START = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
#: Seconds one AWS SDK call is assumed to take inside Lambda (for GB-seconds only).
ASSUMED_CALL_SECONDS = 0.010
#: Seconds one webhook call is assumed to take (the destination's time, billed to us).
ASSUMED_WEBHOOK_SECONDS = 0.200
#: Seconds of Python work per invocation besides calls (assumed).
ASSUMED_OVERHEAD_SECONDS = 0.005
LAMBDA_MEMORY_GB = 0.5  # infra/config.py memory_mb default 512
MINUTES_PER_MONTH = 43_200
PENDING_POSTS = 100_000
POSTS_PER_MONTH = 1_000_000
CONTENT = "x" * 280


def _fake_aws_env() -> None:
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_LOG_LEVEL": "ERROR",
        "POWERTOOLS_METRICS_NAMESPACE": "Bench",
        "POWERTOOLS_DEV": "false",
        "POWERTOOLS_METRICS_DISABLED": "true",
    }.items():
        os.environ[name] = value
    os.environ.pop("AWS_ENDPOINT_URL", None)


@dataclass
class Counted:
    """Invocations and the meter after a run."""

    meter: Meter
    invocations: dict[str, int]
    posts: int
    published: int
    accepted_deliveries: int
    early_requests: int
    post_item_bytes: float
    idle_sweep: dict[str, float]
    idle_watchdog: dict[str, float]
    #: Outcome events relayed (stored in the feed), put on the bus, and relay invocations
    #: (batches of stream records).
    events: int = 0
    bus_events: int = 0
    relay_invocations: int = 0
    #: The uploads' probe timings and image size (``media_cost.Uploader.stats``), media runs only.
    media: dict[str, Any] | None = None


def run_pipeline(posts: int, users: int, batch_size: int, *, media: bool = False) -> Counted:
    """Drive ``posts`` posts from create to published through the real handlers, metered; with
    ``media`` each post carries its own ready PNG upload (``bench/media_cost.py``)."""
    import time_machine
    from moto import mock_aws

    from bench.units import item_size
    from functions.sweeper.handler import make_lambda_handler as make_sweeper_handler
    from functions.watchdog.handler import make_lambda_handler as make_watchdog_handler
    from functions.worker.handler import make_lambda_handler as make_worker_handler
    from local.emulation.lambda_runtime import LambdaContext
    from scheduled_posts.clock import format_instant
    from scheduled_posts.data import aws as aws_clients
    from scheduled_posts.data.media_objects import S3MediaObjects
    from scheduled_posts.data.post_store import PostStore
    from scheduled_posts.data.queue import DispatchQueue
    from scheduled_posts.logic.promotion import make_promoter
    from scheduled_posts.logic.publish import Publisher
    from scheduled_posts.logic.sweep import Sweeper
    from scheduled_posts.logic.watchdog import rescue_expired_leases
    from scheduled_posts.platforms.webhook import WebhookAdapter
    from tests.support.api import ApiClient, install_api, uninstall_api
    from tests.support.clock import SimClock
    from tests.support.driver import Driver
    from tests.support.fixtures import create_resources
    from tests.support.receiver import FakeReceiver

    meter = Meter()
    invocations: dict[str, int] = {"api": 0, "sweep": 0, "worker": 0, "watchdog": 0}
    with (
        time_machine.travel(START, tick=False) as traveller,
        mock_aws(),
        meter.installed(),
    ):
        clock = SimClock(traveller)
        aws_clients.reset_clients()
        meter.phase = "setup"
        aws = create_resources(prefix="cost")
        settings = aws.settings
        receiver = FakeReceiver(clock)
        uploader = Uploader(meter, settings.MEDIA_BUCKET_NAME) if media else None
        install_api(settings, clock, promoter=make_promoter(settings, clock))
        store = PostStore(settings.POSTS_TABLE_NAME)
        queue = DispatchQueue(settings.DISPATCH_QUEUE_URL)
        publisher = Publisher(
            settings,
            store=store,
            queue=queue,
            adapters={
                "webhook": WebhookAdapter(
                    settings,
                    transport=receiver,
                    resolver=receiver.resolver,
                    media=S3MediaObjects(settings.MEDIA_BUCKET_NAME) if media else None,
                )
            },
            clock=clock,
        )
        worker_handler = make_worker_handler(lambda: publisher)
        sweeper = Sweeper(settings, clock=clock)
        sweeper_handler = make_sweeper_handler(lambda: sweeper)
        watchdog_handler = make_watchdog_handler(
            lambda: rescue_expired_leases(settings, store=store, queue=queue, clock=clock)
        )

        def sweep(phase: str = "sweep") -> Any:
            meter.phase = phase
            invocations[phase] = invocations.get(phase, 0) + 1
            try:
                return sweeper_handler({}, LambdaContext("sweeper", 50, clock=clock.seconds))
            finally:
                meter.phase = "esm"

        def watchdog(phase: str = "watchdog") -> Any:
            meter.phase = phase
            invocations[phase] = invocations.get(phase, 0) + 1
            try:
                return watchdog_handler({}, LambdaContext("watchdog", 50, clock=clock.seconds))
            finally:
                meter.phase = "esm"

        def worker(event: dict[str, Any], context: Any) -> Any:
            meter.phase = "worker"
            invocations["worker"] += 1
            try:
                return worker_handler(event, context)
            finally:
                meter.phase = "esm"

        # Channels (once per user; not part of a post's cost).
        meter.phase = "channels"
        # Owners are Cognito subs (36-character UUIDs), as deployed: the owner is part of the
        # post item, whose size decides its write units.
        clients = [ApiClient(str(uuid.UUID(int=u + 1))) for u in range(users)]
        channels = []
        for client in clients:
            channel = client.post(
                "/v1/channels",
                {"platform": "webhook", "name": "main", "url": f"https://hooks.example.com/{client.sub}"},
            ).json  # fmt: skip
            receiver.add_secret(channel["url"], channel["signing_secret"])
            channels.append(channel["channel_id"])

        # Idle sweeper and watchdog runs: the fixed per-minute cost. The first sweep has no
        # watermark (it reads back MISFIRE_GRACE_SECONDS); the second is a steady idle minute.
        sweep("warmup")
        watchdog("warmup")
        clock.advance(60)
        sweep("idle-sweep")
        watchdog("idle-watchdog")
        idle_sweep = _snapshot(meter, "idle-sweep")
        idle_watchdog = _snapshot(meter, "idle-watchdog")
        clock.advance(60)

        # Creates.
        meter.phase = "create"
        publish_base = clock.now() + timedelta(hours=2)
        for i in range(posts):
            client = clients[i % users]
            publish_at = publish_base + timedelta(milliseconds=250 * i)
            body = {"content": CONTENT, "publish_at": format_instant(publish_at),
                    "channel_ids": [channels[i % users]]}  # fmt: skip
            if uploader:
                with uploader.timed_probe():
                    body["media_ids"] = [uploader.upload(client)]
                invocations["media_api"] = invocations.get("media_api", 0) + 2
            invocations["api"] += 1
            answer = client.post("/v1/scheduled-posts", body)
            if answer.status != 201:
                raise RuntimeError(f"create failed: {answer.status} {answer.json}")
        meter.phase = "esm"
        uninstall_api()

        # Fire: from just before the lookahead window opens until all are published.
        meter.phase = "measure-skip"
        clock.advance_to(publish_base - timedelta(seconds=settings.LOOKAHEAD_SECONDS + 120))
        driver = Driver(aws, clock, worker=worker, sweeper=sweep, watchdog=watchdog,
                        batch_size=batch_size)  # fmt: skip
        meter.phase = "esm"
        driver.run_until(publish_base + timedelta(milliseconds=250 * posts, seconds=120))

        # The outbox: the relay reads the posts table's stream (phase "relay"). Its DynamoDB
        # use is the feed (per record a duplicate check, the counter update and the erasure
        # re-check; per event a trail and a feed item); the post's own writes are unchanged.
        from tests.support.outbox import build_relay

        meter.phase = "relay"
        rig = build_relay(settings, clock)
        relay_handler = rig.poller.handler
        relay_one = rig.relay.relay
        bus_put = rig.relay.bus.put
        relayed = bus_events = 0

        def counted_one(change: Any) -> Any:
            nonlocal relayed
            events = relay_one(change)
            relayed += len(events)
            return events

        def counted_bus(events: list[Any]) -> None:
            nonlocal bus_events
            bus_events += len(events)
            bus_put(events)

        rig.relay.relay = counted_one  # type: ignore[method-assign]
        rig.relay.bus.put = counted_bus  # type: ignore[method-assign]

        def counted_relay(event: dict[str, Any], context: Any) -> Any:
            invocations["relay"] = invocations.get("relay", 0) + 1
            return relay_handler(event, context)

        rig.poller.handler = counted_relay
        rig.poller.drain(max_polls=10_000)
        meter.phase = "esm"

        sizes = []
        published = 0
        for item in _scan(aws.dynamodb, settings.POSTS_TABLE_NAME):
            if item.get("sk", {}).get("S") == "POST":
                sizes.append(item_size(item))
                published += item["status"]["S"] == "published"
        accepted = len({r.idempotency_key for r in receiver.requests if r.accepted})
        early = sum(1 for r in receiver.requests if r.early)
        aws_clients.reset_clients()
    return Counted(
        meter=meter,
        invocations=invocations,
        posts=posts,
        published=published,
        accepted_deliveries=accepted,
        early_requests=early,
        post_item_bytes=sum(sizes) / max(1, len(sizes)),
        idle_sweep=idle_sweep,
        idle_watchdog=idle_watchdog,
        events=relayed,
        bus_events=bus_events,
        relay_invocations=invocations.get("relay", 0),
        media=uploader.stats() if uploader else None,
    )


def _snapshot(meter: Meter, phase: str) -> dict[str, float]:
    u = meter.usage
    return {
        "dynamodb_calls": u.total("calls", service="dynamodb", phase=phase),
        "read_units": u.total("read_units", phase=phase),
        "write_units": u.total("write_units", phase=phase),
        "sqs_requests": u.total("requests", service="sqs", phase=phase),
        "calls": u.total("calls", phase=phase),
    }


def _scan(client: Any, table: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"TableName": table}
    while True:
        page = client.scan(**kwargs)
        items += page.get("Items", [])
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _lambda_cost(invocations: float, seconds_each: float) -> float:
    return PRICES["lambda_request"].cost(invocations) + PRICES["lambda_gb_s_arm64"].cost(
        invocations * seconds_each * LAMBDA_MEMORY_GB
    )


def service_cost(c: Counted, batch_size: int) -> dict[str, Any]:
    """Per-post quantities and dollars per million posts for this service (from a run)."""
    u = c.meter.usage
    n = c.posts
    per: dict[str, float] = {}
    for phase in ("create", "sweep", "worker", "watchdog"):
        per[f"{phase}_dynamodb_calls"] = u.total("calls", service="dynamodb", phase=phase) / n
        per[f"{phase}_write_units"] = u.total("write_units", phase=phase) / n
        per[f"{phase}_read_units"] = u.total("read_units", phase=phase) / n
        per[f"{phase}_sqs_requests"] = u.total("requests", service="sqs", phase=phase) / n
    # The fixed per-minute runs are reported separately: subtract the idle runs of the window.
    for phase, idle in (("sweep", c.idle_sweep), ("watchdog", c.idle_watchdog)):
        runs = c.invocations[phase]
        for name in ("write_units", "read_units", "dynamodb_calls", "sqs_requests"):
            per[f"{phase}_{name}"] = max(0.0, per[f"{phase}_{name}"] - idle[name] * runs / n)
    worker_batches = c.invocations["worker"]
    per["worker_invocations"] = worker_batches / n
    per["esm_sqs_requests"] = 2 * worker_batches / n  # ReceiveMessage + DeleteMessageBatch
    per["api_invocations"] = c.invocations["api"] / n
    wu = sum(per[f"{p}_write_units"] for p in ("create", "sweep", "worker", "watchdog"))
    ru = sum(per[f"{p}_read_units"] for p in ("create", "sweep", "worker", "watchdog"))
    sqs = sum(per[f"{p}_sqs_requests"] for p in ("create", "sweep", "worker", "watchdog"))
    sqs += per["esm_sqs_requests"]
    api_seconds = per["create_dynamodb_calls"] * ASSUMED_CALL_SECONDS + ASSUMED_OVERHEAD_SECONDS
    worker_calls = per["worker_dynamodb_calls"] + per["worker_sqs_requests"]
    worker_seconds_per_post = (
        worker_calls * ASSUMED_CALL_SECONDS + ASSUMED_WEBHOOK_SECONDS + ASSUMED_OVERHEAD_SECONDS
    )
    # The outbox (decisions X1-X3): no unit on the post's own write path (the stream is read,
    # not written); the relay writes a trail and a feed item per event and updates the owner's
    # counter per record, and reads twice per record (decisions, "Feed positions").
    per["outbox_write_units_on_post_writes"] = 0.0
    per["events"] = c.events / n
    per["bus_events"] = c.bus_events / n
    per["relay_write_units"] = u.total("write_units", phase="relay") / n
    per["relay_read_units"] = u.total("read_units", phase="relay") / n
    per["relay_invocations"] = c.relay_invocations / n
    per["stream_read_requests"] = u.total("calls", service="dynamodbstreams", phase="relay") / n
    wu_with_feed = per["relay_write_units"]
    million = 1e6
    dollars = {
        "api_gateway": PRICES["http_api_request"].cost(million),
        "lambda": _lambda_cost(million, api_seconds)
        + _lambda_cost(
            per["worker_invocations"] * million,
            worker_seconds_per_post * n / max(1, worker_batches),
        ),
        "dynamodb": PRICES["dynamodb_write_unit"].cost((wu + wu_with_feed) * million)
        + PRICES["dynamodb_read_unit"].cost((ru + per["relay_read_units"]) * million),
        "outbox": PRICES["eventbridge_custom_event"].cost(per["bus_events"] * million)
        + _lambda_cost(per["relay_invocations"] * million, ASSUMED_OVERHEAD_SECONDS),
        "sqs": PRICES["sqs_request"].cost(sqs * million),
        "scheduler": 0.0,
    }
    dollars["total"] = sum(dollars.values())
    idle_minute = (
        _lambda_cost(2, 0.1)
        + PRICES["dynamodb_read_unit"].cost(
            c.idle_sweep["read_units"] + c.idle_watchdog["read_units"]
        )
        + PRICES["dynamodb_write_unit"].cost(
            c.idle_sweep["write_units"] + c.idle_watchdog["write_units"]
        )
        + PRICES["scheduler_invocation"].cost(2)
    )
    return {
        "per_post": {k: round(v, 4) for k, v in per.items()},
        "write_units_per_post": round(wu, 3),
        "outbox_write_units_per_post": round(wu_with_feed, 3),
        "read_units_per_post": round(ru, 3),
        "sqs_requests_per_post": round(sqs, 3),
        "usd_per_million_posts": {k: round(v, 2) for k, v in dollars.items()},
        "fixed_usd_per_month": round(idle_minute * MINUTES_PER_MONTH, 2),
        "fixed_note": "sweeper + watchdog once a minute (Lambda at 0.1 s each, Scheduler, "
        "idle reads measured); excludes the event source mapping's idle long polls",
    }  # fmt: skip


def scheduler_alternative(post_item_bytes: float) -> dict[str, Any]:
    """(a) One EventBridge Scheduler one-time schedule per post invoking a Lambda."""
    million = 1e6
    put = write_units(int(post_item_bytes))
    claim = write_units(int(post_item_bytes))
    final = write_units(int(post_item_bytes) + 100)
    get = read_units(int(post_item_bytes), consistent=True)
    wu = put + claim + final
    ru = get
    fire_seconds = 3 * ASSUMED_CALL_SECONDS + ASSUMED_WEBHOOK_SECONDS + ASSUMED_OVERHEAD_SECONDS
    api_seconds = 2 * ASSUMED_CALL_SECONDS + ASSUMED_OVERHEAD_SECONDS
    dollars = {
        "api_gateway": PRICES["http_api_request"].cost(million),
        "lambda": _lambda_cost(million, api_seconds) + _lambda_cost(million, fire_seconds),
        "dynamodb": PRICES["dynamodb_write_unit"].cost(wu * million)
        + PRICES["dynamodb_read_unit"].cost(ru * million),
        "sqs": 0.0,
        "scheduler": PRICES["scheduler_invocation"].cost(million),
    }
    dollars["total"] = sum(dollars.values())
    return {
        "write_units_per_post": wu,
        "read_units_per_post": ru,
        "usd_per_million_posts": {k: round(v, 2) for k, v in dollars.items()},
        "fixed_usd_per_month": 0.0,
        "assumptions": "PutItem post + free CreateSchedule on create; on fire GetItem, claim "
        "UpdateItem, final UpdateItem, webhook; no free tier; precision: fires within the minute "
        "(0-59 s late); ~1,000 invocations/s default throttle (AWS-FACTS.md)",
    }


def poller_alternative(post_item_bytes: float, *, scan: bool) -> dict[str, Any]:
    """(b) A poller every minute that Scans (or (c) Queries a GSI) for due rows."""
    million = 1e6
    if scan:
        poll_ru = read_units(int(PENDING_POSTS * post_item_bytes), consistent=False)
    else:
        due_per_poll = POSTS_PER_MONTH / MINUTES_PER_MONTH
        poll_ru = read_units(int(due_per_poll * post_item_bytes), consistent=False)
    monthly_poll_ru = poll_ru * MINUTES_PER_MONTH
    one = write_units(int(post_item_bytes))
    # put, claim, final update; with a sparse GSI the put adds the GSI entry and the claim
    # removes it (one more write each).
    wu = 3 * one if scan else 5 * one
    ru_per_post = monthly_poll_ru / POSTS_PER_MONTH
    fire_seconds = 2 * ASSUMED_CALL_SECONDS + ASSUMED_WEBHOOK_SECONDS
    dollars = {
        "api_gateway": PRICES["http_api_request"].cost(million),
        "lambda": _lambda_cost(million, ASSUMED_CALL_SECONDS + ASSUMED_OVERHEAD_SECONDS)
        + PRICES["lambda_gb_s_arm64"].cost(million * fire_seconds * LAMBDA_MEMORY_GB),
        "dynamodb": PRICES["dynamodb_write_unit"].cost(wu * million)
        + PRICES["dynamodb_read_unit"].cost(ru_per_post * million),
        "sqs": 0.0,
        "scheduler": 0.0,
    }
    dollars["total"] = sum(dollars.values())
    return {
        "write_units_per_post": wu,
        "read_units_per_post": round(ru_per_post, 3),
        "read_units_per_poll": poll_ru,
        "usd_per_million_posts": {k: round(v, 2) for k, v in dollars.items()},
        "fixed_usd_per_month": round(
            (_lambda_cost(1, 0.5) + PRICES["scheduler_invocation"].cost(1)) * MINUTES_PER_MONTH, 2
        ),
        "assumptions": (
            f"{PENDING_POSTS:,} pending posts, {POSTS_PER_MONTH:,} posts/month, one poll per "
            "minute, " + ("Scan with a filter (eventually consistent)" if scan else
                          "Query on a status/publish_at GSI (writes also go to the GSI)")
            + "; publishes inline; precision: 0-60 s late plus the scan time"
        ),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--posts", type=int, default=200)
    parser.add_argument("--users", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=5, help="infra default (5)")
    parser.add_argument("--media", action=argparse.BooleanOptionalAction, default=True,
                        help="also run one-image posts (bench/media_cost.py)")  # fmt: skip
    args = parser.parse_args(argv)
    _fake_aws_env()
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    started = time.perf_counter()
    counted = run_pipeline(args.posts, args.users, args.batch_size)
    ours = service_cost(counted, args.batch_size)
    alternatives = {
        "this service (measured)": ours,
        "(a) Scheduler schedule per post": scheduler_alternative(counted.post_item_bytes),
        "(b) poller, Scan every minute": poller_alternative(counted.post_item_bytes, scan=True),
        "(c) poller, GSI Query every minute": poller_alternative(
            counted.post_item_bytes, scan=False
        ),
    }
    payload = {
        "posts": counted.posts,
        "published": counted.published,
        "accepted_deliveries": counted.accepted_deliveries,
        "early_requests": counted.early_requests,
        "post_item_bytes": round(counted.post_item_bytes, 1),
        "invocations": counted.invocations,
        "operations": counted.meter.usage.rows(),
        "prices": {k: vars(v) for k, v in PRICES.items()},
        "prices_taken": PRICES_TAKEN,
        "assumptions": {
            "call_seconds": ASSUMED_CALL_SECONDS,
            "webhook_seconds": ASSUMED_WEBHOOK_SECONDS,
            "lambda_memory_gb": LAMBDA_MEMORY_GB,
            "pending_posts": PENDING_POSTS,
            "posts_per_month": POSTS_PER_MONTH,
        },
        "models": alternatives,
        "wall_seconds": 0.0,
    }
    if args.media:
        _add_media(payload, ours, args)
    payload["wall_seconds"] = round(time.perf_counter() - started, 1)
    path = write_result("cost", payload)
    ops = [
        [r["phase"], r["service"], r["operation"], r["calls"], r["billed_requests"],
         r["write_units"], r["read_units"], r["items_read"]]
        for r in counted.meter.usage.rows()
        if r["phase"] in {"create", "sweep", "worker", "watchdog"}
    ]  # fmt: skip
    print(f"{counted.posts} posts, {counted.published} published, "
          f"{counted.accepted_deliveries} accepted deliveries\n")  # fmt: skip
    print(
        table(["phase", "service", "operation", "calls", "billed", "WCU", "RCU", "items read"], ops)
    )
    rows = []
    for name, model in alternatives.items():
        usd = model["usd_per_million_posts"]
        rows.append([name, model["write_units_per_post"], model["read_units_per_post"],
                     usd["api_gateway"], usd["lambda"], usd["dynamodb"], usd["sqs"],
                     usd["scheduler"], usd["total"], model["fixed_usd_per_month"]])  # fmt: skip
    print()
    print(table(["model", "WCU/post", "RCU/post", "API GW $", "Lambda $", "DynamoDB $", "SQS $",
                 "Scheduler $", "total $ per 1M posts", "fixed $/month"], rows))  # fmt: skip
    per = ours["per_post"]
    print(f"\noutbox per post: {per['outbox_write_units_on_post_writes']} WCU on the post's "
          f"writes, {per['events']} events ({per['bus_events']} on the bus), "
          f"{per['relay_write_units']} WCU and {per['relay_read_units']} RCU of the feed, "
          f"{per['relay_invocations']} relay invocations, "
          f"{per['stream_read_requests']} stream reads (free for Lambda triggers)")  # fmt: skip
    if args.media:
        _print_media(payload["media"])  # type: ignore[arg-type]
    print(f"\nwrote {path} ({payload['wall_seconds']} s)")
    return payload


#: The one-image post's row in ``models`` (``bench/media_cost.py``).
MEDIA_MODEL = "this service, one-image post (measured)"


def _add_media(payload: dict[str, Any], ours: dict[str, Any], args: argparse.Namespace) -> None:
    """Run the same pipeline with one ready PNG per post; add its row and the ``media`` key."""
    counted = run_pipeline(args.posts, args.users, args.batch_size, media=True)
    if counted.published != counted.posts:
        raise RuntimeError(f"media run: {counted.published} of {counted.posts} published")
    row = media_cost(
        ours,
        service_cost(counted, args.batch_size),
        counted.meter.usage.rows(),
        counted.posts,
        counted.media or {},
        lambda_cost=_lambda_cost,
        call_seconds=ASSUMED_CALL_SECONDS,
        overhead_seconds=ASSUMED_OVERHEAD_SECONDS,
    )
    payload["media"] = row.pop("media")
    payload["media"]["invocations"] = counted.invocations
    payload["media"]["post_item_bytes"] = round(counted.post_item_bytes, 1)
    payload["media"]["operations"] = [
        r for r in counted.meter.usage.rows()
        if r["phase"] in {"media-create", "upload", "media-complete", "create", "worker"}
    ]  # fmt: skip
    payload["models"][MEDIA_MODEL] = row


def _print_media(media: dict[str, Any]) -> None:
    print(f"\none-image post ({media['posts']} posts, a {media['image_bytes']:,}-byte PNG): "
          f"S3 requests {media['s3_requests_per_post']}, "
          f"+{media['extra_write_units_over_text']} WCU and "
          f"+{media['extra_read_units_over_text']} RCU over a text post, "
          f"+{media['extra_api_invocations']} API invocations, probe median "
          f"{media['probe_median_s'] * 1000:.1f} ms (first {media['probe_first_s']} s, this "
          f"machine's CPU), ${media['usd_per_million_posts']} per 1M posts against "
          f"${media['text_usd_per_million_posts']} for text")  # fmt: skip


if __name__ == "__main__":
    main()
