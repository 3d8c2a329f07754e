"""Part (b) of ``bench/import_cost.py``: a CSV import through the real handlers on moto,
metered (``bench/meter.py``), and its units, requests and dollars per row (the method is
described in ``bench/import_cost.py``'s docstring)."""

from __future__ import annotations

import math
from collections import Counter
from datetime import timedelta
from typing import Any

from bench.import_cost import check, csv_file


def _esm_batches(chunks: int, batch_size: int) -> int:
    return math.ceil(chunks / batch_size)


def run_metered(rows: int) -> dict[str, Any]:
    """Part (b)'s run: the import through the real handlers on moto, metered per phase. Its
    ``meter`` rows, invocations per function, and the finished import's check."""
    import boto3
    import time_machine
    from moto import mock_aws

    from bench.cost import START
    from bench.meter import Meter
    from functions.importer.handler import ImporterDeps, make_lambda_handler
    from local.emulation.lambda_runtime import LambdaContext
    from local.emulation.resources import ensure_media_bucket
    from scheduled_posts import sizing
    from scheduled_posts.api_app import get_dependencies
    from scheduled_posts.data import aws as aws_clients
    from scheduled_posts.data.imports import S3ImportFiles
    from scheduled_posts.logic.promotion import make_promoter
    from tests.support.api import ApiClient, install_api, text_of, uninstall_api
    from tests.support.clock import SimClock
    from tests.support.fixtures import create_resources

    meter = Meter()
    batch = sizing.DEFAULT_IMPORTER_BATCH_SIZE
    with time_machine.travel(START, tick=False) as traveller, mock_aws(), meter.installed():
        clock = SimClock(traveller)
        aws_clients.reset_clients()
        meter.phase = "setup"
        aws = create_resources(prefix="imp")
        settings = aws.settings
        s3 = boto3.client("s3", region_name="us-east-1")
        ensure_media_bucket(s3, name=settings.MEDIA_BUCKET_NAME, origins=("http://127.0.0.1",))
        install_api(settings, clock, promoter=make_promoter(settings, clock))
        client = ApiClient("0f8fad5b-d9cb-469f-a165-70867728950e")  # a Cognito sub's length
        client.create_channel("sheet")
        data = csv_file(rows, clock.now() + timedelta(hours=2))
        meter.phase = "upload-create"
        form = client.post("/v1/imports/uploads").json
        meter.phase = "upload"
        s3.put_object(
            Bucket=settings.MEDIA_BUCKET_NAME, Key=form["upload"]["fields"]["key"], Body=data
        )
        meter.phase = "commit"
        commit = client.post(
            "/v1/imports",
            {"upload_id": form["upload_id"]},
            headers={"Idempotency-Key": "bench-import"},
        )
        if commit.status != 202:
            raise RuntimeError(f"import commit failed: {commit.status} {commit.json}")
        meter.phase = "esm"  # the mapping's receives and deletes are billed per batch below
        records = _records(aws, settings.IMPORT_QUEUE_URL)
        api = get_dependencies()
        deps = ImporterDeps(
            posts=api.post_deps,
            store=api.imports,
            files=S3ImportFiles(settings.MEDIA_BUCKET_NAME),
            dlq_name=settings.IMPORT_DLQ_URL.rsplit("/", 1)[-1],
        )
        handler = make_lambda_handler(lambda: deps)
        for at in range(0, len(records), batch):
            meter.phase = "importer"
            answer = handler(
                {"Records": records[at : at + batch]},
                LambdaContext("importer", sizing.DEFAULT_IMPORTER_TIMEOUT_SECONDS),
            )
            if answer["batchItemFailures"]:
                raise RuntimeError(f"importer batch failed: {answer}")
        meter.phase = "status"
        done = client.get(f"/v1/imports/{commit.json['import_id']}").json
        meter.phase = "check"
        export = text_of(client.get("/v1/scheduled-posts/export.csv"))
        uninstall_api()
        aws_clients.reset_clients()
    return {
        "meter": meter,
        "chunks": len(records),
        "invocations": {"api": 3, "importer": _esm_batches(len(records), batch)},
        "batch_size": batch,
        **check(done, export, rows),
    }


