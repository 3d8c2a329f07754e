"""The public routes: ``GET /v1/health`` and ``GET /openapi.json`` answer without a caller;
every other route still asks for one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest import mock

from local.emulation.lambda_runtime import LambdaContext
from tests.support.api import API_TIMEOUT_SECONDS, ApiClient, make_event


def _raw(path: str, **headers: str) -> dict[str, Any]:
    """The handler's result for an anonymous ``GET path`` (the body left as sent)."""
    from functions.api.handler import lambda_handler

    event = make_event("GET", path, sub=None, headers=headers)
    return dict(lambda_handler(event, LambdaContext("api", API_TIMEOUT_SECONDS)))


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


def test_docs_page_without_a_caller_is_swagger_ui_with_no_outside_asset(bare: ApiClient) -> None:
    answer = _raw("/docs")
    assert answer["statusCode"] == 200
    assert answer["headers"]["Content-Type"] == "text/html"
    page = answer["body"]
    assert "SwaggerUIBundle(" in page  # the script itself is in the page
    assert '"/v1/scheduled-posts/{schedule_id}"' in page  # our document, ETag and all
    assert "<script src=" not in page and "rel='stylesheet'" not in page
    assert 'updateUrl("/openapi.json")' in page


def test_docs_page_is_gzipped_for_a_client_that_accepts_it(bare: ApiClient) -> None:
    answer = _raw("/docs", **{"accept-encoding": "gzip"})
    assert answer["statusCode"] == 200
    assert answer["headers"]["Content-Encoding"] == "gzip"
    assert answer["isBase64Encoded"] is True
    assert len(answer["body"]) < 1_000_000
