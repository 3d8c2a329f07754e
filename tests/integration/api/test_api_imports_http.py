"""``POST /v1/imports`` on moto: a dry run answers each bad row by line and writes nothing; a
commit queues one message per chunk and keeps the file under ``imports/<owner>/<id>`` in the
media bucket; the importer Lambda, fed from the import queue, completes it; the same request
again (same ``Idempotency-Key``) answers the same import and queues nothing; a chunk that
reaches the DLQ marks the import failed. Bad files and bad rows are 422s naming the field."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from unittest import mock

import boto3
import pytest

from functions.importer.handler import ImporterDeps, make_lambda_handler
from local.emulation.lambda_runtime import LambdaContext
from local.emulation.resources import ensure_media_bucket
from scheduled_posts.api_app import get_dependencies
from scheduled_posts.data.imports import S3ImportFiles, import_object_key
from scheduled_posts.logic import imports as import_logic
from tests.support.api import ApiClient, install_api
from tests.support.clock import SimClock
from tests.support.fixtures import AwsResources

HEADER = "publish_at,channels,content\r\n"


@pytest.fixture
def bucket(aws: AwsResources) -> str:
    s3 = boto3.client("s3", region_name="us-east-1")
    ensure_media_bucket(s3, name=aws.settings.MEDIA_BUCKET_NAME, origins=("http://127.0.0.1",))
    return aws.settings.MEDIA_BUCKET_NAME


def _csv(n: int, channel: str = "blog") -> str:
    rows = [
        f"2026-12-{1 + i // 100:02d}T09:{i % 60:02d}:00Z,{channel},post {i}\r\n" for i in range(n)
    ]
    return HEADER + "".join(rows)


def _receive(aws: AwsResources, url: str) -> list[dict[str, Any]]:
    """Every message now on the queue at ``url`` as Lambda SQS records (the event source
    mapping's shape), deleted from the queue."""
    arn = aws.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    records: list[dict[str, Any]] = []
    while True:
        got = aws.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
        if not got:
            return records
        for m in got:
            aws.sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
            records.append(
                {
                    "messageId": m["MessageId"],
                    "receiptHandle": m["ReceiptHandle"],
                    "body": m["Body"],
                    "attributes": {
                        "ApproximateReceiveCount": "1",
                        "SentTimestamp": "0",
                        "SenderId": "test",
                        "ApproximateFirstReceiveTimestamp": "0",
                    },
                    "messageAttributes": {},
                    "md5OfBody": m["MD5OfBody"],
                    "eventSource": "aws:sqs",
                    "eventSourceARN": arn,
                    "awsRegion": "us-east-1",
                }
            )


def _importer(aws: AwsResources) -> Any:
    api = get_dependencies()
    deps = ImporterDeps(
        posts=api.post_deps,
        store=api.imports,
        files=S3ImportFiles(aws.settings.MEDIA_BUCKET_NAME),
        dlq_name=aws.settings.IMPORT_DLQ_URL.rsplit("/", 1)[-1],
    )
    return make_lambda_handler(lambda: deps)


def _feed(aws: AwsResources, records: list[dict[str, Any]]) -> None:
    handler = _importer(aws)
    for at in range(0, len(records), 10):
        answer = handler({"Records": records[at : at + 10]}, LambdaContext("importer", 120))
        assert answer["batchItemFailures"] == []


def _killed_after(aws: AwsResources, rows: int, records: list[dict[str, Any]]) -> list[Any]:
    """Run the importer on ``records`` and kill it once ``rows`` rows' posts are written (a
    Lambda killed mid-chunk: the batch fails); returns the posts it wrote."""
    create, made = import_logic.create_post, []

    def dying(*args: Any, **kwargs: Any) -> Any:
        if len(made) == rows:
            raise RuntimeError("importer killed")
        made.append(create(*args, **kwargs))
        return made[-1]

    with mock.patch.object(import_logic, "create_post", dying), pytest.raises(Exception):
        _importer(aws)({"Records": records}, LambdaContext("importer", 120))
    return made


def test_post_import_dry_run_reports_bad_rows_by_line_and_writes_nothing(
    alice: ApiClient, aws: AwsResources, bucket: str
) -> None:
    channel = alice.create_channel("blog")
    content = HEADER + f"2026-12-01T09:00:00Z,{channel},fine\r\n2026-12-01T09:00:00Z,nope,x\r\n"
    answer = alice.post("/v1/imports", {"content": content, "dry_run": True})
    assert answer.status == 200, answer.json
    assert (answer.json["rows_total"], answer.json["valid"]) == (2, False)
    assert [(p["line"], p["problems"][0]["type"]) for p in answer.json["problems"]] == [
        (3, "channel_not_found")
    ]
    assert _receive(aws, aws.settings.IMPORT_QUEUE_URL) == []
    assert "Contents" not in boto3.client("s3").list_objects_v2(Bucket=bucket)


def test_post_import_commit_with_bad_rows_is_422_naming_each_row(
    alice: ApiClient, aws: AwsResources, bucket: str
) -> None:
    alice.create_channel("blog")
    content = HEADER + "2026-12-01T09:00:00Z,blog,fine\r\n2026-12-01T09:00:00Z,blog,=cmd|x\r\n"
    answer = alice.post("/v1/imports", {"content": content})
    assert answer.status == 422, answer.json
    assert [(e["loc"], e["type"]) for e in answer.json["errors"]] == [
        (["rows", 3, "content"], "formula_cell")
    ]
    assert _receive(aws, aws.settings.IMPORT_QUEUE_URL) == []


def test_post_import_malformed_file_is_422_naming_content_and_rule(
    alice: ApiClient, bucket: str
) -> None:
    answer = alice.post("/v1/imports", {"content": HEADER + '2026-12-01T09:00:00Z,b,"open\r\n'})
    assert answer.status == 422, answer.json
    assert answer.json["errors"][0]["loc"][:2] == ["body", "content"]
    assert answer.json["errors"][0]["type"] == "unbalanced_quotes"


def test_post_import_commit_runs_through_the_queue_and_a_retry_creates_nothing(
    alice: ApiClient, aws: AwsResources, bucket: str
) -> None:
    alice.create_channel("blog")
    body = {"content": _csv(200), "format": "csv"}
    first = alice.post("/v1/imports", body, headers={"Idempotency-Key": "march"})
    assert first.status == 202, first.json
    import_id = first.json["import_id"]
    assert (first.json["status"], first.json["rows_total"]) == ("queued", 200)
    key = import_object_key("alice", import_id)
    stored = boto3.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read()
    assert stored == body["content"].encode()
    records = _receive(aws, aws.settings.IMPORT_QUEUE_URL)
    assert len(records) == 2  # one per chunk of 100 rows

    _feed(aws, records)
    done = alice.get(f"/v1/imports/{import_id}").json
    assert (done["status"], done["rows_done"], done["rows_failed"]) == ("completed", 200, 0)
    assert done["created_at"].endswith("Z") and len(done["created_at"]) == 24  # milliseconds
    assert len({r["schedule_id"] for r in done["results"]}) == 200

    again = alice.post("/v1/imports", body, headers={"Idempotency-Key": "march"})
    assert (again.status, again.json["import_id"], again.json["status"]) == (
        202,
        import_id,
        "completed",
    )
    assert _receive(aws, aws.settings.IMPORT_QUEUE_URL) == []


def test_post_import_chunk_in_the_dlq_marks_the_import_failed_listing_its_rows(
    alice: ApiClient, aws: AwsResources, bucket: str
) -> None:
    alice.create_channel("blog")
    first = alice.post("/v1/imports", {"content": _csv(150)})
    assert first.status == 202, first.json
    records = _receive(aws, aws.settings.IMPORT_QUEUE_URL)
    _feed(aws, records[:1])
    # Chunk 1's run dies after 3 of its 50 rows' posts are written (a Lambda killed mid-chunk).
    made = _killed_after(aws, 3, records[1:])
    for record in records[1:]:  # as SQS does after IMPORT_MAX_RECEIVES failed receives
        aws.sqs.send_message(QueueUrl=aws.settings.IMPORT_DLQ_URL, MessageBody=record["body"])
    _feed(aws, _receive(aws, aws.settings.IMPORT_DLQ_URL))

    found = alice.get(f"/v1/imports/{first.json['import_id']}").json
    assert found["status"] == "failed"
    assert "rows 101-150" in found["error"] and "not_imported" in found["error"]
    assert (found["rows_done"], found["rows_failed"]) == (103, 47)
    dead = [r for r in found["results"] if r["line"] >= 102]  # row 101 is on line 102
    made_ids = [p.schedule_id for p in made]
    assert [r["schedule_id"] for r in dead[:3]] == made_ids
    assert {r["problems"][0]["type"] for r in dead[3:]} == {"not_imported"}
    assert all(alice.get(f"/v1/scheduled-posts/{sid}").status == 200 for sid in made_ids)
    # A duplicate of the dead chunk run afterwards creates nothing: the report stays true.
    _feed(aws, [{**r, "messageId": f"dup-{r['messageId']}"} for r in records[1:]])
    assert alice.get(f"/v1/imports/{first.json['import_id']}").json == found
    key = import_logic.file_key(_csv(150).encode())
    for row in dead[3:]:
        sid = import_logic.row_schedule_id("alice", key, row["line"])
        assert alice.get(f"/v1/scheduled-posts/{sid}").status == 404, row


def test_post_import_second_dead_chunk_is_listed_and_never_reopens_the_failed_import(
    alice: ApiClient, aws: AwsResources, bucket: str
) -> None:
    alice.create_channel("blog")
    first = alice.post("/v1/imports", {"content": _csv(250)})  # 3 chunks
    assert first.status == 202, first.json
    records = _receive(aws, aws.settings.IMPORT_QUEUE_URL)
    _feed(aws, records[:1])
    for record in records[1:]:  # both later chunks dead-lettered, reported one after the other
        aws.sqs.send_message(QueueUrl=aws.settings.IMPORT_DLQ_URL, MessageBody=record["body"])
        _feed(aws, _receive(aws, aws.settings.IMPORT_DLQ_URL))

    found = alice.get(f"/v1/imports/{first.json['import_id']}").json
    assert found["status"] == "failed"
    assert "rows 101-200" in found["error"]  # the first failure's report stands
    assert (found["rows_done"], found["rows_failed"], len(found["results"])) == (100, 150, 250)


def test_post_import_chunk_rerun_after_its_rows_fell_due_counts_the_rows_it_made(
    alice: ApiClient, aws: AwsResources, bucket: str, clock: SimClock
) -> None:
    """A chunk killed after 3 rows and re-run once those rows' publish_at passed: the 3 are
    done (their posts exist), not refused as in the past, and the rest are made."""
    alice.create_channel("blog")
    first = alice.post("/v1/imports", {"content": _csv(10)})  # rows at 09:00 ... 09:09
    assert first.status == 202, first.json
    records = _receive(aws, aws.settings.IMPORT_QUEUE_URL)
    made = _killed_after(aws, 3, records)
    clock.advance_to(datetime(2026, 12, 1, 9, 2, 30, tzinfo=UTC))  # rows 1-3 are past due

    _feed(aws, records)

    found = alice.get(f"/v1/imports/{first.json['import_id']}").json
    assert (found["status"], found["rows_done"], found["rows_failed"]) == ("completed", 10, 0)
    assert [r["schedule_id"] for r in found["results"][:3]] == [p.schedule_id for p in made]


def test_post_import_of_an_uploaded_file_reads_it_and_a_missing_upload_is_422(
    alice: ApiClient, aws: AwsResources, bucket: str
) -> None:
    alice.create_channel("blog")
    created = alice.post("/v1/imports/uploads")
    assert created.status == 201, created.json
    upload_id, form = created.json["upload_id"], created.json["upload"]
    assert form["fields"]["key"] == f"imports/alice/uploads/{upload_id}"
    # The client's multipart POST to the form, as S3 stores it.
    boto3.client("s3").put_object(Bucket=bucket, Key=form["fields"]["key"], Body=_csv(3).encode())
    dry = alice.post("/v1/imports", {"upload_id": upload_id, "dry_run": True})
    assert (dry.status, dry.json["rows_total"], dry.json["valid"]) == (200, 3, True)

    missing = alice.post("/v1/imports", {"upload_id": "0" * 8 + "-0000-4000-8000-" + "0" * 12})
    assert missing.status == 422, missing.json
    assert missing.json["errors"][0]["loc"] == ["body", "upload_id"]
    assert missing.json["errors"][0]["type"] == "not_uploaded"
    both = alice.post("/v1/imports", {"upload_id": upload_id, "content": "x"})
    assert both.status == 422, both.json


def test_post_import_key_reused_with_another_file_is_422_naming_the_key_and_changes_nothing(
    alice: ApiClient, aws: AwsResources, bucket: str
) -> None:
    alice.create_channel("blog")
    first = alice.post("/v1/imports", {"content": _csv(3)}, headers={"Idempotency-Key": "april"})
    assert first.status == 202, first.json
    queued = _receive(aws, aws.settings.IMPORT_QUEUE_URL)
    key = import_object_key("alice", first.json["import_id"])
    kept = boto3.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read()

    other = alice.post("/v1/imports", {"content": _csv(4)}, headers={"Idempotency-Key": "april"})
    assert other.status == 422, other.json
    error = other.json["errors"][0]
    assert (error["loc"], error["type"]) == (
        ["header", "Idempotency-Key"],
        "idempotency_key_reused",
    )
    assert "'april'" in other.json["detail"]
    assert _receive(aws, aws.settings.IMPORT_QUEUE_URL) == []  # no chunk queued
    assert boto3.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read() == kept
    assert alice.get(f"/v1/imports/{first.json['import_id']}").json["rows_total"] == 3

    _feed(aws, queued)  # the first import runs as it would have: its 3 rows, no more
    done = alice.get(f"/v1/imports/{first.json['import_id']}").json
    assert (done["status"], done["rows_done"]) == ("completed", 3)
    same = alice.post("/v1/imports", {"content": _csv(3)}, headers={"Idempotency-Key": "april"})
    assert (same.status, same.json["import_id"]) == (202, first.json["import_id"])


def test_post_import_past_the_pending_limit_is_reported_by_the_dry_run_and_refused(
    aws: AwsResources, bucket: str, clock: SimClock
) -> None:
    # Given room for 3 more scheduled posts (a limit of 5, 2 scheduled)
    install_api(aws.settings.model_copy(update={"MAX_PENDING_POSTS": 5}), clock)
    alice = ApiClient("alice")
    channel = alice.create_channel("blog")
    for at in ("2026-12-02T09:00:00Z", "2026-12-02T10:00:00Z"):
        assert alice.schedule(at, [channel], "before").get("schedule_id")

    # When a 4-row file is checked, then committed
    dry = alice.post("/v1/imports", {"content": _csv(4), "dry_run": True})
    commit = alice.post("/v1/imports", {"content": _csv(4)})

    # Then the dry run names the row past the room, and the commit is refused writing nothing
    assert (dry.status, dry.json["valid"]) == (200, False), dry.json
    [over] = dry.json["problems"]
    assert over["line"] == 5 and over["problems"][0]["type"] == "limit_exceeded"
    assert "MAX_PENDING_POSTS (5)" in over["problems"][0]["msg"]
    assert commit.status == 422, commit.json
    assert _receive(aws, aws.settings.IMPORT_QUEUE_URL) == []
    assert alice.post("/v1/imports", {"content": _csv(3), "dry_run": True}).json["valid"]
