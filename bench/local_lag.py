"""Publish lag on the local stack: real HTTP in, real webhooks out on loopback.

1. Start the embedded AWS as ``python -m bench.timed_moto`` (moto's server plus a timing
   middleware) on a free port, then ``python -m local run`` on free ports (it reuses that moto;
   both through ``local.emulation.runner``),
   with a short sweep interval (``--sweep-interval``) and lookahead (``--lookahead``).
2. One webhook receiver per user (``local.emulation.receiver.Receiver``, signature checked with that
   user's channel secret), each on its own loopback port.
3. Scenario *burst*: ``--burst`` posts due in the same second, over ``--users`` users.
   Scenario *spread*: ``--spread`` posts due uniformly over ``--spread-seconds``, over the same
   users (so the pending-post limit does not bind), all created before the first falls due
   (the lead is 3x the burst's creation time per post), so creation and delivery do not
   compete for the machine.
4. For each: lag = receiver arrival - ``publish_at`` (p50/p95/p99/max), split at the start of
   the delivering attempt the API reports (``lag_parts_seconds``: before it, the emulated queue,
   poller and the worker's claim; after it, the worker's writes before the request and the
   webhook call), early deliveries (must
   be 0), accepted duplicates (must be 0: a second accepted delivery for one Idempotency-Key),
   raw re-sends, posts never delivered, and the embedded AWS's own share: seconds the moto
   server spent serving requests (``ReceiveMessage`` long polls, which mostly wait, listed
   apart), against the scenario's wall time.

Not part of ``make test``. Takes about ``spread-seconds`` + the creation lead + 5 minutes.
"""

from __future__ import annotations

import argparse
import json
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.report import percentile, table, write_result

JWT_SECRET = "bench-secret-long-enough-for-hs256-signing"
START_TIMEOUT = 90.0


def _moto(port: int, path: str, method: str = "GET") -> Any:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method)
    with urllib.request.urlopen(request, timeout=10) as response:
        raw = response.read()
    return json.loads(raw) if raw else None


def _lag_summary(lags: list[float]) -> dict[str, float]:
    ordered = sorted(lags)
    return {
        "p50": percentile(ordered, 50),
        "p95": percentile(ordered, 95),
        "p99": percentile(ordered, 99),
        "max": ordered[-1] if ordered else float("nan"),
    }


def _lag_parts(
    deliveries: list[Any],
    created: dict[str, datetime],
    clients: list[Any],
    owner_of: dict[str, int],
) -> dict[str, dict[str, float]]:
    """Each accepted delivery's lag split where the worker's own record splits it: from
    ``publish_at`` to the start of the delivering attempt (``GET .../attempts``: the message's
    wait in the emulated queue and poller, and the worker's read and claim), and from that start
    to the receiver's arrival (the worker's writes before the request, and the webhook call)."""
    from scheduled_posts.clock import instant_from_storage

    before: list[float] = []
    after: list[float] = []
    for d in deliveries:  # the receivers' accepted deliveries, one per post and channel
        if d.schedule_id not in owner_of:
            continue
        reply = clients[owner_of[d.schedule_id]].request(
            "GET", f"/v1/scheduled-posts/{d.schedule_id}/attempts"
        )
        published = [a for a in reply.body.get("items", []) if a["outcome"] == "published"]
        if reply.status != 200 or not published:
            continue
        start = instant_from_storage(published[-1]["started_at"])
        wait = (start - created[d.schedule_id]).total_seconds()
        before.append(round(wait, 3))
        after.append(round(d.lag_seconds - wait, 3))
    return {
        "publish_at_to_attempt_start": _lag_summary(before),
        "attempt_start_to_webhook": _lag_summary(after),
    }


