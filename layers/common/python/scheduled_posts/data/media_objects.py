"""The media bucket's objects: pre-signed uploads, reads, download links, deletes.

Bytes live at S3 key ``media/<media_id>`` in ``MEDIA_BUCKET_NAME``, sent by the client with a
pre-signed POST policy (:meth:`S3MediaObjects.presign_upload`); their items in the posts table
are ``data/media.py``'s.
"""

from __future__ import annotations

import threading
from functools import cache
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from scheduled_posts.buckets import MEDIA_BUCKET
from scheduled_posts.data.aws import BOTO_CONFIG
from scheduled_posts.data.dynamo import error_code
from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.platforms.base import PublishedMedia

_CREATING = threading.Lock()


@cache
def s3_client() -> Any:
    """The process's S3 client (``data/aws.py``'s botocore config)."""
    with _CREATING:
        # SigV4 for the pre-signed POST forms and GET links (S3 accepts SigV2 in few regions)
        return boto3.client("s3", config=BOTO_CONFIG.merge(Config(signature_version="s3v4")))


class S3MediaObjects:
    """The media bucket's objects: implements ``platforms.base.MediaObjects`` (``read``,
    ``download_url``) and the API's ``presign_upload``, ``head``, ``read_key``, ``delete``.
    ``client`` is a boto3 S3 client (default: the process's, created lazily)."""

    def __init__(self, bucket: str, client: Any | None = None) -> None:
        self.bucket = bucket
        self._client = client

    @property
    def client(self) -> Any:
        return self._client or s3_client()

    def presign_upload(
        self, key: str, content_type: str, size: int, expires_seconds: int
    ) -> dict[str, Any]:
        """A pre-signed POST policy for ``key``: ``{"url", "fields"}`` (S3 API Reference,
        "Browser-Based Uploads Using POST"; boto3 ``generate_presigned_post``). Its conditions
        (``buckets.MEDIA_BUCKET.upload_policy``) make S3 refuse any other file:
        ``content-length-range`` exactly ``[size, size]``, ``Content-Type`` equal to
        ``content_type``, and the pending tag the lifecycle expires after a day; the key and
        bucket are fixed by boto3."""
        fields, conditions = MEDIA_BUCKET.upload_policy(content_type, size)
        return dict(
            self.client.generate_presigned_post(
                Bucket=self.bucket,
                Key=key,
                Fields=fields,
                Conditions=conditions,
                ExpiresIn=expires_seconds,
            )
        )

    def keep(self, key: str) -> bool:
        """Remove the pending tag of ``key`` (``DeleteObjectTagging``, idempotent), so the
        lifecycle rule no longer expires it (an upload a post names); False when no object is
        there (404: the rule removed it, or it was never uploaded). Raises botocore's other
        errors as they are."""
        try:
            self.client.delete_object_tagging(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if error_code(exc) in ("404", "NoSuchKey", "NotFound"):
                return False
            raise
        return True

    def head(self, key: str) -> dict[str, Any] | None:
        """``HeadObject`` of ``key`` (``ContentLength``, ``ContentType``...), ``None`` when no
        object is there (404)."""
        try:
            return dict(self.client.head_object(Bucket=self.bucket, Key=key))
        except ClientError as exc:
            if error_code(exc) in ("404", "NoSuchKey", "NotFound"):
                return None
            raise

    def read_key(self, key: str) -> bytes:
        """The bytes of ``key`` (``GetObject``; botocore's errors are raised as they are)."""
        return bytes(self.client.get_object(Bucket=self.bucket, Key=key)["Body"].read())

    def read(self, media: PublishedMedia) -> bytes:
        """The bytes of a ready upload, for the adapters.

        Raises
        ------
        RetryableDeliveryError
            When S3 cannot answer now (any ``ClientError`` or connection error).
        """
        try:
            return self.read_key(media.object_key)
        except (ClientError, BotoCoreError) as exc:
            raise RetryableDeliveryError(f"the media bucket did not answer: {exc}") from exc

    def download_url(self, media: PublishedMedia, *, expires_seconds: int) -> str:
        """A pre-signed ``GET`` URL of the upload's bytes valid ``expires_seconds``."""
        return str(
            self.client.generate_presigned_url(
                "get_object",
                Params={"Bucket": self.bucket, "Key": media.object_key},
                ExpiresIn=expires_seconds,
            )
        )

    def delete(self, key: str) -> None:
        """Delete ``key`` (S3 answers 204 whether or not it existed)."""
        self.client.delete_object(Bucket=self.bucket, Key=key)
