"""Run fault-suite seeds from the command line (issue 4).

One seed::

    .venv/bin/python -m tests.faults.run --seed 1234 --posts 300

Many posts in independent seeded chunks, in parallel processes, with totals (``make faults``)::

    .venv/bin/python -m tests.faults.run --total 100000 --chunk 500 --jobs 2

Exit status 1 when any check failed; every failing seed is printed with the command that
reproduces it. Each world's Bluesky channel lives on the reference PDS named by ``FAULT_PDS_URL``;
without it, one is started for the run (``make pds-install`` installs it).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

#: CI size (``tests/faults/test_fault_suite.py``): at least 500 posts over at least 2 seeds
#: (issue 4). Here so that ``make mutants`` plays the very same seeds one at a time.
CI_SEEDS = list(range(101, 111))
CI_POSTS = 50

#: The totals every report prints first, in this order.
HEADLINE = ("posts", "deliveries", "duplicates", "early", "stuck", "raw_resends", "dlq")


def quiet_environment() -> None:
    """Fake AWS credentials, no real endpoint, Powertools quiet (the command line only: under
    pytest, ``tests/conftest.py`` sets these and this module must not change them)."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_NAMESPACE": "ScheduledPostsFaults",
        "POWERTOOLS_METRICS_DISABLED": "true",
        "POWERTOOLS_LOG_LEVEL": "CRITICAL",
    }.items():
        os.environ.setdefault(name, value)
    os.environ.pop("AWS_ENDPOINT_URL", None)
    os.environ.pop("AWS_PROFILE", None)


def run_seeds(seeds: list[int], posts: int) -> list[dict[str, Any]]:
    """Run ``seeds`` one after another in this process; one JSON-able result per seed."""
    logging.disable(logging.CRITICAL)
    from local import metrics_sink
    from scheduled_posts.observability import metrics
    from tests.support.scenario import run_scenario

    # disabled metrics are still printed once one reaches 100 values (local/metrics_sink.py),
    # which broke the --json line the CI chunks read
    metrics_sink.install(metrics)

    return [run_scenario(seed, posts).as_json() for seed in seeds]


def summarize(results: list[dict[str, Any]]) -> tuple[Counter[str], Counter[str]]:
    totals: Counter[str] = Counter()
    faults: Counter[str] = Counter()
    for r in results:
        totals.update(r["totals"])
        faults.update(r["faults"])
    return totals, faults


def report(results: list[dict[str, Any]], seconds: float) -> str:
    totals, faults = summarize(results)
    lines = [f"seeds: {len(results)}   wall time: {seconds:.0f} s"]
    lines += [f"{name:>12}: {totals.get(name, 0)}" for name in HEADLINE]
    lines.append(f"{'faults':>12}: {sum(faults.values())}")
    lines += [f"{'':>14}{kind}: {n}" for kind, n in sorted(faults.items())]
    statuses = {k: v for k, v in totals.items() if k.startswith(("status_", "api_"))}
    lines += [f"{'':>14}{k}: {v}" for k, v in sorted(statuses.items())]
    failed = [r for r in results if r["problems"]]
    lines.append(f"failed seeds: {len(failed)}")
    for r in failed:
        lines += [f"  seed {r['seed']}:"] + [f"    {p}" for p in r["problems"][:12]]
    return "\n".join(lines)


def _chunk(seeds: list[int], posts: int, pds_url: str | None = None) -> list[dict[str, Any]]:
    command = [
        sys.executable,
        "-m",
        "tests.faults.run",
        "--json",
        "--posts",
        str(posts),
        "--seeds",
        ",".join(map(str, seeds)),
    ]
    root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "PYTHONPATH": f"{root / 'layers/common/python'}{os.pathsep}{root}",
        "POWERTOOLS_METRICS_DISABLED": "true",
        "POWERTOOLS_LOG_LEVEL": "CRITICAL",
    }
    if pds_url:
        env["FAULT_PDS_URL"] = pds_url
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env, cwd=root)
    if done.returncode not in (0, 1) or not done.stdout.strip():
        raise RuntimeError(f"chunk {seeds[0]}.. crashed:\n{done.stderr[-4000:]}")
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, help="run this one seed")
    parser.add_argument("--seeds", help="comma-separated seeds (run in this process)")
    parser.add_argument("--posts", type=int, default=500, help="posts per seed")
    parser.add_argument("--total", type=int, help="posts in all: total/posts seeds in chunks")
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2, help="parallel processes")
    parser.add_argument("--seeds-per-process", type=int, default=4)
    parser.add_argument(
        "--budget-seconds",
        type=float,
        default=0,
        help="start no new chunk after this many seconds (0: no limit); the report says so",
    )
    parser.add_argument("--json", action="store_true", help="print results as one JSON line")
    args = parser.parse_args(argv)
    quiet_environment()
    from tests.support.networks import reference_pds

    with reference_pds():  # every world has a Bluesky channel on it (one PDS for the run)
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    if args.total:
        n = max(1, -(-args.total // args.posts))
        seeds = list(range(args.first_seed, args.first_seed + n))
        chunks = [
            seeds[i : i + args.seeds_per_process]
            for i in range(0, len(seeds), args.seeds_per_process)
        ]
        results: list[dict[str, Any]] = []
        skipped: list[list[int]] = []

        def run_chunk(chunk: list[int]) -> list[dict[str, Any]]:
            if args.budget_seconds and time.monotonic() - started > args.budget_seconds:
                skipped.append(chunk)
                return []
            return _chunk(chunk, args.posts)

        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for i, chunk_results in enumerate(pool.map(run_chunk, chunks)):
                results += chunk_results
                print(
                    f"chunk {i + 1}/{len(chunks)} {'done' if chunk_results else 'skipped'} "
                    f"({time.monotonic() - started:.0f} s)",
                    file=sys.stderr,
                    flush=True,
                )
        if skipped:
            print(
                f"time budget of {args.budget_seconds:.0f} s: ran {len(results)} of {n} seeds "
                f"({len(results) * args.posts} of {n * args.posts} posts); "
                f"seeds {args.first_seed}..{args.first_seed + n - 1} asked",
                flush=True,
            )
    else:
        if args.seeds:
            seeds = [int(s) for s in args.seeds.split(",")]
        else:
            seeds = [args.seed if args.seed is not None else 1]
        results = run_seeds(seeds, args.posts)
    if args.json:
        print(json.dumps(results))
    else:
        print(report(results, time.monotonic() - started))
    return 1 if any(r["problems"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
