"""No input produces a 500: hostile bodies, headers and paths get 4xx problem+json."""

from __future__ import annotations

import base64
import json

import pytest

from tests.support.api import ApiClient, invoke, make_event

FAR = "2026-11-30T09:30:00Z"


@pytest.fixture
def channel(alice: ApiClient) -> str:
    return alice.create_channel()


def _assert_problem(answer, status: int) -> None:  # type: ignore[no-untyped-def]
    assert answer.status == status, answer.json
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert {"type", "title", "status", "detail"} <= set(answer.json)
    assert answer.json["status"] == status


@pytest.mark.parametrize(
    "body",
    [
        [],
        ["content"],
        "a string",
        42,
        None,
        {"content": 5, "publish_at": FAR, "channel_ids": ["c"]},
        {"content": "x", "publish_at": 10**40, "channel_ids": ["c"]},
        {"content": "x", "publish_at": FAR, "channel_ids": "c"},
        {"content": "x", "publish_at": FAR, "channel_ids": [["c"]]},
        {"content": "x", "publish_at": FAR, "channel_ids": [{"$ne": 1}]},
        {"content": "x", "publish_at": FAR, "channel_ids": ["c"], "media_ids": [None]},
        {"content": "x", "publish_at": "2026-11-30T09:30:00.5\x00Z", "channel_ids": ["c"]},
        {
            "content": "x",
            "publish_at": "\uff19\uff19\uff19\uff19-11-30T09:30:00Z",
            "channel_ids": ["c"],
        },
        {"content": "x", "publish_at": "99999-11-30T09:30:00Z", "channel_ids": ["c"]},
        {"content": "x", "publish_at": "0001-01-01T00:00:00+23:59", "channel_ids": ["c"]},
        {"content": "x", "publish_at": "9999-12-31T23:59:59.9999Z", "channel_ids": ["c"]},
        {"content": "x", "publish_at": FAR, "channel_ids": ["ü"]},
        {"content": "\x00", "publish_at": FAR, "channel_ids": ["c"]},
    ],
)
def test_create_post_hostile_body_is_422(bare: ApiClient, body: object) -> None:
    _assert_problem(bare.post("/v1/scheduled-posts", body), 422)


def test_create_post_far_future_year_9999_is_422_not_500(alice: ApiClient, channel: str) -> None:
    body = {"content": "x", "publish_at": "9999-12-31T23:59:59.999Z", "channel_ids": [channel]}
    _assert_problem(alice.post("/v1/scheduled-posts", body), 422)


@pytest.mark.parametrize(
    "raw",
    [
        "{",
        "{'single': 'quotes'}",
        '{"content": "x",}',
        "[" * 100_00 + "]" * 100_00,
        '{"n": ' + "9" * 5000 + "}",
        "\ufeff{}",
    ],
)
def test_create_post_unparseable_json_is_400(bare: ApiClient, raw: str) -> None:
    _assert_problem(bare.post("/v1/scheduled-posts", raw_body=raw), 400)


def test_create_post_body_over_64_kib_is_413(alice: ApiClient, channel: str) -> None:
    body = {"content": "x", "publish_at": FAR, "channel_ids": [channel], "pad": "y" * 65_536}
    _assert_problem(alice.post("/v1/scheduled-posts", body), 413)


def test_create_post_base64_body_not_utf8_is_400(bare: ApiClient) -> None:
    raw = base64.b64encode(b"\xff\xfe{}").decode()
    _assert_problem(bare.post("/v1/scheduled-posts", raw_body=raw, is_base64=True), 400)


def test_create_post_base64_json_body_is_accepted(alice: ApiClient, channel: str) -> None:
    body = {"content": "x", "publish_at": FAR, "channel_ids": [channel]}
    raw = base64.b64encode(json.dumps(body).encode()).decode()
    assert alice.post("/v1/scheduled-posts", raw_body=raw, is_base64=True).status == 201


def test_create_post_text_plain_is_415(bare: ApiClient) -> None:
    answer = bare.post("/v1/scheduled-posts", raw_body="hi", headers={"content-type": "text/plain"})
    _assert_problem(answer, 415)


def test_create_post_unicode_content_roundtrips(alice: ApiClient, channel: str) -> None:
    content = "héllo 👋🏽 مرحبا \u200b \U0001d54f"
    created = alice.schedule(FAR, [channel], content=content)
    assert alice.get(f"/v1/scheduled-posts/{created['schedule_id']}").json["content"] == content


def test_create_post_bad_idempotency_key_header_is_422(alice: ApiClient, channel: str) -> None:
    body = {"content": "x", "publish_at": FAR, "channel_ids": [channel]}
    answer = alice.post("/v1/scheduled-posts", body, headers={"Idempotency-Key": "k" * 300})
    _assert_problem(answer, 422)


@pytest.mark.parametrize(
    "path", ["/v1/scheduled-posts/%F0%9F%98%80", "/v1/scheduled-posts/" + "a" * 65]
)
def test_post_path_malformed_id_is_422(bare: ApiClient, path: str) -> None:
    _assert_problem(bare.get(path), 422)


def test_unknown_route_is_404_problem(bare: ApiClient) -> None:
    _assert_problem(bare.get("/v1/nothing-here"), 404)


def test_sample_event_from_file_is_answered(promoted) -> None:
    from pathlib import Path

    event = json.loads((Path(__file__).parents[2] / "events" / "api_list_posts.json").read_text())
    assert invoke(event).status == 200


def test_patch_post_array_body_is_422(alice: ApiClient, channel: str) -> None:
    created = alice.schedule(FAR, [channel])
    _assert_problem(alice.patch(f"/v1/scheduled-posts/{created['schedule_id']}", ["x"]), 422)


def test_make_event_without_sub_has_no_authorizer() -> None:
    assert "authorizer" not in make_event("GET", "/v1/channels", sub=None)["requestContext"]
