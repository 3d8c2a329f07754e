"""Reads and writes per recurring schedule per day (issue 13), measured on the real code.

For each rule (daily, every 5 minutes, weekday slots), in moto in-process under a simulated
clock: create the series through the API (phase ``create``), then run the materializer every
``MATERIALIZE_INTERVAL_SECONDS`` for ``--days`` days (phase ``materialize``); a run with no
series at all gives the materializer's fixed cost (empty index Queries and watermarks), which
is subtracted. DynamoDB requests and capacity units are counted with the botocore-hook meter
(``bench/meter.py``, AWS sizing rules); nothing is timed. The fire path's own cost per post
(sweep, claim, publish) is the same as for any post and is in ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
from typing import Any

from bench.meter import Meter
from bench.report import table, write_result
from bench.sweep_reads import START, _fake_aws_env

RULES: dict[str, dict[str, Any]] = {
    "none (fixed cost)": {},
    "daily 09:00": {"cron": "0 9 * * *"},
    "every 5 minutes": {"cron": "*/5 * * * *"},
    "weekdays 09:30 and 18:00": {
        "slots": [{"days": ["mon", "tue", "wed", "thu", "fri"], "times": ["09:30", "18:00"]}]
    },
}


def measure(rule: dict[str, Any], days: int) -> dict[str, Any]:
    """Create one series with ``rule`` (none when empty) and materialize for ``days`` days."""
    import time_machine
    from moto import mock_aws

    from functions.materializer.handler import materialize_deps
    from scheduled_posts.data import aws as aws_clients
    from scheduled_posts.logic.materialize import materialize_due
    from tests.support.api import ApiClient, install_api, uninstall_api
    from tests.support.clock import SimClock
    from tests.support.fixtures import create_resources

    with time_machine.travel(START, tick=False) as traveller, mock_aws():
        aws_clients.reset_clients()
        settings = create_resources(prefix="series").settings
        clock = SimClock(traveller)
        meter = Meter()
        with meter.installed():
            aws_clients.reset_clients()
            install_api(settings, clock)
            alice = ApiClient("alice")
            channel = alice.create_channel()
            meter.phase = "create"
            if rule:
                body = {"content": "x", "channel_ids": [channel], "timezone": "UTC", **rule}
                answer = alice.post("/v1/recurring-schedules", body)
                assert answer.status == 201, answer.json
            meter.phase = "materialize"
            runs = days * 86_400 // settings.MATERIALIZE_INTERVAL_SECONDS
            for _ in range(runs):
                clock.advance(settings.MATERIALIZE_INTERVAL_SECONDS)
                materialize_due(deps=materialize_deps(settings, clock))
            uninstall_api()
        usage = meter.usage
        return {
            phase: {
                "dynamodb_requests": usage.total("calls", service="dynamodb", phase=phase),
                "read_units": usage.total("read_units", service="dynamodb", phase=phase),
                "write_units": usage.total("write_units", service="dynamodb", phase=phase),
            }
            for phase in ("create", "materialize")
        } | {"materializer_runs": runs, "days": days, "start": START.isoformat()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=int, default=2)
    args = parser.parse_args(argv)
    _fake_aws_env()
    results = {name: measure(rule, args.days) for name, rule in RULES.items()}
    fixed = results["none (fixed cost)"]["materialize"]
    rows = []
    for name, result in results.items():
        per_day = {
            k: (v - (fixed[k] if name != "none (fixed cost)" else 0)) / args.days
            for k, v in result["materialize"].items()
        }
        result["materialize_per_day_net"] = per_day
        rows.append(
            [
                name,
                result["create"]["dynamodb_requests"],
                result["create"]["write_units"],
                per_day["dynamodb_requests"],
                per_day["read_units"],
                per_day["write_units"],
            ]
        )
    print(
        table(
            [
                "series",
                "create: requests",
                "create: WCU",
                "materialize/day: requests",
                "RCU/day",
                "WCU/day",
            ],
            rows,
        )
    )
    write_result("series_cost", {"days": args.days, "results": results})


if __name__ == "__main__":
    main()
