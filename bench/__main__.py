"""Run every benchmark in turn (``make bench``): each writes ``bench/results/<name>.json``.

``python -m bench [--only name,name] [--quick]``. ``--quick`` shrinks every benchmark to a smoke
size (the published figures come from the default sizes, which are the issue's).
"""

from __future__ import annotations

import argparse
import importlib
import time
import traceback

ORDER = (
    "sweeper_cpu", "capacity_sim", "cost", "sweep_reads", "cold_start", "local_lag", "series_cost",
    "api_load", "import_cost",
)  # fmt: skip
QUICK_ARGS: dict[str, list[str]] = {
    "sweeper_cpu": ["--calls", "50"],
    "capacity_sim": ["--quick"],
    "cost": ["--posts", "20"],
    "sweep_reads": ["--sizes", "0,1000", "--due", "20"],
    "cold_start": ["--repeat", "1", "--no-sizes"],
    "local_lag": ["--burst", "20", "--spread", "40", "--spread-seconds", "30"],
    "series_cost": ["--days", "1"],
    "api_load": ["--clients", "4", "--seconds", "10"],
    "import_cost": ["--rows", "50"],
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default=",".join(ORDER))
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    failed = []
    for name in args.only.split(","):
        print(f"\n=== bench.{name} ===", flush=True)
        started = time.perf_counter()
        try:
            module = importlib.import_module(f"bench.{name}")
            module.main(QUICK_ARGS[name] if args.quick else [])
        except Exception:  # report and go on with the next benchmark
            traceback.print_exc()
            failed.append(name)
        print(f"=== bench.{name}: {time.perf_counter() - started:.0f} s ===", flush=True)
    from bench.render import render

    for path in render():
        print(f"wrote {path}")
    if failed:
        print(f"\nfailed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
