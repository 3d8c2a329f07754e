"""Schema fuzzing (issue 17 item 14): schemathesis generates requests from ``openapi.json`` for
every operation and sends them over HTTP to the local stack's API front (``local.http_front``,
in-process, on a free loopback port) with a valid token. Each answer must not be a 5xx and must
match the schema: a documented status code, the documented content type, and a body that
validates against the documented model (problem+json for errors).

Bounded for CI: :data:`EXAMPLES_PER_OPERATION` generated requests per operation, derandomised
(the same requests on every run), no deadline. Numbers are in ``docs/reliability.md``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from local.config import LocalConfig
from local.emulation.lambda_runtime import LambdaFunction
from local.emulation.resources import ensure_media_bucket
from local.http_front import ApiFront, JwtChecker
from local.token import make_token
from tests.support.api import ApiClient, install_api, uninstall_api

#: Generated requests per operation (15 operations: about 450 requests, a minute on 2 cores).
EXAMPLES_PER_OPERATION = 30
ROOT = Path(__file__).resolve().parents[3]
SECRET = "fuzz-secret-of-at-least-32-bytes-for-hs256"

schema = schemathesis.openapi.from_path(ROOT / "openapi.json")
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.fixture
def front(aws: Any, clock: Any) -> Iterator[str]:
    install_api(aws.settings, clock)
    # The media bucket, as deployed: uploads and imports read it (a route reaching S3 without
    # it answered 500 for the missing bucket, not for what it was sent).
    s3 = boto3.client("s3", region_name="us-east-1")
    ensure_media_bucket(s3, name=aws.settings.MEDIA_BUCKET_NAME, origins=("http://127.0.0.1",))
    # Real ids so that item routes are reached, not only 404s.
    alice = ApiClient("alice")
    channel = alice.create_channel()
    alice.schedule("2026-11-30T09:30:00Z", [channel])
    server = ApiFront(LambdaFunction("api", 29), JwtChecker(SECRET), host="127.0.0.1", port=0)
    server.start()
    try:
        yield f"http://127.0.0.1:{server.port}"
    finally:
        server.stop()
        uninstall_api()


@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)
def test_api_schema_fuzz_no_5xx_and_answers_match_schema(case: Any, front: str) -> None:
    token = make_token("alice", LocalConfig(jwt_secret=SECRET))
    case.call_and_validate(
        base_url=front, headers={"Authorization": f"Bearer {token}"}, checks=CHECKS, timeout=30
    )
