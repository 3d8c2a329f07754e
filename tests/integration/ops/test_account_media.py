"""Account export and erasure of media (moto): the export lists the caller's uploads with a
short-lived link to each ready one; the erasure deletes their items and objects, and nobody
else's."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import boto3

from scheduled_posts import keys
from scheduled_posts.buckets import MEDIA_BUCKET
from scheduled_posts.data.imports import import_object_key
from tests.integration.dispatch.conftest import FirePath
from tests.support.api import ApiClient


def _media_world(fire: FirePath) -> Any:
    """Alice: a ready image and a pending upload, each with its object; Bob: a ready image."""
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket=fire.settings.MEDIA_BUCKET_NAME)
    table = boto3.resource("dynamodb", region_name="us-east-1").Table(
        fire.settings.POSTS_TABLE_NAME
    )
    for owner, media_id, status in (
        ("alice", "med-ready", "ready"),
        ("alice", "med-pending", "pending"),
        ("bob", "med-bob", "ready"),
    ):
        table.put_item(
            Item={
                "pk": keys.owner_pk(owner),
                "sk": f"MEDIA#{media_id}",
                "media_id": media_id,
                "owner": owner,
                "status": status,
                "content_type": "image/png",
                "size": 1234,
                "sha256": "ab" * 32,
                "width": 640,
                "height": 480,
                "alt_text": "a red square",
                "created_at": "2026-11-29T12:00:00.000Z",
            }
        )
        s3.put_object(
            Bucket=fire.settings.MEDIA_BUCKET_NAME,
            Key=MEDIA_BUCKET.object_key(media_id),
            Body=b"\x89PNG...",
        )
    return s3


def _objects(s3: Any, bucket: str) -> list[str]:
    return sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", []))


def test_export_account_lists_media_with_a_link_to_each_ready_upload(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    _media_world(fire)

    document = ApiClient("alice").get("/v1/me/export").json

    media = {m["media_id"]: m for m in document["media"]}
    assert sorted(media) == ["med-pending", "med-ready"]
    ready = media["med-ready"]
    assert (ready["size"], ready["width"], ready["alt_text"]) == (1234, 640, "a red square")
    link = urlsplit(ready["download_url"])
    assert link.path.endswith(f"/{MEDIA_BUCKET.object_key('med-ready')}")
    assert fire.settings.MEDIA_BUCKET_NAME in link.netloc + link.path
    assert parse_qs(link.query)["X-Amz-Expires"] == ["900"]
    assert media["med-pending"]["download_url"] is None


def test_erase_account_deletes_the_media_items_and_objects_of_the_caller_only(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    s3 = _media_world(fire)
    bucket = fire.settings.MEDIA_BUCKET_NAME

    answer = ApiClient("alice").delete("/v1/me")

    assert (answer.status, answer.json) == (202, {"status": "done"})
    assert _objects(s3, bucket) == [MEDIA_BUCKET.object_key("med-bob")]
    table = boto3.resource("dynamodb", region_name="us-east-1").Table(
        fire.settings.POSTS_TABLE_NAME
    )
    left = [i["sk"] for i in table.scan()["Items"] if str(i["sk"]).startswith("MEDIA#")]
    assert left == ["MEDIA#med-bob"]
    assert ApiClient("bob").get("/v1/me/export").json["media"][0]["media_id"] == "med-bob"


def test_erase_account_deletes_the_callers_import_files_only(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    s3 = _media_world(fire)
    bucket = fire.settings.MEDIA_BUCKET_NAME
    table = boto3.resource("dynamodb", region_name="us-east-1").Table(
        fire.settings.POSTS_TABLE_NAME
    )
    for owner, import_id in (("alice", "imp-a"), ("bob", "imp-b")):
        table.put_item(Item={"pk": keys.owner_pk(owner), "sk": f"IMPORT#{import_id}"})
        table.put_item(Item={"pk": keys.owner_pk(owner), "sk": f"IMPORT#{import_id}#ROWS#0000"})
        s3.put_object(Bucket=bucket, Key=import_object_key(owner, import_id), Body=b"a,b\r\n")

    answer = ApiClient("alice").delete("/v1/me")

    assert (answer.status, answer.json) == (202, {"status": "done"})
    assert _objects(s3, bucket) == sorted(
        [import_object_key("bob", "imp-b"), MEDIA_BUCKET.object_key("med-bob")]
    )
