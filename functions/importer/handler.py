"""Importer Lambda (SQS event source mapping on the import queue, ``ReportBatchItemFailures``;
decision "Bulk import").

Each record is one :class:`ImportChunkMessage`: 100 rows of one import, run by
``logic/import_runs.run_chunk`` against the import's file (``ImportFiles``). Records run one
after another (Powertools ``BatchProcessor``); a failed record is reported alone and comes back
after its visibility timeout, and its rerun finds the posts it already made (ids derived per
row, conditional creates) and counts the chunk once. The same function consumes the import
DLQ: a chunk that failed ``IMPORT_MAX_RECEIVES`` times marks its import ``failed``
(``logic/import_runs.fail_import``: its rows listed, made or ``not_imported``), so a stuck
import is reported, never left ``running``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.parser.models import SqsRecordModel
from aws_lambda_powertools.utilities.typing import LambdaContext
from botocore.exceptions import ClientError
from pydantic import Json

from scheduled_posts.api_app import ApiDependencies
from scheduled_posts.data.imports import ImportFiles, ImportStore, S3ImportFiles
from scheduled_posts.logic.import_runs import ImportChunk, fail_import, run_chunk
from scheduled_posts.logic.posts import PostDeps
from scheduled_posts.models.imports import ImportChunkMessage
from scheduled_posts.observability import logger
from scheduled_posts.settings import get_settings


class ImportRecord(SqsRecordModel):
    """An SQS record whose body is a JSON :class:`ImportChunkMessage`."""

    body: Json[ImportChunkMessage]  # type: ignore[assignment]


@dataclass(frozen=True)
class ImporterDeps:
    """The importer's collaborators: the post logic's, the import store, the files."""

    posts: PostDeps
    store: ImportStore
    files: ImportFiles
    #: The import DLQ's queue name: a record from it marks its import failed.
    dlq_name: str = ""


@cache
def _default_deps() -> ImporterDeps:
    settings = get_settings()
    api = ApiDependencies(settings=settings)
    return ImporterDeps(
        posts=api.post_deps,
        store=api.imports,
        files=S3ImportFiles(settings.MEDIA_BUCKET_NAME),
        dlq_name=settings.IMPORT_DLQ_URL.rsplit("/", 1)[-1],
    )


def _file(deps: ImporterDeps, message: ImportChunkMessage) -> bytes | None:
    """The import's file for a dead-lettered chunk's report; None when it is gone (the import
    is still marked failed). Any other error raises: the DLQ record comes back."""
    try:
        return deps.files.load(message.owner, message.import_id)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") not in ("NoSuchKey", "404"):
            raise
        logger.warning("import file gone: a dead chunk's rows are not listed")
        return None


def make_lambda_handler(
    deps_factory: Callable[[], ImporterDeps] = _default_deps,
) -> Callable[[dict[str, Any], LambdaContext], dict[str, Any]]:
    """The Lambda entry point over ``deps_factory()`` (tests pass their own)."""

    def record_handler(record: ImportRecord) -> None:
        deps = deps_factory()
        message: ImportChunkMessage = record.body  # type: ignore[assignment]
        chunk = ImportChunk(
            message.owner, message.import_id, message.key, message.format, message.chunk
        )
        if deps.dlq_name and record.eventSourceARN.endswith(f":{deps.dlq_name}"):
            failed = fail_import(
                chunk,
                _file(deps, message),
                deps=deps.posts,
                store=deps.store,
                now=deps.posts.clock.now(),
            )
            logger.warning(
                "import chunk dead-lettered",
                extra={"import_id": message.import_id, "chunk": message.chunk, "marked": failed},
            )
            return
        data = deps.files.load(message.owner, message.import_id)
        done = run_chunk(chunk, data, deps=deps.posts, store=deps.store)
        logger.info(
            "import chunk run",
            extra={
                "import_id": message.import_id,
                "chunk": message.chunk,
                "status": done.status.value if done else None,
            },
        )

    def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        processor = BatchProcessor(event_type=EventType.SQS, model=ImportRecord)
        return dict(
            process_partial_response(
                event=event, record_handler=record_handler, processor=processor, context=context
            )
        )

    return lambda_handler


lambda_handler = make_lambda_handler()
