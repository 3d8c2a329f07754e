"""Reading import files (``logic/import_file.py``): CSV and JSON Lines into rows, malformed
files refused as a whole, bad rows reported by line."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from scheduled_posts.logic.import_file import (
    MAX_IMPORT_ROWS,
    ImportFileError,
    read_import,
)
from scheduled_posts.logic.post_csv import posts_csv
from scheduled_posts.models.post import Post, PostStatus

HEADER = "publish_at,channels,content\r\n"


def _kind(data: bytes, fmt: str = "csv") -> str:
    with pytest.raises(ImportFileError) as caught:
        read_import(data, fmt)  # type: ignore[arg-type]
    return caught.value.kind


def test_read_import_crlf_with_bom_reads_rows() -> None:
    data = ("\ufeff" + HEADER + "2026-12-01T09:00:00+01:00,ch-1 ch-2,hello\r\n").encode()
    [row] = read_import(data, "csv")
    assert row.line == 2
    assert row.publish_at == datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
    assert row.channels == ["ch-1", "ch-2"]
    assert row.content == "hello"
    assert row.problems == []


def test_read_import_multiline_cell_reports_the_line_the_record_starts_on() -> None:
    data = (HEADER + '2026-12-01T09:00:00Z,c,"one\r\ntwo"\r\nnot-a-time,c,x\r\n').encode()
    first, second = read_import(data, "csv")
    assert first.content == "one\r\ntwo"
    assert second.line == 4
    assert second.problems[0]["type"] == "publish_at_invalid"


def test_read_import_local_time_in_spring_gap_is_the_gap_end() -> None:
    data = b"local_date,local_time,timezone,channels,content\n2026-03-29,02:30,Europe/Berlin,c,x\n"
    [row] = read_import(data, "csv")
    assert row.publish_at == datetime(2026, 3, 29, 1, 0, tzinfo=UTC)


def test_read_import_fixed_offset_zone_is_the_rows_problem() -> None:
    data = b"local_date,local_time,timezone,channels,content\n2026-03-29,09:30,+02:00,c,x\n"
    [row] = read_import(data, "csv")
    assert row.problems[0]["type"] == "timezone_not_iana"


def test_read_import_unescaped_formula_is_refused_escaped_one_is_text() -> None:
    data = (
        HEADER + "2026-12-01T09:00:00Z,c,=cmd|' /C calc'!A0\r\n"
        "2026-12-01T09:00:00Z,c,'=1+1\r\n2026-12-01T09:00:00Z,c,- item\r\n"
    ).encode()
    bad, escaped, dash = read_import(data, "csv")
    assert bad.problems == [
        {"loc": ["content"], "msg": bad.problems[0]["msg"], "type": "formula_cell"}
    ]
    assert escaped.content == "=1+1" and escaped.problems == []
    assert dash.content == "- item" and dash.problems == []


def test_read_import_first_comment_is_not_supported() -> None:
    data = b"publish_at,channels,content,first_comment\n2026-12-01T09:00:00Z,c,x,hi\n"
    [row] = read_import(data, "csv")
    assert row.problems[0]["type"] == "not_supported"


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        ((HEADER + "2026-12-01T09:00:00Z,c,caf\xe9\r\n").encode("latin-1"), "not_utf8"),
        ((HEADER + '2026-12-01T09:00:00Z,c,"open\r\n').encode(), "unbalanced_quotes"),
        (b"publish_at,channels,content,colour\n", "unknown_column"),
        (b"publish_at,content\n2026-12-01T09:00:00Z,x\n", "missing_column"),
        (b"", "empty"),
        (HEADER.encode(), "empty"),
    ],
)
def test_read_import_malformed_file_is_refused(data: bytes, kind: str) -> None:
    assert _kind(data) == kind


def test_read_import_over_the_row_limit_is_refused_at_the_limit_accepted() -> None:
    line = "2026-12-01T09:00:00Z,c,x\r\n"
    assert len(read_import((HEADER + line * MAX_IMPORT_ROWS).encode(), "csv")) == MAX_IMPORT_ROWS
    assert _kind((HEADER + line * (MAX_IMPORT_ROWS + 1)).encode()) == "too_many_rows"
    assert _kind((HEADER + line * 10_001).encode()) == "too_many_rows"


def test_read_import_jsonl_reads_lists_and_reports_bad_json_by_line() -> None:
    good = b'{"publish_at": "2026-12-01T09:00:00Z", "channels": ["a", "b"], "content": "x"}\n'
    [row] = read_import(good, "jsonl")
    assert row.channels == ["a", "b"] and row.line == 1
    with pytest.raises(ImportFileError) as caught:
        read_import(good + b"{nope\n", "jsonl")
    assert (caught.value.kind, caught.value.line) == ("not_json", 2)


def test_read_import_export_reads_back_to_the_same_fields() -> None:
    at = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
    post = Post(
        schedule_id="s-1",
        owner="u",
        status=PostStatus.SCHEDULED,
        content='=SUM(A1)\n"hi", you',
        media_ids=["m-1"],
        language="en",
        publish_at=at,
        channel_ids=["c-1", "c-2"],
        deliveries={},
        version=1,
        created_at=at,
        updated_at=at,
        shard=0,
    )
    [row] = read_import(posts_csv([post]).encode(), "csv")
    assert (row.publish_at, row.channels, row.content, row.media_ids, row.language) == (
        at,
        ["c-1", "c-2"],
        post.content,
        ["m-1"],
        "en",
    )
    assert row.problems == []
