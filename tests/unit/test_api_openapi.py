"""The committed openapi.json is what the code generates (``make openapi`` refreshes it)."""

from __future__ import annotations

import json
from pathlib import Path

from functions.api.openapi import openapi_document

ROOT = Path(__file__).resolve().parents[2]


def test_openapi_json_is_up_to_date() -> None:
    committed = (ROOT / "openapi.json").read_text()
    assert committed == openapi_document(), "openapi.json is stale: run `make openapi`"


def test_openapi_documents_every_route() -> None:
    document = openapi_document()
    for path in (
        '"/v1/channels"',
        '"/v1/channels/{channel_id}"',
        '"/v1/scheduled-posts"',
        '"/v1/scheduled-posts/{schedule_id}"',
        '"/v1/scheduled-posts/{schedule_id}/attempts"',
    ):
        assert path in document


def test_openapi_header_names_have_the_documented_spelling() -> None:
    document = json.loads(openapi_document())
    names = {
        parameter["name"]
        for operations in document["paths"].values()
        for operation in operations.values()
        for parameter in operation.get("parameters", [])
        if parameter["in"] == "header"
    }
    readme = (ROOT / "README.md").read_text()
    assert names == {"Idempotency-Key", "If-Match"}
    assert all(name in readme for name in names)
    single = document["paths"]["/v1/scheduled-posts/{schedule_id}"]["get"]["responses"]["200"]
    assert "ETag" in single["headers"]
