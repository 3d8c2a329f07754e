"""Every API answer carries ``Cache-Control: no-store`` and ``X-Content-Type-Options: nosniff``:
successes, problem+json answers and the pre-check's refusals."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.api import ApiClient, ApiResponse, invoke, make_event

EXPECTED = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}


def _assert_api_headers(answer: ApiResponse) -> None:
    assert {name: answer.headers.get(name) for name in EXPECTED} == EXPECTED, answer.headers


REFUSALS: dict[str, tuple[int, dict[str, Any]]] = {
    "no caller": (401, {"sub": None}),
    "body over 64 KiB": (413, {"raw_body": json.dumps({"name": "x" * 70_000})}),
    "not json media type": (415, {"raw_body": "{}", "headers": {"content-type": "text/plain"}}),
    "malformed json": (400, {"raw_body": "{not json"}),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_api_precheck_refusal_carries_the_api_headers(bare: ApiClient, case: str) -> None:
    status, options = REFUSALS[case]
    answer = invoke(make_event("POST", "/v1/channels", **options))
    assert answer.status == status
    _assert_api_headers(answer)


def test_api_public_success_and_problem_carry_the_api_headers(bare: ApiClient) -> None:
    anonymous = ApiClient(None)
    for answer, status in (
        (anonymous.get("/v1/health"), 200),
        (anonymous.get("/v1/health", query={"x": "1"}), 422),
        (anonymous.get("/openapi.json"), 200),
    ):
        assert answer.status == status
        _assert_api_headers(answer)


def test_api_answers_with_data_carry_the_api_headers(alice: ApiClient) -> None:
    created = alice.post(
        "/v1/channels",
        {"platform": "webhook", "name": "main", "url": "https://hooks.example.com/in"},
    )
    assert created.status == 201  # the one answer that shows the signing secret
    _assert_api_headers(created)
    missing = alice.get("/v1/scheduled-posts/nope")
    assert missing.status == 404
    _assert_api_headers(missing)