def run_scenario(
    name: str,
    due_times: list[datetime],
    clients: list[Any],
    channels: list[str],
    receivers: list[Any],
    aws_port: int,
    settle_seconds: float,
) -> dict[str, Any]:
    """Create one post per ``due_times`` entry (round-robin over users), wait, and measure."""
    from scheduled_posts.clock import format_instant

    _moto(aws_port, "/bench/reset", "POST")
    resends_before = sum(r.resends for r in receivers)
    started = time.monotonic()
    created: dict[str, datetime] = {}
    owner_of: dict[str, int] = {}
    refused: list[int] = []
    late_creates = 0

    def create(i: int) -> None:
        nonlocal late_creates
        user = i % len(clients)
        if due_times[i] <= datetime.now(UTC) + timedelta(seconds=1):
            late_creates += 1
            return
        reply = clients[user].request(
            "POST",
            "/v1/scheduled-posts",
            {"content": f"{name} {i}", "media_ids": [],
             "publish_at": format_instant(due_times[i]), "channel_ids": [channels[user]]},
        )  # fmt: skip
        if reply.status == 201:
            created[reply.body["schedule_id"]] = due_times[i]
            owner_of[reply.body["schedule_id"]] = user
        else:
            refused.append(reply.status)

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(create, range(len(due_times))))
    creates_done = time.monotonic()
    deadline = max(due_times).timestamp() + settle_seconds
    while time.time() < deadline:
        delivered = {d.schedule_id for r in receivers for d in r.snapshot()}
        if all(sid in delivered for sid in created):
            break
        time.sleep(0.5)
    time.sleep(2.0)  # a short window for any duplicate to arrive
    wall = time.monotonic() - started
    deliveries = [d for r in receivers for d in r.snapshot() if d.schedule_id in created]
    keys = [d.idempotency_key for d in deliveries]
    lags = [d.lag_seconds for d in deliveries]
    stats = _moto(aws_port, "/bench/stats")
    parts = _lag_parts(deliveries, created, clients, owner_of)
    receive_s = sum(v for k, v in stats["seconds"].items() if k.endswith("ReceiveMessage"))
    busy_s = sum(stats["seconds"].values()) - receive_s
    return {
        "scenario": name,
        "posts": len(due_times),
        "created": len(created),
        "refused_statuses": refused,
        "not_created_time_passed": late_creates,
        "create_seconds": round(creates_done - started, 1),
        "delivered": len(set(keys)),
        "missing": len(set(created) - {d.schedule_id for d in deliveries}),
        "early": sum(1 for lag in lags if lag < 0),
        "accepted_duplicates": len(keys) - len(set(keys)),
        "raw_resends": sum(r.resends for r in receivers) - resends_before,
        "lag_seconds": _lag_summary(lags),
        "lag_parts_seconds": parts,
        "wall_seconds": round(wall, 1),
        "moto_busy_seconds": round(busy_s, 2),
        "moto_receive_seconds": round(receive_s, 2),
        "moto_busy_share_of_wall": round(busy_s / wall, 3) if wall else None,
        "moto_busy_ms_per_post": round(1000 * busy_s / max(1, len(created)), 1),
        "moto_requests": sum(stats["count"].values()),
        "moto_by_operation": {
            k: {"seconds": round(v, 3), "count": stats["count"][k]}
            for k, v in sorted(stats["seconds"].items(), key=lambda kv: -kv[1])
        },
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--burst", type=int, default=200)
    parser.add_argument("--spread", type=int, default=1000)
    parser.add_argument("--spread-seconds", type=float, default=300.0)
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--sweep-interval", type=int, default=2)
    parser.add_argument("--lookahead", type=int, default=30)
    args = parser.parse_args(argv)

    from local.client import ApiClient
    from local.config import LocalConfig
    from local.emulation.receiver import Receiver
    from local.emulation.runner import AwsProcess, StackProcess, free_port, stack_environment
    from local.token import make_token

    aws_port, api_port = free_port(), free_port()
    settings_env = {
        "SWEEP_INTERVAL_SECONDS": str(args.sweep_interval),
        "LOOKAHEAD_SECONDS": str(args.lookahead),
    }
    moto = AwsProcess(aws_port, stack_environment(JWT_SECRET), module=("bench.timed_moto",))
    receivers = [Receiver().start() for _ in range(args.users)]
    stack: StackProcess | None = None
    results: list[dict[str, Any]] = []
    try:
        moto.wait_ready(START_TIMEOUT)
        stack = StackProcess(
            stack_environment(
                JWT_SECRET, AWS_PORT=str(aws_port), API_PORT=str(api_port), **settings_env
            )
        )
        stack.wait_ready(START_TIMEOUT)
        config = LocalConfig(jwt_secret=JWT_SECRET)
        clients = [
            ApiClient(f"http://127.0.0.1:{api_port}", make_token(f"bench-user-{u}", config))
            for u in range(args.users)
        ]
        channels = []
        for client, receiver in zip(clients, receivers, strict=True):
            reply = client.request(
                "POST",
                "/v1/channels",
                {"platform": "webhook", "name": "bench", "url": receiver.url},
            )
            if reply.status != 201:
                raise RuntimeError(f"channel create failed: {reply.status} {reply.body}")
            receiver.secret = reply.body["signing_secret"]
            channels.append(reply.body["channel_id"])

        lead = 15 + args.burst / 10
        burst_at = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=lead)
        results.append(
            run_scenario("burst", [burst_at] * args.burst, clients, channels, receivers,
                         aws_port, settle_seconds=120)
        )  # fmt: skip
        # Create every spread post before the first falls due: the lead is three times the
        # burst's measured creation time per post (moto's writes slow down as tables grow).
        per_post = results[0]["create_seconds"] / max(1, results[0]["created"])
        lead = min(900.0, 30.0 + 3 * per_post * args.spread)
        spread_start = datetime.now(UTC) + timedelta(seconds=lead)
        step = args.spread_seconds / max(1, args.spread)
        spread_times = [spread_start + timedelta(seconds=i * step) for i in range(args.spread)]
        results.append(
            run_scenario("spread", spread_times, clients, channels, receivers, aws_port,
                         settle_seconds=120)
        )  # fmt: skip
    finally:
        if stack is not None:
            stack.stop(15)
        for receiver in receivers:
            receiver.stop()
        moto.stop(10)
    payload = {
        "settings": {
            **settings_env,
            "users": args.users,
            "worker_batch_size": LocalConfig().worker_batch_size,
        },
        "scenarios": results,
    }
    path = write_result("local_lag", payload)
    rows = [
        [r["scenario"], r["posts"], r["created"], r["delivered"], r["missing"],
         r["lag_seconds"]["p50"], r["lag_seconds"]["p95"], r["lag_seconds"]["p99"],
         r["lag_seconds"]["max"], r["early"], r["accepted_duplicates"], r["raw_resends"],
         r["moto_busy_share_of_wall"], r["moto_busy_ms_per_post"]]
        for r in results
    ]  # fmt: skip
    print(table(
        ["scenario", "posts", "created", "delivered", "missing", "p50 s", "p95 s", "p99 s",
         "max s", "early", "dup accepted", "raw re-sends", "moto busy share", "moto ms/post"],
        rows,
    ))  # fmt: skip
    print(f"\nwrote {path}")
    return payload


if __name__ == "__main__":
    main()
