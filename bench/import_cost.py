"""A 1,000-row CSV import: its wall time on the local stack, and its units and cost per row.

**(a) Wall time, as a user sees it (``local``).** The embedded AWS and ``python -m local run``
start as ``bench/local_lag.py`` starts them (``local.emulation.runner``). One user makes a
webhook channel, asks for a pre-signed form (``POST /v1/imports/uploads``), sends the file to
it (a ``multipart/form-data`` POST to moto's S3, as a browser would), commits it
(``POST /v1/imports`` with ``upload_id``) and polls ``GET /v1/imports/{id}`` every
``POLL_SECONDS`` until it is ``completed`` or ``failed``. Reported: seconds from the commit's
request to the first poll that saw it finished (``submit_to_completed_s``, its poll granularity
included), rows per second over that, rows failed (must be 0), and whether every row's post
exists once: the results name ``--rows`` distinct ``schedule_id``, and the caller's CSV export
holds exactly one post for each row's content. The local importer's event source mapping is
the deployed one (``scheduled_posts.sizing``: batches of ``DEFAULT_IMPORTER_BATCH_SIZE``).

**(b) Units and cost per row, metered (``cost``).** In moto in-process under a frozen clock, as
``bench/cost.py`` runs its posts: the same user and file through the API Lambda handler
(phases ``upload-create``, ``upload`` (the form's POST, billed as S3 ``PostObject``, PUT tier),
``commit``, ``status``: one final ``GET``), then each chunk message through the importer
Lambda's handler in batches as its event source mapping sends them (phase ``importer``). The
meter (``bench/meter.py``) counts DynamoDB units by AWS's sizing rules, SQS and S3 requests. The
mapping's own ReceiveMessage and DeleteMessageBatch per batch are billed as in ``cost.py``;
Lambda time is *modelled* as there (calls x ``ASSUMED_CALL_SECONDS`` + overhead per
invocation). The posts' later firing is ``bench/cost.py``'s figure, not repeated here.

Not part of ``make test``. Takes about two minutes at 1,000 rows on two shared cores.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.report import table, write_result

JWT_SECRET = "bench-secret-long-enough-for-hs256-signing"
START_TIMEOUT = 90.0
#: Seconds between a client's ``GET /v1/imports/{id}`` polls (a progress bar's refresh).
POLL_SECONDS = 0.5
#: The longest the local run may take before it is reported unfinished.
FINISH_TIMEOUT = 600.0
#: Seconds the client waits for one answer (the commit checks the whole file in one request).
COMMIT_TIMEOUT = 600.0
HEADER = "publish_at,channels,content\r\n"


def csv_file(rows: int, start: datetime, channel: str = "sheet") -> bytes:
    """``rows`` rows due a minute apart from ``start``, each with its own content ``row <i>``."""
    lines = [
        f"{(start + timedelta(minutes=i)).strftime('%Y-%m-%dT%H:%M:%SZ')},{channel},row {i}\r\n"
        for i in range(rows)
    ]
    return (HEADER + "".join(lines)).encode()


def _posts_once(export_csv: str, rows: int) -> bool:
    """Whether the export holds exactly one post for each row's content and no other."""
    import csv
    import io

    contents = Counter(r["content"] for r in csv.DictReader(io.StringIO(export_csv)))
    return contents == Counter(f"row {i}" for i in range(rows))


def check(done: dict[str, Any], export_csv: str, rows: int) -> dict[str, Any]:
    """The finished import (``GET /v1/imports/{id}``) and the export, checked: status, rows
    done and failed, distinct ``schedule_id``, and every row's post present exactly once."""
    ids = [r.get("schedule_id") for r in done.get("results", [])]
    return {
        "status": done.get("status"),
        "rows_done": done.get("rows_done"),
        "rows_failed": done.get("rows_failed"),
        "distinct_schedule_ids": len({i for i in ids if i}),
        "every_row_post_exists_once": len(set(ids)) == rows and _posts_once(export_csv, rows),
    }


