"""The import resource (``GET /v1/imports/{import_id}``; decision "Bulk import")."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer, model_validator

from scheduled_posts.clock import format_instant
from scheduled_posts.models.api import ID_PATTERN
from scheduled_posts.models.media import UploadForm


class ImportStatus(StrEnum):
    """``queued`` (accepted, no row run yet) -> ``running`` -> ``completed`` (every row has a
    result; some may have failed) or ``failed`` (the run stopped: ``error`` says why)."""

    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"


class ImportRowOut(BaseModel):
    """One row's result: its ``line`` and the created post's ``schedule_id``, or ``problems``
    (``{"loc": [column, ...], "msg": str, "type": str}``)."""

    line: int = Field(ge=1)
    schedule_id: str | None = None
    problems: list[dict[str, Any]] = Field(default_factory=list)


class ImportOut(BaseModel):
    """An import: ``status``, row counts (``rows_done`` counts created rows, ``rows_failed``
    rows with problems; the two sum to ``rows_total`` once completed) and per-row ``results``
    (in line order; the rows run so far)."""

    import_id: str
    status: ImportStatus
    format: str
    rows_total: int = Field(ge=0)
    rows_done: int = Field(ge=0)
    rows_failed: int = Field(ge=0)
    created_at: datetime = Field(json_schema_extra={"format": "date-time"})
    updated_at: datetime = Field(json_schema_extra={"format": "date-time"})
    error: str | None = None
    results: list[ImportRowOut] = Field(default_factory=list)

    @field_serializer("created_at", "updated_at")
    def _instant(self, value: datetime) -> str:
        """UTC with milliseconds, as every instant the API answers (``clock.format_instant``)."""
        return format_instant(value)


class ImportCreate(BaseModel):
    """``POST /v1/imports``: the file, either ``content`` inline (UTF-8 text; the API refuses
    bodies over 64 KiB, so about 1,000 short rows at most) or ``upload_id`` (a file sent to the
    form of ``POST /v1/imports/uploads``, up to 5 MB); its ``format``; ``dry_run`` (check
    only: every row's problems, nothing written)."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["csv", "jsonl"] = "csv"
    content: str | None = Field(None, min_length=1, description="The file, as text")
    upload_id: str | None = Field(None, pattern=ID_PATTERN, description="An uploaded file")
    dry_run: bool = False

    @model_validator(mode="after")
    def _one_file(self) -> ImportCreate:
        if (self.content is None) == (self.upload_id is None):
            raise ValueError("give exactly one of content and upload_id")
        return self


class ImportUploadOut(BaseModel):
    """``POST /v1/imports/uploads``: the ``upload_id`` to name in ``POST /v1/imports`` and the
    pre-signed form to send the file to (a ``multipart/form-data`` POST to ``upload.url`` with
    ``upload.fields`` and then the file as field ``file``, at most 5 MB)."""

    upload_id: str
    upload: UploadForm


class ImportCheck(BaseModel):
    """A dry run's answer: ``rows_total``, ``valid`` (no row has a problem) and the
    ``problems`` of each bad row by line (``ImportRowOut``)."""

    rows_total: int = Field(ge=0)
    valid: bool
    problems: list[ImportRowOut] = Field(default_factory=list)


class ImportChunkMessage(BaseModel):
    """The import queue's message: one chunk (``chunk``, 0-based, of 100 rows) of the
    ``owner``'s import ``import_id`` made under idempotency ``key`` from a ``format`` file."""

    owner: str
    import_id: str
    key: str
    format: Literal["csv", "jsonl"]
    chunk: int = Field(ge=0)
