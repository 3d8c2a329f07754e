"""The committed openapi.json is what the code generates (``make openapi`` refreshes it)."""

from __future__ import annotations

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
