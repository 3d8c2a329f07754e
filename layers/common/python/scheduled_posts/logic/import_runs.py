"""An import's life: accept a file (or dry-run it), then run it a chunk at a time.

:func:`start_import` reads and checks the whole file (``logic/import_file.py``,
``logic/imports.py``). A dry run, or a file with any problem, answers every row's problems and
writes nothing. Otherwise it writes the ``queued`` import record (its id derived from the owner
and the idempotency key, so a retried request finds the same import) and answers the chunks
the background importer runs. :func:`run_chunk` is one importer step: it re-checks and creates
one chunk's rows (ids derived per row, creates conditional), records the chunk once and
finishes the import after its last chunk. A crash anywhere re-runs the chunk: the rows it made
are found again and the chunk is counted once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from scheduled_posts.data.imports import CHUNK_ROWS
from scheduled_posts.logic.import_file import Format, ImportRow, read_import
from scheduled_posts.logic.imports import (
    RowResult,
    check_rows,
    file_key,
    import_id,
    import_rows,
    row_schedule_id,
)
from scheduled_posts.logic.posts import PostDeps
from scheduled_posts.models.imports import (
    ImportChunkMessage,
    ImportOut,
    ImportRowOut,
    ImportStatus,
)


class ImportRepository(Protocol):
    """What the import logic needs of ``data/imports.py`` ``ImportStore``."""

    def put_new(
        self, owner: str, import_id: str, *, fmt: str, rows: int, file_sha256: str, now: datetime
    ) -> bool: ...
    def file_sha256(self, owner: str, import_id: str) -> str | None: ...
    def get(self, owner: str, import_id: str) -> ImportOut | None: ...
    def record_chunk(
        self,
        owner: str,
        import_id: str,
        chunk: int,
        results: list[ImportRowOut],
        *,
        now: datetime,
        running: bool = True,
    ) -> bool: ...
    def finish(
        self,
        owner: str,
        import_id: str,
        status: ImportStatus,
        *,
        now: datetime,
        error: str | None = None,
    ) -> bool: ...


class ImportKeyReusedError(Exception):
    """An ``Idempotency-Key`` already names an import of another file (``key``); nothing was
    written (decision "Bulk import": a reused key with another file is a 422)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"Idempotency-Key {key!r} was already used with a different file")
        self.key = key


class ImportFileStore(Protocol):
    """Where a committed import's file waits for the importer (``data/imports.py``)."""

    def save(self, owner: str, import_id: str, data: bytes) -> None: ...


class ChunkQueue(Protocol):
    """The import queue (``data/import_queue.py``)."""

    def send(self, messages: Sequence[ImportChunkMessage]) -> None: ...


@dataclass(frozen=True)
class ImportChunk:
    """One importer step (one SQS message): which import, its key and format, which chunk."""

    owner: str
    import_id: str
    key: str
    format: Format
    chunk: int


@dataclass(frozen=True)
class Started:
    """:func:`start_import`'s answer: the rows' check (every row, in order), and, for a
    committed import, its id and the chunks to run (empty when a retry found it started)."""

    checked: list[RowResult]
    import_id: str | None = None
    chunks: tuple[ImportChunk, ...] = ()

    @property
    def problems(self) -> list[RowResult]:
        """The rows with problems."""
        return [row for row in self.checked if row.problems]


def _out(results: list[RowResult]) -> list[ImportRowOut]:
    return [
        ImportRowOut(line=r.line, schedule_id=r.schedule_id, problems=r.problems) for r in results
    ]