def _records(aws: Any, url: str) -> list[dict[str, Any]]:
    """Every message on the queue as Lambda SQS records (deleted from the queue)."""
    from local.emulation.sqs import to_event_record

    arn = aws.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    records: list[dict[str, Any]] = []
    while got := aws.sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["All"]
    ).get("Messages"):
        for message in got:
            aws.sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
            records.append(to_event_record(message, arn))
    return records


PHASES = ("upload-create", "upload", "commit", "importer", "status")


def import_cost(run: dict[str, Any], rows: int) -> dict[str, Any]:
    """Part (b): units, requests and dollars per row and per 1,000 rows from ``run_metered``."""
    from bench.cost import ASSUMED_CALL_SECONDS, ASSUMED_OVERHEAD_SECONDS, _lambda_cost
    from bench.prices import PRICES, s3_request_cost

    meter_rows = run["meter"].usage.rows()
    mine = [r for r in meter_rows if r["phase"] in PHASES]

    def total(key: str, *, service: str | None = None, phase: str | None = None) -> float:
        return sum(
            r[key]
            for r in mine
            if (service is None or r["service"] == service) and (phase in (None, r["phase"]))
        )

    s3_ops: Counter[str] = Counter()
    for r in mine:
        if r["service"] == "s3":
            op = "PostObject" if r["phase"] == "upload" else r["operation"]
            s3_ops[op] += r["billed_requests"]
    batches = run["invocations"]["importer"]
    sqs = total("billed_requests", service="sqs") + 2 * batches  # the mapping: receive + delete
    api_calls = sum(total("calls", phase=p) for p in ("upload-create", "commit", "status"))
    api_seconds = api_calls * ASSUMED_CALL_SECONDS + 3 * ASSUMED_OVERHEAD_SECONDS
    importer_seconds = (
        total("calls", phase="importer") * ASSUMED_CALL_SECONDS + batches * ASSUMED_OVERHEAD_SECONDS
    )
    wu, ru = total("write_units"), total("read_units")
    usd = {
        "api_gateway": PRICES["http_api_request"].cost(3),
        "lambda": _lambda_cost(3, api_seconds / 3)
        + _lambda_cost(batches, importer_seconds / batches),
        "dynamodb": PRICES["dynamodb_write_unit"].cost(wu) + PRICES["dynamodb_read_unit"].cost(ru),
        "sqs": PRICES["sqs_request"].cost(sqs),
        "s3": sum(s3_request_cost(op, n) for op, n in s3_ops.items()),
    }
    usd["total"] = sum(usd.values())
    per_phase = {
        p: {k: round(total(k, phase=p) / rows, 4) for k in ("write_units", "read_units", "calls")}
        for p in PHASES
    }
    return {
        "rows": rows,
        "chunks": run["chunks"],
        "importer_invocations": batches,
        "importer_batch_size": run["batch_size"],
        "write_units_per_row": round(wu / rows, 3),
        "read_units_per_row": round(ru / rows, 3),
        "sqs_requests_per_row": round(sqs / rows, 4),
        "s3_requests_per_import": dict(sorted(s3_ops.items())),
        "lambda_seconds_modelled": {
            "api": round(api_seconds, 3),
            "importer": round(importer_seconds, 3),
        },
        "phases_per_row": per_phase,
        "usd_per_1000_rows": {k: round(v * 1000 / rows, 5) for k, v in usd.items()},
        "usd_per_row": round(usd["total"] / rows, 8),
        "check": {
            k: run[k]
            for k in (
                "status",
                "rows_done",
                "rows_failed",
                "distinct_schedule_ids",
                "every_row_post_exists_once",
            )
        },
    }