def measure_local(rows: int) -> dict[str, Any]:
    """Part (a): the import's wall time on the local stack (see the module docstring)."""
    import requests

    from local.client import ApiClient
    from local.config import LocalConfig
    from local.emulation.runner import AwsProcess, StackProcess, free_port, stack_environment
    from local.token import make_token

    aws_port, api_port = free_port(), free_port()
    moto = AwsProcess(aws_port, stack_environment(JWT_SECRET))
    stack: StackProcess | None = None
    try:
        moto.wait_ready(START_TIMEOUT)
        stack = StackProcess(
            stack_environment(JWT_SECRET, AWS_PORT=str(aws_port), API_PORT=str(api_port))
        )
        stack.wait_ready(START_TIMEOUT)
        token = make_token("bench-importer", LocalConfig(jwt_secret=JWT_SECRET))
        # The commit checks every row in one request: minutes on a loaded machine, so no 30 s cut.
        client = ApiClient(f"http://127.0.0.1:{api_port}", token, timeout=COMMIT_TIMEOUT)
        channel = client.request(
            "POST",
            "/v1/channels",
            {"platform": "webhook", "name": "sheet", "url": "http://127.0.0.1:9/hook"},
        )
        if channel.status != 201:
            raise RuntimeError(f"channel create failed: {channel.status} {channel.body}")
        data = csv_file(rows, datetime.now(UTC).replace(microsecond=0) + timedelta(days=1))
        started = time.monotonic()
        form = client.request("POST", "/v1/imports/uploads").body
        sent = requests.post(
            form["upload"]["url"], data=form["upload"]["fields"], files={"file": data}, timeout=60
        )
        sent.raise_for_status()
        uploaded = time.monotonic()
        commit = client.request(
            "POST",
            "/v1/imports",
            {"upload_id": form["upload_id"]},
            headers={"Idempotency-Key": "bench-import"},
        )
        if commit.status != 202:
            raise RuntimeError(f"import commit failed: {commit.status} {commit.body}")
        submitted = time.monotonic()
        done, polls = commit.body, 0
        while done["status"] not in ("completed", "failed"):
            if time.monotonic() - submitted > FINISH_TIMEOUT:
                break
            time.sleep(POLL_SECONDS)
            done = client.request("GET", f"/v1/imports/{commit.body['import_id']}").body
            polls += 1
        finished = time.monotonic()
        export = client.request("GET", "/v1/scheduled-posts/export.csv").body
    finally:
        if stack is not None:
            stack.stop(15)
        moto.stop(10)
    seconds = finished - submitted
    return {
        "rows": rows,
        "file_bytes": len(data),
        "upload_seconds": round(uploaded - started, 2),
        "commit_request_seconds": round(submitted - uploaded, 2),
        "submit_to_completed_s": round(finished - uploaded, 2),
        "rows_per_s": round(rows / (finished - uploaded), 1),
        "polls": polls,
        "poll_seconds": POLL_SECONDS,
        "timed_out": done["status"] not in ("completed", "failed") and seconds > FINISH_TIMEOUT,
        **check(done, export if isinstance(export, str) else "", rows),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--no-local", action="store_true", help="skip part (a)")
    args = parser.parse_args(argv)
    from bench.cost import _fake_aws_env

    _fake_aws_env()  # before the service's modules make their loggers
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    load_before = _load()
    from bench.import_meter import import_cost, run_metered

    local = None if args.no_local else measure_local(args.rows)
    cost = import_cost(run_metered(args.rows), args.rows)
    payload = {"load_before": load_before, "load_after": _load(), "cost": cost, "local": local}
    path = write_result("import_cost", payload)
    print(
        table(
            ["rows", "write units/row", "read units/row", "SQS req/row", "$ per 1,000 rows"],
            [
                [
                    args.rows,
                    cost["write_units_per_row"],
                    cost["read_units_per_row"],
                    cost["sqs_requests_per_row"],
                    cost["usd_per_1000_rows"]["total"],
                ]
            ],
        )
    )
    if local:
        print(
            table(
                ["rows", "submit→completed s", "rows/s", "failed", "every post once"],
                [
                    [
                        local["rows"],
                        local["submit_to_completed_s"],
                        local["rows_per_s"],
                        local["rows_failed"],
                        local["every_row_post_exists_once"],
                    ]
                ],
            )
        )
    print(f"\nwrote {path}")
    return payload


def _load() -> list[float]:
    """The machine's 1/5/15-minute load averages (the run shares two cores)."""
    import os

    return [round(x, 2) for x in os.getloadavg()]


if __name__ == "__main__":
    main()


def section(result: dict[str, Any]) -> str:
    """Markdown for ``docs/benchmarks.md`` (``bench/render.py``) from the result JSON."""
    m, c, lo = result["machine"], result["cost"], result.get("local")
    usd = c["usd_per_1000_rows"]
    parts = [
        f"_Run {result['date']} on {m['nproc']} CPUs, memory `{m['memory']}`, Python "
        f"{m['python']} ({m['platform']}); load average (1/5/15 min) {result['load_before']} "
        f"before, {result['load_after']} after: the cores were shared with other work._",
        "",
        f"**Metered on moto** ({c['rows']:,} rows, {c['chunks']} chunks, "
        f"{c['importer_invocations']} importer invocations of {c['importer_batch_size']} "
        f"messages; Lambda time modelled: API {c['lambda_seconds_modelled']['api']} s, importer "
        f"{c['lambda_seconds_modelled']['importer']} s in all):",
        "",
        table(
            ["per row", "DynamoDB write units", "read units", "SQS requests", "$"],
            [
                [
                    "",
                    c["write_units_per_row"],
                    c["read_units_per_row"],
                    c["sqs_requests_per_row"],
                    f"{c['usd_per_row']:.8f}",
                ]
            ],
        ),
        "",
        table(["$ per 1,000 rows", *usd], [["", *usd.values()]]),
        "",
        "DynamoDB units per row by phase: "
        + "; ".join(
            f"{p} {v['write_units']} WU / {v['read_units']} RU"
            for p, v in c["phases_per_row"].items()
        )
        + f". S3 requests per import: {c['s3_requests_per_import']}.",
    ]
    if lo:
        parts += [
            "",
            f"**Wall time on the local stack** (upload {lo['upload_seconds']} s, the commit's "
            f"request {lo['commit_request_seconds']} s, polled every {lo['poll_seconds']} s):",
            "",
            table(
                [
                    "rows",
                    "status at the end",
                    "rows done",
                    "submit → completed (or timeout) s",
                    "rows/s",
                    "rows failed",
                    "distinct posts",
                    "every row's post once",
                ],
                [
                    [
                        lo["rows"],
                        lo["status"] + (" (timed out)" if lo.get("timed_out") else ""),
                        lo["rows_done"],
                        lo["submit_to_completed_s"],
                        lo["rows_per_s"],
                        lo["rows_failed"],
                        lo["distinct_schedule_ids"],
                        lo["every_row_post_exists_once"],
                    ]
                ],
            ),
        ]
    return "\n".join(parts)
