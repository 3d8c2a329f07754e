"""Bulk import on moto: a dry run reports bad rows by line and writes nothing; a 1,000-row file
is checked whole and queued as ten chunks (its last chunk run); a 200-row import runs chunk by
chunk to every row's result; the same file again, a re-run chunk and a
re-sent request create nothing twice; an export re-imports to the same posts; another
caller's import is not found. The background step is the importer Lambda's handler, given the
chunks' SQS records."""

from __future__ import annotations

from typing import Any

import pytest

from functions.importer.handler import ImporterDeps, make_lambda_handler
from local.emulation.lambda_runtime import LambdaContext
from scheduled_posts.api_app import get_dependencies
from scheduled_posts.data.imports import ImportStore
from scheduled_posts.logic.import_file import ImportFileError
from scheduled_posts.logic.import_runs import ImportChunk, Started, run_chunk, start_import
from scheduled_posts.logic.posts import PostDeps
from scheduled_posts.models.imports import ImportChunkMessage, ImportOut, ImportStatus
from tests.support.api import ApiClient, text_of

HEADER = "publish_at,channels,content\r\n"


@pytest.fixture
def deps(alice: ApiClient) -> PostDeps:
    return get_dependencies().post_deps


@pytest.fixture
def store(deps: PostDeps) -> ImportStore:
    return ImportStore(deps.settings.POSTS_TABLE_NAME)


def _csv(n: int, channel: str) -> bytes:
    lines = [
        f"2026-12-{1 + i // 100:02d}T09:{i % 60:02d}:00Z,{channel},post {i}\r\n" for i in range(n)
    ]
    return (HEADER + "".join(lines)).encode()


def _start(owner: str, data: bytes, deps: PostDeps, store: ImportStore, **kw: Any) -> Started:
    return start_import(
        owner,
        data,
        "csv",
        key=kw.get("key"),
        dry_run=kw.get("dry_run", False),
        deps=deps,
        store=store,
    )


