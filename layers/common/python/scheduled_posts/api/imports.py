"""Bulk imports: ``POST /v1/imports`` and ``GET /v1/imports/{import_id}`` (logic:
``logic/import_runs.py``; decision "Bulk import"). A dry run answers every row's problems; a
commit answers the queued import, whose progress and per-row results ``GET`` shows."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from scheduled_posts.api.docs import COMMON, responses
from scheduled_posts.api.params import JSON, Deps, IdempotencyKey, Owner
from scheduled_posts.errors import ImportNotFoundError, ValidationFailedError
from scheduled_posts.logic.import_file import ImportFileError
from scheduled_posts.logic.import_runs import Started, submit_import
from scheduled_posts.models.api import ID_PATTERN
from scheduled_posts.models.imports import ImportCheck, ImportCreate, ImportOut, ImportRowOut

router = APIGatewayHttpRouter()

ImportId = Annotated[str, Path(pattern=ID_PATTERN, description="An import id")]


def _problems(started: Started) -> list[ImportRowOut]:
    return [ImportRowOut(line=r.line, problems=r.problems) for r in started.problems]


def _row_errors(started: Started) -> list[dict[str, object]]:
    """Each bad row's problems as the 422's errors: ``loc`` ``["rows", line, column, ...]``."""
    return [
        {**p, "loc": ["rows", r.line, *(p.get("loc") or [])]}
        for r in started.problems
        for p in r.problems
    ]


@router.post(
    "/v1/imports",
    summary="Import posts from a CSV or JSON Lines file: dry run, or queue it",
    responses={
        **responses(
            ImportOut,
            202,
            "Accepted: GET /v1/imports/{import_id} shows its progress",
            errors=COMMON,
        ),
        **responses(
            ImportCheck, 200, "A dry run: every row's problems, nothing written", errors=()
        ),
    },
)
def create_import(
    body: ImportCreate, owner: Owner, deps: Deps, idempotency_key: IdempotencyKey = None
) -> Response[ImportOut | ImportCheck]:
    """Check the whole file; a dry run answers :class:`ImportCheck` (200, nothing written).
    A commit with any bad row is a 422 naming each (``rows.<line>.<column>``), the file as a
    whole refused a 422 naming ``content`` and the rule; otherwise 202 and the queued import
    (the same import again for the same ``Idempotency-Key``, or without one the same file)."""
    try:
        started = submit_import(
            owner,
            body.content.encode(),
            body.format,
            key=idempotency_key,
            dry_run=body.dry_run,
            deps=deps.post_deps,
            store=deps.imports,
            files=deps.import_files,
            queue=deps.import_queue,
        )
    except ImportFileError as exc:
        loc = ["body", "content"] + ([f"line {exc.line}"] if exc.line else [])
        raise ValidationFailedError(
            "the file cannot be imported", [{"loc": loc, "msg": exc.message, "type": exc.kind}]
        ) from exc
    if body.dry_run:
        check = ImportCheck(
            rows_total=len(started.checked), valid=not started.problems, problems=_problems(started)
        )
        return Response(status_code=200, content_type=JSON, body=check)
    if started.import_id is None:
        raise ValidationFailedError(
            f"{len(started.problems)} row(s) have problems; nothing was imported",
            _row_errors(started),
        )
    found = deps.imports.get(owner, started.import_id)
    if found is None:  # erased between the write and this read
        raise ImportNotFoundError(f"no import {started.import_id}")
    return Response(status_code=202, content_type=JSON, body=found)


@router.get(
    "/v1/imports/<import_id>",
    summary="An import's progress: status, rows done and failed, each row's post or problems",
    responses=responses(ImportOut),
)
def get_import(import_id: ImportId, owner: Owner, deps: Deps) -> ImportOut:
    """The caller's import (404 ``ImportNotFoundError`` for an unknown or another's id)."""
    found = deps.imports.get(owner, import_id)
    if found is None:
        raise ImportNotFoundError(f"no import {import_id}")
    return found
