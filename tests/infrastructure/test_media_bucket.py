"""The media bucket (infra/media.py): private, encrypted, TLS only, CORS, lifecycle, grants."""

from __future__ import annotations

import json
from typing import Any

import pytest

from scheduled_posts.buckets import (
    IMPORT_FILE_EXPIRATION_DAYS,
    IMPORT_OBJECTS_PATTERN,
    MEDIA_BUCKET,
)
from scheduled_posts.tables import IMPORT_DLQ
from tests.infrastructure.conftest import Synthesized


def _bucket(stage: Synthesized) -> dict[str, Any]:
    props: dict[str, Any] = stage.resources[MEDIA_BUCKET.logical_id]["Properties"]
    return props


def _role_statements(stage: Synthesized, function: Any) -> list[dict[str, Any]]:
    role = stage.resources[stage.logical_id(function)]["Properties"]["Role"]["Fn::GetAtt"][0]
    statements: list[dict[str, Any]] = []
    for policy in stage.of_type("AWS::IAM::Policy").values():
        if {"Ref": role} in policy["Properties"]["Roles"]:
            statements += policy["Properties"]["PolicyDocument"]["Statement"]
    return statements


def _media_statements(stage: Synthesized, function: Any) -> list[dict[str, Any]]:
    return [
        s
        for s in _role_statements(stage, function)
        if MEDIA_BUCKET.logical_id in json.dumps(s.get("Resource"))
        # The import files' grants (imports/*) are tests/infrastructure/test_imports.py's.
        and IMPORT_OBJECTS_PATTERN not in json.dumps(s.get("Resource"))
    ]


def test_media_bucket_keeps_its_logical_id_and_is_retained_in_prod(prod: Synthesized) -> None:
    assert prod.logical_id(prod.stack.media.bucket) == MEDIA_BUCKET.logical_id
    assert prod.resources[MEDIA_BUCKET.logical_id]["DeletionPolicy"] == "Retain"


def test_media_bucket_blocks_all_public_access(dev: Synthesized) -> None:
    assert _bucket(dev)["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }
    assert _bucket(dev)["OwnershipControls"] == {
        "Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]
    }


def test_media_bucket_encrypted_at_rest_unversioned_and_access_logged(dev: Synthesized) -> None:
    bucket = _bucket(dev)
    rule = bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]
    assert rule["ServerSideEncryptionByDefault"] == {"SSEAlgorithm": "AES256"}
    assert "VersioningConfiguration" not in bucket
    logging = bucket["LoggingConfiguration"]
    assert logging["DestinationBucketName"] == {"Ref": dev.logical_id(dev.stack.site.log_bucket)}


def test_media_bucket_policy_denies_plain_http(dev: Synthesized) -> None:
    statements = [
        s
        for p in dev.of_type("AWS::S3::BucketPolicy").values()
        if p["Properties"]["Bucket"] == {"Ref": MEDIA_BUCKET.logical_id}
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]
    denies = [s for s in statements if s["Effect"] == "Deny"]
    assert [s["Condition"] for s in denies] == [{"Bool": {"aws:SecureTransport": "false"}}]
    assert denies[0]["Principal"] == {"AWS": "*"} and denies[0]["Action"] == "s3:*"
    assert not [s for s in statements if s["Effect"] == "Allow"]


def test_media_bucket_expires_pending_uploads_and_aborts_multipart_after_a_day(
    dev: Synthesized,
) -> None:
    rules = {r["Id"]: r for r in _bucket(dev)["LifecycleConfiguration"]["Rules"]}
    pending = rules["expire-pending-uploads"]
    assert pending["Status"] == "Enabled"
    assert pending["Prefix"] == "media/"
    assert pending["TagFilters"] == [{"Key": "state", "Value": "pending"}]
    assert pending["ExpirationInDays"] == 1
    multipart = rules["abort-incomplete-multipart-uploads"]
    assert multipart["AbortIncompleteMultipartUpload"] == {"DaysAfterInitiation": 1}
    assert "TagFilters" not in multipart and "ExpirationInDays" not in multipart
    imports = rules["expire-imports"]
    assert (imports["Status"], imports["Prefix"]) == ("Enabled", "imports/")
    # longer than a dead-lettered chunk can wait for its report (which reads the file)
    assert imports["ExpirationInDays"] == IMPORT_FILE_EXPIRATION_DAYS > IMPORT_DLQ.retention_days


def test_media_bucket_cors_allows_the_site_origin_to_post_and_get(dev: Synthesized) -> None:
    (rule,) = _bucket(dev)["CorsConfiguration"]["CorsRules"]
    assert sorted(rule["AllowedMethods"]) == ["GET", "POST"]
    origin = json.dumps(rule["AllowedOrigins"])
    assert dev.logical_id(dev.stack.site.distribution) in origin and "*" not in origin
    assert rule["AllowedHeaders"] == ["content-type"]


@pytest.mark.parametrize(
    ("name", "actions"),
    [
        (
            "api",
            {
                "s3:PutObject",
                "s3:PutObjectTagging",
                "s3:GetObject",
                "s3:DeleteObject",
                "s3:DeleteObjectTagging",
            },
        ),
        ("worker", {"s3:GetObject"}),
    ],
)
def test_media_grants_are_least_privilege_on_media_objects(
    dev: Synthesized, name: str, actions: set[str]
) -> None:
    function = dev.stack.api.function if name == "api" else dev.stack.dispatch.worker
    (statement,) = _media_statements(dev, function)
    granted = statement["Action"]
    assert set([granted] if isinstance(granted, str) else granted) == actions
    assert statement["Resource"] == {
        "Fn::Join": ["", [{"Fn::GetAtt": [MEDIA_BUCKET.logical_id, "Arn"]}, "/media/*"]]
    }
    env = dev.resources[dev.logical_id(function)]["Properties"]["Environment"]["Variables"]
    assert env["MEDIA_BUCKET_NAME"] == {"Ref": MEDIA_BUCKET.logical_id}


@pytest.mark.parametrize("name", ["sweeper", "watchdog", "reconciler", "materializer", "verifier"])
def test_media_bucket_not_reachable_by_other_dispatch_functions(
    dev: Synthesized, name: str
) -> None:
    function = getattr(dev.stack.dispatch, name)
    assert not _media_statements(dev, function)
    env = dev.resources[dev.logical_id(function)]["Properties"]["Environment"]["Variables"]
    assert "MEDIA_BUCKET_NAME" not in env
