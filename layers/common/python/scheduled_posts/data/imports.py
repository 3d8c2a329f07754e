"""DynamoDB access for imports (``logic/imports.py``; ``docs/data-model.md``).

Items on the posts table, in the owner's partition (erasure deletes it whole):

* ``pk = OWNER#<sub>``, ``sk = IMPORT#<import_id>``: ``status``, ``format``, ``rows_total``,
  ``rows_done``, ``rows_failed``, ``chunks_done`` (a number set), ``created_at``,
  ``updated_at``, ``error``, ``owner``, ``import_id``, ``file_sha256`` (the committed file's
  SHA-256, hex: a reused ``Idempotency-Key`` with another file is refused);
* ``pk = OWNER#<sub>``, ``sk = IMPORT#<import_id>#ROWS#<chunk, 4 digits>``: ``results`` of one
  chunk of :data:`CHUNK_ROWS` rows (a record of 1,000 results could pass DynamoDB's 400 KB
  item limit when rows carry problems; a chunk of 100 cannot).

A chunk's results and its counts are written in one transaction conditional on the chunk not
being in ``chunks_done``, so a redelivered chunk counts once.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from boto3.dynamodb.conditions import Key
from botocore.exceptions import ClientError

from scheduled_posts import keys
from scheduled_posts.buckets import IMPORT_PREFIX
from scheduled_posts.clock import format_instant, instant_from_storage
from scheduled_posts.data.aws import dynamodb_resource
from scheduled_posts.data.dynamo import is_condition_failure
from scheduled_posts.data.media_objects import s3_client
from scheduled_posts.lifecycle.import_events import IMPORT_SK_PREFIX
from scheduled_posts.models.imports import ImportOut, ImportRowOut, ImportStatus

#: Rows per importer chunk (one SQS message, one result item).
CHUNK_ROWS = 100


def import_sk(import_id: str) -> str:
    """The sort key of the import record."""
    return f"{IMPORT_SK_PREFIX}{import_id}"


def _chunk_sk(import_id: str, chunk: int) -> str:
    return f"{import_sk(import_id)}#ROWS#{chunk:04d}"


def _out(item: dict[str, Any], results: list[ImportRowOut]) -> ImportOut:
    return ImportOut(
        import_id=str(item["import_id"]),
        status=ImportStatus(str(item["status"])),
        format=str(item["format"]),
        rows_total=int(item["rows_total"]),
        rows_done=int(item.get("rows_done", 0)),
        rows_failed=int(item.get("rows_failed", 0)),
        created_at=instant_from_storage(str(item["created_at"])),
        updated_at=instant_from_storage(str(item["updated_at"])),
        error=item.get("error"),
        results=results,
    )


class ImportStore:
    """Import records and their chunk results on the posts table."""

    def __init__(self, posts_table_name: str, *, dynamodb: Any | None = None) -> None:
        self.table_name = posts_table_name
        self._dynamodb = dynamodb

    @property
    def _table(self) -> Any:
        return (self._dynamodb or dynamodb_resource()).Table(self.table_name)

    def put_new(
        self, owner: str, import_id: str, *, fmt: str, rows: int, file_sha256: str, now: datetime
    ) -> bool:
        """Write a ``queued`` import of the file whose SHA-256 (hex) is ``file_sha256``; False
        when it exists already (a retried request)."""
        stamp = format_instant(now)
        item = {
            "pk": keys.owner_pk(owner),
            "sk": import_sk(import_id),
            "owner": owner,
            "import_id": import_id,
            "status": ImportStatus.QUEUED.value,
            "format": fmt,
            "rows_total": rows,
            "file_sha256": file_sha256,
            "rows_done": 0,
            "rows_failed": 0,
            "created_at": stamp,
            "updated_at": stamp,
        }
        try:
            self._table.put_item(Item=item, ConditionExpression="attribute_not_exists(pk)")
        except ClientError as exc:
            if is_condition_failure(exc):
                return False
            raise
        return True

    def file_sha256(self, owner: str, import_id: str) -> str | None:
        """The SHA-256 (hex) of the file the import was committed with; None for an unknown
        import or one recorded before the digest was kept."""
        item = self._table.get_item(
            Key={"pk": keys.owner_pk(owner), "sk": import_sk(import_id)},
            ProjectionExpression="file_sha256",
            ConsistentRead=True,
        ).get("Item")
        return None if item is None or "file_sha256" not in item else str(item["file_sha256"])

    def get(self, owner: str, import_id: str) -> ImportOut | None:
        """The import with its results so far, or None (unknown, or another owner's)."""
        found = self._table.query(
            KeyConditionExpression=Key("pk").eq(keys.owner_pk(owner))
            & Key("sk").begins_with(import_sk(import_id)),
            ConsistentRead=True,
        )["Items"]
        record = next((i for i in found if i["sk"] == import_sk(import_id)), None)
        if record is None:
            return None
        results = [
            ImportRowOut.model_validate(r)
            for item in sorted(found, key=lambda i: str(i["sk"]))
            if item is not record
            for r in item.get("results", [])
        ]
        return _out(record, results)

    def record_chunk(
        self,
        owner: str,
        import_id: str,
        chunk: int,
        results: list[ImportRowOut],
        *,
        now: datetime,
        running: bool = True,
    ) -> bool:
        """Store one chunk's results and add its counts, marking the import ``running`` unless
        ``running`` is False (a dead chunk's report: the import's status is the DLQ mapping's
        ``finish`` to write, and a second dead chunk never reopens a failed import); False when
        the chunk was recorded already (a redelivery: nothing changes)."""
        failed = sum(1 for r in results if r.problems)
        client = self._table.meta.client
        key = {"pk": keys.owner_pk(owner), "sk": import_sk(import_id)}
        update: dict[str, Any] = {
            "TableName": self.table_name,
            "Key": key,
            "UpdateExpression": "ADD rows_done :d, rows_failed :f, chunks_done :c"
            " SET updated_at = :now",
            "ConditionExpression": "attribute_exists(pk) AND "
            "(attribute_not_exists(chunks_done) OR NOT contains(chunks_done, :n))",
            "ExpressionAttributeValues": {
                ":d": len(results) - failed,
                ":f": failed,
                ":c": {chunk},
                ":n": chunk,
                ":now": format_instant(now),
            },
        }
        if running:
            update["UpdateExpression"] += ", #s = :running"
            update["ExpressionAttributeNames"] = {"#s": "status"}
            update["ExpressionAttributeValues"][":running"] = ImportStatus.RUNNING.value
        try:
            client.transact_write_items(
                TransactItems=[
                    {"Update": update},
                    {
                        "Put": {
                            "TableName": self.table_name,
                            "Item": {
                                "pk": key["pk"],
                                "sk": _chunk_sk(import_id, chunk),
                                "results": [r.model_dump(exclude_none=True) for r in results],
                            },
                        }
                    },
                ]
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return False
            raise
        return True

    def finish(
        self,
        owner: str,
        import_id: str,
        status: ImportStatus,
        *,
        now: datetime,
        error: str | None = None,
    ) -> bool:
        """Move a queued or running import to ``status`` (completed or failed) once; False
        when it had finished already."""
        names = {"#s": "status"}
        values: dict[str, Any] = {
            ":new": status.value,
            ":now": format_instant(now),
            ":queued": ImportStatus.QUEUED.value,
            ":running": ImportStatus.RUNNING.value,
        }
        update = "SET #s = :new, updated_at = :now"
        if error is not None:
            update += ", #e = :error"
            names["#e"] = "error"
            values[":error"] = error
        try:
            self._table.update_item(
                Key={"pk": keys.owner_pk(owner), "sk": import_sk(import_id)},
                UpdateExpression=update,
                ConditionExpression="#s IN (:queued, :running)",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return False
            raise
        return True


def import_object_key(owner: str, import_id: str) -> str:
    """The S3 key of an import's file: ``imports/<owner>/<import_id>`` (the media bucket)."""
    return f"{IMPORT_PREFIX}{owner}/{import_id}"


def import_upload_key(owner: str, upload_id: str) -> str:
    """The S3 key of a file uploaded for an import: ``imports/<owner>/uploads/<upload_id>``."""
    return f"{IMPORT_PREFIX}{owner}/uploads/{upload_id}"


class ImportFiles(Protocol):
    """Where an import's file is kept while it runs."""

    def load(self, owner: str, import_id: str) -> bytes:
        """The file's bytes."""
        ...

    def save(self, owner: str, import_id: str, data: bytes) -> None:
        """Keep the file's bytes for the importer."""
        ...


class S3ImportFiles:
    """Import files in the media bucket under ``imports/`` (decision "Bulk import")."""

    def __init__(self, bucket: str, client: Any | None = None) -> None:
        self.bucket = bucket
        self._client = client

    def load(self, owner: str, import_id: str) -> bytes:
        """The file's bytes (one ``GetObject``)."""
        client = self._client or s3_client()
        answer = client.get_object(Bucket=self.bucket, Key=import_object_key(owner, import_id))
        return bytes(answer["Body"].read())

    def save(self, owner: str, import_id: str, data: bytes) -> None:
        """Store the file (one ``PutObject``; the same key and bytes again change nothing)."""
        client = self._client or s3_client()
        client.put_object(Bucket=self.bucket, Key=import_object_key(owner, import_id), Body=data)

    def presign_upload(
        self, owner: str, upload_id: str, *, max_bytes: int, expires_seconds: int
    ) -> dict[str, Any]:
        """A pre-signed POST policy for :func:`import_upload_key`: ``{"url", "fields"}``, the
        file at most ``max_bytes`` (``content-length-range``; S3 API Reference, "Creating a
        POST policy"). moto does not check the range: the import's own 5 MB check does."""
        client = self._client or s3_client()
        return dict(
            client.generate_presigned_post(
                Bucket=self.bucket,
                Key=import_upload_key(owner, upload_id),
                Conditions=[["content-length-range", 1, max_bytes]],
                ExpiresIn=expires_seconds,
            )
        )

    def load_upload(self, owner: str, upload_id: str) -> bytes | None:
        """The uploaded file's bytes, or None when nothing was uploaded under that id."""
        client = self._client or s3_client()
        try:
            answer = client.get_object(Bucket=self.bucket, Key=import_upload_key(owner, upload_id))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise
        return bytes(answer["Body"].read())
