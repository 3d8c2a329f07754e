"""Bulk imports: ``GET /v1/imports/{import_id}`` (logic: ``logic/import_runs.py``; decision
"Bulk import"). The import's progress and every row's result so far."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from scheduled_posts.api.docs import responses
from scheduled_posts.api.params import Deps, Owner
from scheduled_posts.errors import ImportNotFoundError
from scheduled_posts.models.api import ID_PATTERN
from scheduled_posts.models.imports import ImportOut

router = APIGatewayHttpRouter()

ImportId = Annotated[str, Path(pattern=ID_PATTERN, description="An import id")]


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
