"""API throughput on the local stack: concurrent clients against ``make run``'s HTTP front.

1. Start the embedded AWS and ``python -m local run`` on free ports (``local.emulation.runner``)
   with ``API_CONCURRENCY`` (``--api-concurrency``, default the stack's own, 4).
2. ``--clients`` clients (default 20), each its own user with one webhook channel, loop for
   ``--seconds`` (default 60): create a post (``POST /v1/scheduled-posts``, a day ahead, so the
   worker stays idle), read it back, list the user's posts; round-robin, one request at a time
   per client.
3. Report requests per second, p50/p99 latency per kind and in all, errors (any answer other
   than the expected 201/200), and that every created post reads back (nothing lost).

Not part of ``make test``. Takes about ``--seconds`` + 30 s.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.report import percentile, table, write_result

JWT_SECRET = "bench-secret-long-enough-for-hs256-signing"
START_TIMEOUT = 120.0


def _client_loop(client: Any, channel_id: str, until: float) -> dict[str, Any]:
    """One client's requests until ``until`` (monotonic): latencies by kind, errors, ids."""
    latencies: dict[str, list[float]] = defaultdict(list)
    errors: list[str] = []
    created: list[str] = []
    publish_at = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    step = 0
    while time.monotonic() < until:
        kind = ("create", "read", "list")[step % 3]
        started = time.perf_counter()
        if kind == "create":
            body: dict[str, Any] = {"content": f"load {step}", "publish_at": publish_at}
            body["channel_ids"] = [channel_id]
            reply = client.request("POST", "/v1/scheduled-posts", body)
            ok = reply.status == 201
            if ok:
                created.append(reply.body["schedule_id"])
        elif kind == "read" and created:
            reply = client.request("GET", f"/v1/scheduled-posts/{created[-1]}")
            ok = reply.status == 200
        else:
            reply = client.request("GET", "/v1/scheduled-posts?limit=10")
            ok = reply.status == 200
        latencies[kind].append(time.perf_counter() - started)
        if not ok:
            errors.append(f"{kind}: {reply.status}")
        step += 1
    return {"latencies": latencies, "errors": errors, "created": created}


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"n": len(ordered), "p50": percentile(ordered, 50), "p99": percentile(ordered, 99)}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--api-concurrency", type=int, default=None)
    args = parser.parse_args(argv)

    from local.client import ApiClient
    from local.config import LocalConfig
    from local.emulation.receiver import Receiver
    from local.emulation.runner import AwsProcess, StackProcess, free_port, stack_environment
    from local.token import make_token

    aws_port, api_port = free_port(), free_port()
    extra = {"AWS_PORT": str(aws_port), "API_PORT": str(api_port)}
    if args.api_concurrency is not None:
        extra["API_CONCURRENCY"] = str(args.api_concurrency)
    moto = AwsProcess(aws_port, stack_environment(JWT_SECRET))
    receiver = Receiver().start()  # a channel's URL must pass the outbound policy; never called
    stack: StackProcess | None = None
    try:
        moto.wait_ready(START_TIMEOUT)
        stack = StackProcess(stack_environment(JWT_SECRET, **extra))
        stack.wait_ready(START_TIMEOUT)
        config = LocalConfig(jwt_secret=JWT_SECRET)
        clients, channels = [], []
        for c in range(args.clients):
            client = ApiClient(f"http://127.0.0.1:{api_port}", make_token(f"load-{c}", config))
            reply = client.request(
                "POST",
                "/v1/channels",
                {"platform": "webhook", "name": "load", "url": receiver.url},
            )
            if reply.status != 201:
                raise RuntimeError(f"channel create failed: {reply.status} {reply.body}")
            clients.append(client)
            channels.append(reply.body["channel_id"])
        started = time.monotonic()
        until = started + args.seconds
        with ThreadPoolExecutor(args.clients) as pool:
            loops = [
                pool.submit(_client_loop, client, channel_id, until)
                for client, channel_id in zip(clients, channels, strict=True)
            ]
            runs = [loop.result() for loop in loops]
        wall = time.monotonic() - started
        lost = sum(
            client.request("GET", f"/v1/scheduled-posts/{schedule_id}").status != 200
            for client, run in zip(clients, runs, strict=True)
            for schedule_id in run["created"]
        )
    finally:
        if stack is not None:
            stack.stop(15)
        receiver.stop()
        moto.stop(10)
    by_kind: dict[str, list[float]] = defaultdict(list)
    for run in runs:
        for kind, values in run["latencies"].items():
            by_kind[kind] += values
    everything = [v for values in by_kind.values() for v in values]
    payload = {
        "settings": {
            "clients": args.clients,
            "seconds": args.seconds,
            "api_concurrency": args.api_concurrency or LocalConfig().api_concurrency,
        },
        "requests": len(everything),
        "wall_seconds": round(wall, 3),
        "requests_per_second": round(len(everything) / wall, 2),
        "latency_seconds": {k: _summary(v) for k, v in sorted(by_kind.items())},
        "latency_all_seconds": _summary(everything),
        "errors": sum(len(r["errors"]) for r in runs),
        "error_samples": [e for r in runs for e in r["errors"]][:5],
        "created": sum(len(r["created"]) for r in runs),
        "lost": lost,
    }
    path = write_result("api_load", payload)
    summaries = {k: _summary(v) for k, v in sorted(by_kind.items())}
    kinds = [*summaries.items(), ("all", _summary(everything))]
    rows = [[kind, s["n"], s["p50"], s["p99"]] for kind, s in kinds]
    print(table(["kind", "requests", "p50 s", "p99 s"], rows))
    print(
        f"{payload['requests_per_second']} requests/s over {wall:.0f} s with {args.clients} "
        f"clients; errors {payload['errors']}, lost {lost}; written to {path}"
    )
    return payload


if __name__ == "__main__":
    main()
