"""Bulk imports: ``POST /v1/imports/uploads``, ``POST /v1/imports`` and
``GET /v1/imports/{import_id}`` (logic:
``logic/import_runs.py``; decision "Bulk import"). A dry run answers every row's problems; a
commit answers the queued import, whose progress and per-row results ``GET`` shows."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from scheduled_posts.api.docs import COMMON, responses
from scheduled_posts.api.params import JSON, Deps, IdempotencyKey, Owner
from scheduled_posts.api_app import ApiDependencies
from scheduled_posts.clock import format_instant
from scheduled_posts.errors import ImportNotFoundError, ValidationFailedError
from scheduled_posts.logic.import_file import MAX_IMPORT_BYTES, ImportFileError
from scheduled_posts.logic.import_runs import ImportKeyReusedError, Started, submit_import
from scheduled_posts.models.api import ID_PATTERN
from scheduled_posts.models.imports import (
    ImportCheck,
    ImportCreate,
    ImportOut,
    ImportRowOut,
    ImportUploadOut,
)
from scheduled_posts.models.media import UploadForm

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


def _file(body: ImportCreate, owner: str, deps: ApiDependencies) -> bytes:
    """The file's bytes: inline, or the upload (a 422 naming ``upload_id`` when none)."""
    if body.content is not None:
        return body.content.encode()
    found = deps.import_files.load_upload(owner, str(body.upload_id))
    if found is None:
        raise ValidationFailedError(
            "nothing was uploaded for this upload_id",
            [{"loc": ["body", "upload_id"], "msg": "no uploaded file", "type": "not_uploaded"}],
        )
    return found


@router.post(
    "/v1/imports/uploads",
    summary="Get a pre-signed form to upload an import file of up to 5 MB",
    responses=responses(ImportUploadOut, 201, "Created: post the file to upload.url"),
)
def create_import_upload(owner: Owner, deps: Deps) -> Response[ImportUploadOut]:
    """A new ``upload_id`` and its form (valid ``MEDIA_UPLOAD_EXPIRES_SECONDS``); then
    ``POST /v1/imports {"upload_id", ...}``."""
    upload_id = str(uuid.uuid4())
    expires = deps.settings.MEDIA_UPLOAD_EXPIRES_SECONDS
    form = deps.import_files.presign_upload(
        owner, upload_id, max_bytes=MAX_IMPORT_BYTES, expires_seconds=expires
    )
    expires_at = format_instant(deps.clock.now() + timedelta(seconds=expires))
    out = ImportUploadOut(upload_id=upload_id, upload=UploadForm(**form, expires_at=expires_at))
    return Response(status_code=201, content_type=JSON, body=out)


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
    data = _file(body, owner, deps)
    try:
        started = submit_import(
            owner,
            data,
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
    except ImportKeyReusedError as exc:  # the shape of the API's other reused keys (problems.py)
        raise ValidationFailedError(
            f"Idempotency-Key {exc.key!r} was already used with a different file",
            [
                {
                    "loc": ["header", "Idempotency-Key"],
                    "msg": f"{exc.key!r} already names an import of another file",
                    "type": "idempotency_key_reused",
                }
            ],
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
