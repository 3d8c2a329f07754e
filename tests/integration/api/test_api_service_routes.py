"""The public routes: ``GET /v1/health`` and ``GET /openapi.json`` answer without a caller;
every other route still asks for one."""

from __future__ import annotations

import json
from pathlib import Path
from unittest import mock

from tests.support.api import ApiClient

ROOT = Path(__file__).resolve().parents[3]


def test_health_without_a_caller_answers_ok_and_calls_no_aws_api(bare: ApiClient) -> None:
    anonymous = ApiClient(None)
    with mock.patch(
        "botocore.client.BaseClient._make_api_call", side_effect=AssertionError("AWS called")
    ):
        answer = anonymous.get("/v1/health")
    assert (answer.status, answer.json) == (200, {"status": "ok"})


def test_openapi_json_without_a_caller_is_the_committed_contract(bare: ApiClient) -> None:
    answer = ApiClient(None).get("/openapi.json")
    assert answer.status == 200
    assert answer.headers["Content-Type"] == "application/json"
    assert answer.raw["body"] == (ROOT / "openapi.json").read_text()
    assert json.loads(answer.raw["body"])["paths"]["/v1/health"]["get"]["security"] == []


def test_private_route_without_a_caller_is_still_401(bare: ApiClient) -> None:
    answer = ApiClient(None).get("/v1/channels")
    assert answer.status == 401


def test_public_route_with_an_unknown_query_parameter_is_422(bare: ApiClient) -> None:
    answer = ApiClient(None).get("/v1/health", query={"verbose": "1"})
    assert answer.status == 422
    assert answer.json["errors"][0]["loc"] == ["query", "verbose"]