class _Files:
    """The import files, in memory (the S3 ``GetObject`` stand-in)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def load(self, owner: str, import_id: str) -> bytes:
        return self.data


def _record(chunk: ImportChunk) -> dict[str, Any]:
    body = ImportChunkMessage(
        owner=chunk.owner,
        import_id=chunk.import_id,
        key=chunk.key,
        format=chunk.format,
        chunk=chunk.chunk,
    )
    return {
        "messageId": f"{chunk.import_id}-{chunk.chunk}",
        "receiptHandle": "r",
        "body": body.model_dump_json(),
        "attributes": {
            "ApproximateReceiveCount": "1",
            "SentTimestamp": "0",
            "SenderId": "test",
            "ApproximateFirstReceiveTimestamp": "0",
        },
        "messageAttributes": {},
        "md5OfBody": "-",
        "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:imports",
        "awsRegion": "us-east-1",
    }


def _run(started: Started, data: bytes, deps: PostDeps, store: ImportStore) -> ImportOut:
    """Every chunk through the importer Lambda's handler, ten records a batch (SQS's most)."""
    handler = make_lambda_handler(lambda: ImporterDeps(posts=deps, store=store, files=_Files(data)))
    chunks = list(started.chunks)
    for at in range(0, len(chunks), 10):
        records = [_record(c) for c in chunks[at : at + 10]]
        answer = handler({"Records": records}, LambdaContext("importer", 60))  # type: ignore[arg-type]
        assert answer["batchItemFailures"] == []
    assert started.import_id is not None
    found = store.get(chunks[0].owner if chunks else "alice", started.import_id)
    assert found is not None
    return found


def _post_count(alice: ApiClient) -> int:
    return len(text_of(alice.get("/v1/scheduled-posts/export.csv")).splitlines()) - 1


def test_import_dry_run_with_bad_rows_reports_each_by_line_and_writes_nothing(
    alice: ApiClient, deps: PostDeps, store: ImportStore
) -> None:
    channel = alice.create_channel("blog")
    data = (
        HEADER
        + f"2026-12-01T09:00:00Z,{channel},fine\r\n"
        + "2026-12-01T09:00:00Z,nope,unknown channel\r\n"
        + f"2020-01-01T09:00:00Z,{channel},in the past\r\n"
        + f"2026-12-01T09:00:00Z,{channel},=cmd|' /C calc'!A0\r\n"
    ).encode()
    for dry_run in (True, False):  # a commit with problems is refused the same way
        started = _start("alice", data, deps, store, dry_run=dry_run)
        assert [(r.line, r.problems[0]["type"]) for r in started.problems] == [
            (3, "channel_not_found"),
            (4, "publish_at_past"),
            (5, "formula_cell"),
        ]
        assert started.problems[0].problems[0]["loc"] == ["channels", 0]
        assert started.import_id is None
    assert _post_count(alice) == 0


def test_import_thousand_rows_is_checked_whole_and_queued_as_ten_chunks(
    alice: ApiClient, deps: PostDeps, store: ImportStore
) -> None:
    # The 1,000-row limit proved cheaply: every row checked (dry run and commit), the import
    # recorded with ten chunks, and the last chunk run (rows 902-1001); a whole import through
    # the importer is the 200-row test below (the two share run_chunk).
    alice.create_channel("blog")
    data = _csv(1000, "blog")  # by name
    dry = _start("alice", data, deps, store, dry_run=True)
    assert (len(dry.checked), dry.problems, dry.import_id) == (1000, [], None)
    started = _start("alice", data, deps, store)
    assert started.import_id is not None and len(started.chunks) == 10
    queued = store.get("alice", started.import_id)
    assert queued is not None and (queued.status, queued.rows_total) == (ImportStatus.QUEUED, 1000)
    last = run_chunk(started.chunks[9], data, deps=deps, store=store)
    assert last is not None and (last.status, last.rows_done) == (ImportStatus.RUNNING, 100)
    assert [r.line for r in last.results] == list(range(902, 1002))
    assert _post_count(alice) == 100


def test_import_completes_and_the_same_file_again_creates_nothing(
    alice: ApiClient, deps: PostDeps, store: ImportStore
) -> None:
    channel = alice.create_channel("blog")
    data = _csv(200, "blog")  # by name
    started = _start("alice", data, deps, store)
    assert started.import_id is not None and len(started.chunks) == 2

    done = _run(started, data, deps, store)
    assert (done.status, done.rows_total, done.rows_done, done.rows_failed) == (
        ImportStatus.COMPLETED,
        200,
        200,
        0,
    )
    assert [r.line for r in done.results] == list(range(2, 202))
    assert len({r.schedule_id for r in done.results}) == 200
    assert _post_count(alice) == 200
    first = alice.get(f"/v1/scheduled-posts/{done.results[0].schedule_id}").json
    assert (first["channel_ids"], first["content"]) == ([channel], "post 0")

    again = _start("alice", data, deps, store)  # re-uploaded: the same import, nothing to run
    assert (again.import_id, again.chunks) == (started.import_id, ())
    rerun = run_chunk(started.chunks[1], data, deps=deps, store=store)  # a redelivered chunk
    assert rerun is not None and (rerun.rows_done, rerun.rows_failed) == (200, 0)
    assert _post_count(alice) == 200


def test_import_retry_of_a_request_that_crashed_before_queueing_gets_the_chunks_again(
    alice: ApiClient, deps: PostDeps, store: ImportStore
) -> None:
    alice.create_channel("blog")
    data = _csv(150, "blog")
    first = _start("alice", data, deps, store)  # recorded; suppose the send never happened
    again = _start("alice", data, deps, store)
    assert again.import_id == first.import_id and again.chunks == first.chunks


def test_import_chunk_rerun_after_a_crash_finds_its_posts(
    alice: ApiClient, deps: PostDeps, store: ImportStore
) -> None:
    alice.create_channel("blog")
    data = _csv(150, "blog")
    started = _start("alice", data, deps, store)
    real = store.record_chunk
    calls = {"n": 0}

    def crash_once(*args: Any, **kwargs: Any) -> bool:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("importer died after creating the rows")
        return real(*args, **kwargs)

    store.record_chunk = crash_once  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        run_chunk(started.chunks[0], data, deps=deps, store=store)
    done = _run(started, data, deps, store)
    assert (done.status, done.rows_done, _post_count(alice)) == (ImportStatus.COMPLETED, 150, 150)


def test_import_export_reimports_to_the_same_posts(
    alice: ApiClient, deps: PostDeps, store: ImportStore
) -> None:
    channel = alice.create_channel("blog")
    alice.schedule("2026-12-02T10:00:00Z", [channel], content='=SUM(A1) "quoted", and\nmore')
    alice.schedule("2026-12-03T10:00:00Z", [channel], content="- a list")
    export = text_of(alice.get("/v1/scheduled-posts/export.csv")).encode()
    done = _run(_start("alice", export, deps, store), export, deps, store)
    assert done.rows_done == 2

    def fields(post: dict[str, Any]) -> tuple[Any, ...]:
        return (post["publish_at"], post["channel_ids"], post["content"], post["media_ids"])

    posts = alice.get("/v1/scheduled-posts", query={"limit": "10"}).json["items"]
    imported = {r.schedule_id for r in done.results}
    originals = sorted(fields(p) for p in posts if p["schedule_id"] not in imported)
    copies = sorted(fields(p) for p in posts if p["schedule_id"] in imported)
    assert copies == originals and len(copies) == 2


def test_import_malformed_file_is_refused_and_writes_nothing(
    alice: ApiClient, deps: PostDeps, store: ImportStore
) -> None:
    alice.create_channel("blog")
    with pytest.raises(ImportFileError) as caught:
        _start("alice", (HEADER + '2026-12-01T09:00:00Z,blog,"open\r\n').encode(), deps, store)
    assert caught.value.kind == "unbalanced_quotes"
    assert _post_count(alice) == 0


def test_import_of_another_user_is_not_found(
    alice: ApiClient, deps: PostDeps, store: ImportStore
) -> None:
    alice.create_channel("blog")
    started = _start("alice", _csv(1, "blog"), deps, store)
    assert started.import_id is not None
    assert store.get("bob", started.import_id) is None
    assert store.get("alice", started.import_id) is not None


def test_get_import_answers_the_owner_and_404_for_another_caller(
    alice: ApiClient, bob: ApiClient, deps: PostDeps, store: ImportStore
) -> None:
    alice.create_channel("blog")
    data = _csv(2, "blog")
    started = _start("alice", data, deps, store)
    _run(started, data, deps, store)
    mine = alice.get(f"/v1/imports/{started.import_id}")
    assert mine.status == 200, mine.json
    assert (mine.json["status"], mine.json["rows_done"]) == ("completed", 2)
    assert [r["line"] for r in mine.json["results"]] == [2, 3]
    assert bob.get(f"/v1/imports/{started.import_id}").status == 404