def start_import(
    owner: str,
    data: bytes,
    fmt: Format,
    *,
    key: str | None,
    dry_run: bool,
    deps: PostDeps,
    store: ImportRepository,
) -> Started:
    """Check ``data``; unless ``dry_run`` or a row has problems, record the import (``key``
    defaults to the file's SHA-256) and return its chunks.

    Raises
    ------
    ImportFileError
        The file cannot be read as a whole.
    ImportKeyReusedError
        ``key`` names an import of another file (nothing is written).
    """
    rows = read_import(data, fmt)
    checked = check_rows(owner, rows, deps=deps)
    key = key or file_key(data)
    found = import_id(owner, key)
    if store.get(owner, found) is None:  # a retry's own posts never count against it
        _over_limit(owner, checked, deps)
    if dry_run or any(row.problems for row in checked):
        return Started(checked=checked)
    digest = file_key(data).removeprefix("sha256:")
    if not store.put_new(
        owner, found, fmt=fmt, rows=len(rows), file_sha256=digest, now=deps.clock.now()
    ):
        if store.file_sha256(owner, found) not in (None, digest):
            raise ImportKeyReusedError(key)
        current = store.get(owner, found)
        # A retry of a request that crashed between its record and its queue sends the chunks
        # again (a chunk is idempotent); one whose import runs or ran already sends nothing.
        if current is None or current.status is not ImportStatus.QUEUED:
            return Started(checked=checked, import_id=found)
    count = -(-len(rows) // CHUNK_ROWS)
    chunks = tuple(ImportChunk(owner, found, key, fmt, n) for n in range(count))
    return Started(checked=checked, import_id=found, chunks=chunks)


def _over_limit(owner: str, checked: list[RowResult], deps: PostDeps) -> None:
    """Mark the good rows past the owner's room under ``MAX_PENDING_POSTS`` (in line order)
    with the problem ``limit_exceeded``, so a dry run says so and a commit is refused whole,
    rather than accepted with every such row failing in the background. One read (the
    pending counter); the importer's creates still enforce the limit (a create racing the
    import may take the room meanwhile)."""
    limit = deps.settings.MAX_PENDING_POSTS
    room = limit - deps.posts.pending_count(owner)
    good = [row for row in checked if not row.problems]
    for row in good[max(room, 0) :]:
        row.problems = [
            {
                "loc": [],
                "msg": f"over MAX_PENDING_POSTS ({limit}): you have room for {max(room, 0)} "
                f"more scheduled posts and the file has {len(good)}",
                "type": "limit_exceeded",
            }
        ]
        row.request = None


def submit_import(
    owner: str,
    data: bytes,
    fmt: Format,
    *,
    key: str | None,
    dry_run: bool,
    deps: PostDeps,
    store: ImportRepository,
    files: ImportFileStore,
    queue: ChunkQueue,
) -> Started:
    """:func:`start_import`, then, for a started import, keep the file for the importer and
    queue one message per chunk (file first: a queued chunk always finds its file).

    Raises
    ------
    ImportFileError
        The file cannot be read as a whole.
    ImportKeyReusedError
        ``key`` names an import of another file (nothing is written or queued).
    QueueSendError
        SQS refused a chunk (a retry of the request sends the chunks again).
    """
    started = start_import(owner, data, fmt, key=key, dry_run=dry_run, deps=deps, store=store)
    if started.import_id is not None and started.chunks:
        files.save(owner, started.import_id, data)
        queue.send(
            [
                ImportChunkMessage(
                    owner=c.owner, import_id=c.import_id, key=c.key, format=c.format, chunk=c.chunk
                )
                for c in started.chunks
            ]
        )
    return started


def run_chunk(
    chunk: ImportChunk, data: bytes, *, deps: PostDeps, store: ImportRepository
) -> ImportOut | None:
    """Create the rows of ``chunk`` of the import's file ``data``, record them, and finish the
    import when every row has a result; returns the import afterwards (None: it is gone).

    A chunk of an import already ``failed`` or ``completed`` (a duplicate message run after the
    DLQ mapping reported the import, or a redelivery) creates nothing: the failed import's
    report stays true (a row it calls ``not_imported`` never gets a post behind it)."""
    current = store.get(chunk.owner, chunk.import_id)
    if current is None or current.status in (ImportStatus.FAILED, ImportStatus.COMPLETED):
        return current
    rows = read_import(data, chunk.format)
    part = rows[chunk.chunk * CHUNK_ROWS : (chunk.chunk + 1) * CHUNK_ROWS]
    # A row an earlier try of this chunk made is done, whatever the check would say now (its
    # publish_at may have passed since, or its channel gone): only the others are checked.
    made = _made(chunk, part, deps)
    checked = check_rows(chunk.owner, [r for r in part if r.line not in made], deps=deps)
    results = import_rows(chunk.owner, chunk.key, checked, deps=deps)
    results += [RowResult(line=line, schedule_id=sid) for line, sid in made.items()]
    results.sort(key=lambda r: r.line)
    now = deps.clock.now()
    store.record_chunk(chunk.owner, chunk.import_id, chunk.chunk, _out(results), now=now)
    current = store.get(chunk.owner, chunk.import_id)
    if current is not None and current.rows_done + current.rows_failed >= current.rows_total:
        store.finish(chunk.owner, chunk.import_id, ImportStatus.COMPLETED, now=now)
        current = store.get(chunk.owner, chunk.import_id)
    return current


def fail_import(
    chunk: ImportChunk,
    data: bytes | None,
    *,
    deps: PostDeps,
    store: ImportRepository,
    now: datetime,
) -> bool:
    """A chunk reached the import queue's DLQ (it failed ``IMPORT_MAX_RECEIVES`` times): record
    the chunk's rows as they are and mark the import ``failed`` with an ``error`` naming them
    (its ``import.failed`` event follows from the write). False when the import had finished
    already (a late duplicate).

    The runs that failed may have made some of the chunk's posts (ids derived per row): each
    row whose post exists is in the results under its id, like a completed row; every other row
    gets the problem ``not_imported``, so the report tells exactly which rows to import again
    and none is scheduled without the creator seeing it. ``data`` is the import's file (None
    when it cannot be read: then only the error is written)."""
    first = chunk.chunk * CHUNK_ROWS + 1
    last = first + CHUNK_ROWS - 1
    if data is not None:
        rows = read_import(data, chunk.format)[first - 1 : last]
        last = first + len(rows) - 1
        found = _found(chunk, rows, deps)
        store.record_chunk(chunk.owner, chunk.import_id, chunk.chunk, found, now=now, running=False)
    error = (
        f"chunk {chunk.chunk} (rows {first}-{last} of the file) could not be run; its rows"
        " marked not_imported have no post: import them again"
    )
    return store.finish(chunk.owner, chunk.import_id, ImportStatus.FAILED, now=now, error=error)


def _found(chunk: ImportChunk, rows: Sequence[ImportRow], deps: PostDeps) -> list[ImportRowOut]:
    """Each row of a dead chunk: its post's id when a failed run made it, else ``not_imported``."""
    made = _made(chunk, rows, deps)
    problem = {
        "loc": [],
        "msg": "not imported: its chunk could not be run",
        "type": "not_imported",
    }
    return [
        ImportRowOut(line=row.line, schedule_id=made[row.line])
        if row.line in made
        else ImportRowOut(line=row.line, problems=[problem])
        for row in rows
    ]


def _made(chunk: ImportChunk, rows: Sequence[ImportRow], deps: PostDeps) -> dict[int, str]:
    """``{line: schedule_id}`` of the rows whose post an earlier try made (found by the row's
    derived id; one ``BatchGetItem`` per 100 rows)."""
    ids = {row.line: row_schedule_id(chunk.owner, chunk.key, row.line) for row in rows}
    owners = deps.posts.owners_of(list(ids.values()))
    return {line: sid for line, sid in ids.items() if owners.get(sid) == chunk.owner}
