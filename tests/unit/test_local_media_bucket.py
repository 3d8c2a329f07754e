"""The embedded AWS's media bucket: made from the shared definition, reachable by a pre-signed
POST from this machine, which is held to its policy as S3 holds it (local/emulation/
s3_post_policy.py) and tags the upload pending."""

from __future__ import annotations

import os
import socket
import threading
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from werkzeug.serving import make_server

from local.config import LocalConfig, page_origins
from local.embedded_aws import endpoint_url, ensure_media_bucket, moto_app
from scheduled_posts.buckets import MEDIA_BUCKET

ORIGINS = page_origins(LocalConfig(api_port=8123))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def aws_port() -> Iterator[int]:
    """The embedded AWS's own WSGI app (as ``make run`` serves it) on a loopback port."""
    port = _free_port()
    server = make_server("127.0.0.1", port, moto_app(), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield port
    # moto's backends are per process: leave no bucket or queue to the next module's server.
    reset = urllib.request.Request(f"{endpoint_url(port)}/moto-api/reset", method="POST")
    urllib.request.urlopen(reset, timeout=10).close()
    server.shutdown()
    thread.join(timeout=5)


@pytest.fixture
def bucket(aws_port: int) -> str:
    name = f"media-{uuid.uuid4().hex[:8]}"
    assert ensure_media_bucket(aws_port, name, origins=ORIGINS) == {"MEDIA_BUCKET_NAME": name}
    return name


def _s3(port: int) -> Any:
    return boto3.client(
        "s3",
        endpoint_url=endpoint_url(port),
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )


def _multipart(fields: dict[str, str], body: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
        for k, v in fields.items()
    ]
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n'
        f"Content-Type: image/png\r\n\r\n".encode()
        + body
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def _presigned(s3: Any, bucket: str, key: str, *, size: int) -> dict[str, Any]:
    """A POST policy as the API issues it: exact key, type and size, the pending tag."""
    fields, conditions = MEDIA_BUCKET.upload_policy("image/png", size)
    post: dict[str, Any] = s3.generate_presigned_post(
        Bucket=bucket, Key=key, Fields=fields, Conditions=conditions, ExpiresIn=300
    )
    return post


def _post(post: dict[str, Any], body: bytes) -> int:
    data, content_type = _multipart(post["fields"], body)
    request = urllib.request.Request(
        post["url"], data=data, method="POST", headers={"Content-Type": content_type}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def test_ensure_media_bucket_creates_it_private_with_cors_and_lifecycle(
    aws_port: int, bucket: str
) -> None:
    s3 = _s3(aws_port)
    block = s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"]
    assert all(block.values())
    (rule,) = s3.get_bucket_cors(Bucket=bucket)["CORSRules"]
    assert rule["AllowedOrigins"] == ["http://127.0.0.1:8123", "http://localhost:8123"]
    assert sorted(rule["AllowedMethods"]) == ["GET", "POST"]
    rules = s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
    assert {r["ID"] for r in rules} == {
        "expire-pending-uploads",
        "expire-imports",
        "abort-incomplete-multipart-uploads",
    }


def test_ensure_media_bucket_twice_keeps_the_objects(aws_port: int, bucket: str) -> None:
    s3 = _s3(aws_port)
    s3.put_object(Bucket=bucket, Key="media/kept", Body=b"x")
    ensure_media_bucket(aws_port, bucket, origins=ORIGINS)
    assert s3.get_object(Bucket=bucket, Key="media/kept")["Body"].read() == b"x"


def test_presigned_post_points_at_the_embedded_aws_and_uploads_tagged_pending(
    aws_port: int, bucket: str
) -> None:
    s3 = _s3(aws_port)
    key = MEDIA_BUCKET.object_key("m1")
    body = b"\x89PNG\r\n\x1a\nbytes"
    post = _presigned(s3, bucket, key, size=len(body))
    assert post["url"].startswith(f"{endpoint_url(aws_port)}/{bucket}")

    assert _post(post, body) in (200, 201, 204)

    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == body
    tags = s3.get_object_tagging(Bucket=bucket, Key=key)["TagSet"]
    assert tags == [{"Key": "state", "Value": "pending"}]


@pytest.mark.parametrize("body", [b"0123456789abcdef", b"0123"], ids=["bigger", "smaller"])
def test_presigned_post_of_another_size_is_refused(aws_port: int, bucket: str, body: bytes) -> None:
    s3 = _s3(aws_port)
    key = MEDIA_BUCKET.object_key("sized")
    post = _presigned(s3, bucket, key, size=8)

    assert _post(post, body) == 400

    with pytest.raises(s3.exceptions.ClientError):
        s3.head_object(Bucket=bucket, Key=key)


def test_presigned_post_with_another_type_or_without_the_tag_is_refused(
    aws_port: int, bucket: str
) -> None:
    s3 = _s3(aws_port)
    key = MEDIA_BUCKET.object_key("typed")
    post = _presigned(s3, bucket, key, size=4)
    retyped = {**post, "fields": {**post["fields"], "Content-Type": "image/svg+xml"}}
    untagged = {**post, "fields": {k: v for k, v in post["fields"].items() if k != "tagging"}}

    assert (_post(retyped, b"<svg"), _post(untagged, b"<svg")) == (403, 403)

    with pytest.raises(s3.exceptions.ClientError):
        s3.head_object(Bucket=bucket, Key=key)


def test_presigned_post_after_its_expiry_is_refused(aws_port: int, bucket: str) -> None:
    s3 = _s3(aws_port)
    fields, conditions = MEDIA_BUCKET.upload_policy("image/png", 4)
    post = s3.generate_presigned_post(
        Bucket=bucket,
        Key=MEDIA_BUCKET.object_key("late"),
        Fields=fields,
        Conditions=conditions,
        ExpiresIn=-1,
    )
    assert _post(post, b"\x89PNG") == 403


def test_upload_policy_pins_type_size_and_the_pending_tag() -> None:
    fields, conditions = MEDIA_BUCKET.upload_policy("image/webp", 2048)
    assert fields == {"Content-Type": "image/webp", "tagging": MEDIA_BUCKET.pending_tagging()}
    assert ["content-length-range", 2048, 2048] in conditions
    assert {"tagging": fields["tagging"]} in conditions
    assert MEDIA_BUCKET.pending_tagging() == (
        "<Tagging><TagSet><Tag><Key>state</Key><Value>pending</Value></Tag></TagSet></Tagging>"
    )


def test_local_stack_start_creates_the_bucket_and_sets_media_bucket_name(
    aws_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the embedded AWS already listening (reused), and no function to run
    from local.emulation.runner import free_port
    from local.stack import LocalStack

    monkeypatch.setattr(os, "environ", {**os.environ, "MEDIA_BUCKET_NAME": "run-media"})
    monkeypatch.setattr("local.stack.is_available", lambda name: False)
    config = LocalConfig(api_port=free_port(), aws_port=aws_port)
    stack = LocalStack(config)

    try:
        stack.start()
    finally:
        stack.stop()

    # Then the functions' environment names the bucket, whose CORS allows the page's origin
    assert os.environ["MEDIA_BUCKET_NAME"] == "run-media"
    (rule,) = _s3(aws_port).get_bucket_cors(Bucket="run-media")["CORSRules"]
    assert rule["AllowedOrigins"] == list(page_origins(config))
