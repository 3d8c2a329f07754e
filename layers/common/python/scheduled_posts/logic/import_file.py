"""Reading an import file: the posts CSV (``logic/post_csv.py``) or JSON Lines, into rows.

Pure (no AWS): ``read_import(data, fmt)`` turns the file's bytes into :class:`ImportRow` items,
one per post, each with its 1-based ``line`` (the physical line its record starts on, so a
spreadsheet user finds it) and either its parsed fields or its ``problems``. A file that cannot
be read as a whole raises :class:`ImportFileError` (the API answers 422 ``import_file``).

The CSV header (any order; ``publish_at`` **or** ``local_date`` + ``local_time`` + ``timezone``)::

    publish_at,channels,content,media,language,schedule_id,status      (the export's own header)
    local_date,local_time,timezone,channels,content                      (a spreadsheet's)

* ``publish_at``: RFC 3339 with an offset (``clock.parse_instant``);
* ``local_date`` (``YYYY-MM-DD``), ``local_time`` (``HH:MM``) and ``timezone`` (IANA): a wall time
  resolved by the recurring schedules' DST rule (``recurrence.resolve_wall_time``: a time in a
  spring-forward gap is the gap's end, a repeated one its first instant);
* ``channels``, ``media``: ids (channels also names) separated by spaces;
* ``schedule_id``, ``status``: read and ignored (what an export says the post is now);
* ``first_comment``, ``alt_text``: recognised and refused per row (``not_supported``).

Rules (decision "Bulk import"): UTF-8 only (a BOM is accepted and dropped); CRLF or LF; at most
:data:`MAX_IMPORT_ROWS` rows and :data:`MAX_IMPORT_BYTES` bytes; an unknown column is refused.
**Formulas**: a cell the export escaped (``'`` before ``= + - @``) is unescaped
(``post_csv.unescape_cell``); an *unescaped* cell starting with ``=`` or ``@`` (``=cmd|' /C
calc'!A0``, OWASP "CSV Injection") is that row's problem ``formula_cell``: we refuse rather than
guess, since a spreadsheet that wrote it may have meant a formula. ``+``/``-`` starts stay text
("- item", "+1" are ordinary posts).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from scheduled_posts.clock import parse_instant
from scheduled_posts.logic.post_csv import unescape_cell
from scheduled_posts.recurrence import RuleError, resolve_wall_time, zone_for

#: Most rows one import takes (decision "Bulk import"): 1,000 posts is a month of hourly-ish
#: posting.
MAX_IMPORT_ROWS = 1000
#: Largest import file, in bytes (decision "Bulk import": 5 MB; 1,000 rows of the longest posts
#: fit).
MAX_IMPORT_BYTES = 5 * 1024 * 1024
#: Columns read; ``IGNORED`` ones are the export's read-only columns, ``REFUSED`` not supported.
READ_COLUMNS = frozenset(
    {"publish_at", "local_date", "local_time", "timezone", "channels", "content", "media"}
    | {"language"}
)
IGNORED_COLUMNS = frozenset({"schedule_id", "status"})
REFUSED_COLUMNS = frozenset({"first_comment", "alt_text"})
KNOWN_COLUMNS = READ_COLUMNS | IGNORED_COLUMNS | REFUSED_COLUMNS
#: Starts of a cell a spreadsheet runs as a formula or a DDE command; refused unescaped.
REFUSED_STARTS = ("=", "@")

Format = Literal["csv", "jsonl"]


class ImportFileError(ValueError):
    """The file as a whole cannot be read: ``kind`` (``not_utf8``, ``unbalanced_quotes``,
    ``too_many_rows``, ``too_large``, ``unknown_column``, ``missing_column``, ``not_json``,
    ``empty``) and a message naming the line or limit."""

    def __init__(self, kind: str, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.line = line


@dataclass
class ImportRow:
    """One post of the file: ``line`` (1-based), the parsed fields, or ``problems`` (each
    ``{"loc": [column], "msg": str, "type": str}``)."""

    line: int
    publish_at: datetime | None = None
    channels: list[str] = field(default_factory=list)
    content: str = ""
    media_ids: list[str] = field(default_factory=list)
    language: str | None = None
    problems: list[dict[str, Any]] = field(default_factory=list)


def _problem(column: str, msg: str, kind: str) -> dict[str, Any]:
    return {"loc": [column], "msg": msg, "type": kind}


def _decode(data: bytes) -> str:
    if len(data) > MAX_IMPORT_BYTES:
        raise ImportFileError("too_large", f"the file is over {MAX_IMPORT_BYTES} bytes")
    try:
        text = data.decode("utf-8-sig")  # drops one leading BOM
    except UnicodeDecodeError as exc:
        raise ImportFileError(
            "not_utf8", f"the file is not UTF-8 (byte {exc.start}): save it as CSV UTF-8"
        ) from exc
    if not text.strip():
        raise ImportFileError("empty", "the file has no rows")
    return text


def _publish_at(cells: dict[str, str], row: ImportRow) -> None:
    if cells.get("publish_at"):
        try:
            row.publish_at = parse_instant(cells["publish_at"])
        except ValueError as exc:
            row.problems.append(_problem("publish_at", str(exc), "publish_at_invalid"))
        return
    date, time, zone = (cells.get(k, "") for k in ("local_date", "local_time", "timezone"))
    if not (date and time and zone):
        msg = "give publish_at (with an offset) or local_date, local_time and timezone"
        row.problems.append(_problem("publish_at", msg, "missing"))
        return
    try:
        wall = datetime.strptime(f"{date} {time}", "%Y-%m-%d %H:%M")  # noqa: DTZ007 - wall
        row.publish_at = resolve_wall_time(wall, zone_for(zone))
    except RuleError as exc:
        row.problems.append(_problem("timezone", exc.message, exc.kind))
    except ValueError:
        msg = "local_date must be YYYY-MM-DD and local_time HH:MM"
        row.problems.append(_problem("local_date", msg, "local_time_invalid"))


def _cell(column: str, raw: str, row: ImportRow) -> str:
    if raw.startswith(REFUSED_STARTS):
        msg = "starts like a spreadsheet formula: put a ' before it to mean the text"
        row.problems.append(_problem(column, msg, "formula_cell"))
    return unescape_cell(raw)


def row_of_cells(line: int, raw: dict[str, str]) -> ImportRow:
    """The :class:`ImportRow` of one record's ``column -> cell`` (cells as written)."""
    row = ImportRow(line=line)
    cells = {k: _cell(k, v, row) for k, v in raw.items() if k not in IGNORED_COLUMNS and v}
    for column in sorted(REFUSED_COLUMNS & cells.keys()):
        row.problems.append(_problem(column, f"{column} is not supported yet", "not_supported"))
    _publish_at(cells, row)
    row.channels = cells.get("channels", "").split()
    if not row.channels:
        row.problems.append(_problem("channels", "give at least one channel", "missing"))
    row.content = cells.get("content", "")
    row.media_ids = cells.get("media", "").split()
    row.language = cells.get("language") or None
    return row


