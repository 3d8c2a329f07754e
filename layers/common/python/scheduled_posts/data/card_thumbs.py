"""The bytes of a link card's thumb in the media bucket (decision "Bluesky link cards, frozen
at scheduling time"): stored like an upload's (``media/<media_id>``, tagged pending until
``logic.media_attach.attach_media`` keeps it), so the media lifecycle, the probe and the
adapters treat a fetched thumb exactly as an uploaded image."""

from __future__ import annotations

from scheduled_posts.buckets import MEDIA_BUCKET
from scheduled_posts.data.media_objects import S3MediaObjects


def put_thumb(objects: S3MediaObjects, key: str, data: bytes, content_type: str) -> None:
    """``PutObject`` of ``data`` at ``key`` with ``content_type`` and the pending tag
    (``buckets.MEDIA_BUCKET.pending_tag``); botocore's errors are raised as they are."""
    tag_key, tag_value = MEDIA_BUCKET.pending_tag
    objects.client.put_object(
        Bucket=objects.bucket,
        Key=key,
        Body=data,
        ContentType=content_type,
        Tagging=f"{tag_key}={tag_value}",
    )