def _check_header(header: list[str]) -> None:
    unknown = [c for c in header if c not in KNOWN_COLUMNS]
    if unknown:
        raise ImportFileError(
            "unknown_column",
            f"unknown column {unknown[0]!r}: the columns are {', '.join(sorted(KNOWN_COLUMNS))}",
            line=1,
        )
    if "channels" not in header or "content" not in header:
        raise ImportFileError("missing_column", "the header needs channels and content", 1)


def _too_many() -> ImportFileError:
    return ImportFileError("too_many_rows", f"more than {MAX_IMPORT_ROWS} rows: split the file")


def _csv_rows(text: str) -> list[ImportRow]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = [c.strip() for c in next(reader)]
        _check_header(header)
        rows: list[ImportRow] = []
        start = reader.line_num + 1
        for cells in reader:
            if any(cells):
                if len(rows) == MAX_IMPORT_ROWS:
                    raise _too_many()
                rows.append(row_of_cells(start, dict(zip(header, cells, strict=False))))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise ImportFileError(
            "unbalanced_quotes",
            f"line {reader.line_num}: {exc} (a quote is not closed?)",
            line=reader.line_num,
        ) from exc
    return rows


def _json_cells(value: Any) -> dict[str, str]:
    cells: dict[str, str] = {}
    for key, cell in value.items():
        cells[key] = " ".join(map(str, cell)) if isinstance(cell, list) else str(cell or "")
    return cells


def _jsonl_rows(text: str) -> list[ImportRow]:
    rows: list[ImportRow] = []
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ImportFileError("not_json", f"line {line}: {exc.msg}", line=line) from exc
        if not isinstance(value, dict):
            raise ImportFileError("not_json", f"line {line}: not a JSON object", line=line)
        _check_header(list(value))
        if len(rows) == MAX_IMPORT_ROWS:
            raise _too_many()
        rows.append(row_of_cells(line, _json_cells(value)))
    return rows


def read_import(data: bytes, fmt: Format) -> list[ImportRow]:
    """Every row of an import file, in file order.

    Raises
    ------
    ImportFileError
        The file as a whole is unreadable (see the module's rules).
    """
    text = _decode(data)
    rows = _csv_rows(text) if fmt == "csv" else _jsonl_rows(text)
    if not rows:
        raise ImportFileError("empty", "the file has no rows")
    return rows
