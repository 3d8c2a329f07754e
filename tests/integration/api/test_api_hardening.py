"""The API's loose ends of issue 17: items 7-12 (If-Match on DELETE, channel limit and pages,
rotation overlap, body and query hygiene, ETags, clear messages)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.platforms.webhook import signing_secrets
from tests.support.api import ApiClient, install_api, invoke, make_event

FAR = "2026-11-30T09:30:00Z"
POSTS = "/v1/scheduled-posts"
WEBHOOK = {"platform": "webhook", "name": "main", "url": "https://hooks.example.com/in"}


@pytest.fixture
def channel(alice: ApiClient) -> str:
    return alice.create_channel()


def _schedule(alice: ApiClient, channel: str, content: str = "hello") -> dict:
    return alice.schedule(FAR, [channel], content)


# -- item 7: DELETE honours If-Match ----------------------------------------------------------


def test_cancel_post_stale_if_match_412_and_post_unchanged(alice: ApiClient, channel: str) -> None:
    sid = _schedule(alice, channel)["schedule_id"]
    assert alice.patch(f"{POSTS}/{sid}", {"content": "edited"}).status == 200

    answer = alice.delete(f"{POSTS}/{sid}", headers={"If-Match": '"1"'})

    assert answer.status == 412
    assert alice.get(f"{POSTS}/{sid}").json["status"] == "scheduled"


def test_cancel_post_malformed_if_match_422(alice: ApiClient, channel: str) -> None:
    sid = _schedule(alice, channel)["schedule_id"]

    answer = alice.delete(f"{POSTS}/{sid}", headers={"If-Match": "1"})

    assert (answer.status, answer.json["errors"][0]["loc"]) == (422, ["header", "If-Match"])
    assert alice.get(f"{POSTS}/{sid}").json["status"] == "scheduled"


def test_cancel_post_current_if_match_cancels(alice: ApiClient, channel: str) -> None:
    created = alice.post(POSTS, {"content": "x", "publish_at": FAR, "channel_ids": [channel]})

    answer = alice.delete(
        f"{POSTS}/{created.json['schedule_id']}", headers={"If-Match": created.headers["ETag"]}
    )

    assert (answer.status, answer.json["status"]) == (200, "cancelled")


# -- item 8: channel limit, channel pages, posts by channel ----------------------------------


def test_create_channel_over_max_channels_per_user_429(aws, clock) -> None:  # type: ignore[no-untyped-def]
    install_api(aws.settings.model_copy(update={"MAX_CHANNELS_PER_USER": 2}), clock)
    alice = ApiClient("alice")
    first = alice.create_channel("a")
    alice.create_channel("b")

    refused = alice.post("/v1/channels", WEBHOOK)
    assert refused.status == 429 and "MAX_CHANNELS_PER_USER" in refused.json["detail"]
    assert ApiClient("bob").post("/v1/channels", WEBHOOK).status == 201  # per user
    assert alice.delete(f"/v1/channels/{first}").status == 204
    assert alice.post("/v1/channels", WEBHOOK).status == 201  # a delete frees a place


def test_list_channels_paginated_every_channel_once(alice: ApiClient) -> None:
    made = {alice.create_channel(f"c{i}") for i in range(5)}
    seen: list[str] = []
    cursor = None
    for _ in range(10):
        query = {"limit": "2", **({"cursor": cursor} if cursor else {})}
        answer = alice.get("/v1/channels", query=query)
        assert answer.status == 200 and len(answer.json["items"]) <= 2
        seen += [c["channel_id"] for c in answer.json["items"]]
        cursor = answer.json["next_cursor"]
        if cursor is None:
            break

    assert sorted(seen) == sorted(made)


def test_list_channels_cursor_of_another_user_400(alice: ApiClient, bob: ApiClient) -> None:
    for i in range(3):
        alice.create_channel(f"c{i}")
    cursor = alice.get("/v1/channels", query={"limit": "1"}).json["next_cursor"]

    assert bob.get("/v1/channels", query={"cursor": cursor}).status == 400


def test_list_posts_channel_id_filter(alice: ApiClient) -> None:
    one, two = alice.create_channel("one"), alice.create_channel("two")
    a = alice.schedule(FAR, [one])["schedule_id"]
    b = alice.schedule(FAR, [one, two])["schedule_id"]
    alice.schedule(FAR, [two])

    seen, cursor = [], None
    for _ in range(10):
        query = {"channel_id": one, "limit": "1", **({"cursor": cursor} if cursor else {})}
        page = alice.get(POSTS, query=query).json
        seen += [p["schedule_id"] for p in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break

    assert sorted(seen) == sorted([a, b])


# -- item 9: rotation ------------------------------------------------------------------------


def test_rotate_twice_keeps_original_secret_for_its_overlap(  # type: ignore[no-untyped-def]
    alice: ApiClient, aws, clock
) -> None:
    created = alice.post("/v1/channels", WEBHOOK).json
    cid, original = created["channel_id"], created["signing_secret"]
    first = alice.post(f"/v1/channels/{cid}/rotate-secret").json["signing_secret"]
    clock.advance(3600)
    second = alice.post(f"/v1/channels/{cid}/rotate-secret").json["signing_secret"]
    repo = ChannelRepository(posts_table_name=aws.settings.POSTS_TABLE_NAME)
    overlap = aws.settings.SECRET_OVERLAP_SECONDS

    channel = repo.get("alice", cid)
    assert channel is not None
    assert signing_secrets(channel, clock.now()) == [second, first, original]
    just_before = clock.now() + timedelta(seconds=overlap - 3600 - 1)
    assert original in signing_secrets(channel, just_before)
    after = clock.now() + timedelta(seconds=overlap - 3600 + 1)
    assert signing_secrets(channel, after) == [second, first]


def test_rotate_revoke_previous_leaves_only_new_secret(  # type: ignore[no-untyped-def]
    alice: ApiClient, aws, clock
) -> None:
    cid = alice.create_channel()
    alice.post(f"/v1/channels/{cid}/rotate-secret")

    answer = alice.post(f"/v1/channels/{cid}/rotate-secret", {"revoke_previous": True})

    channel = ChannelRepository(posts_table_name=aws.settings.POSTS_TABLE_NAME).get("alice", cid)
    assert channel is not None
    assert signing_secrets(channel, clock.now()) == [answer.json["signing_secret"]]


def test_rotate_unknown_body_field_422(alice: ApiClient) -> None:
    cid = alice.create_channel()

    answer = alice.post(f"/v1/channels/{cid}/rotate-secret", {"revoke": True})

    assert (answer.status, answer.json["errors"][0]["loc"]) == (422, ["body", "revoke"])


# -- item 10: request bodies -----------------------------------------------------------------


def _without_content_type(event: dict) -> dict:
    event["headers"].pop("content-type", None)
    return event


def test_create_post_without_content_type_415(alice: ApiClient, channel: str) -> None:
    event = make_event(
        "POST", POSTS, body={"content": "x", "publish_at": FAR, "channel_ids": [channel]}
    )

    assert invoke(_without_content_type(event)).status == 415


@pytest.mark.parametrize(
    "content_type", ["application/json; charset=latin-1", "application/json;charset=UTF-16"]
)
def test_create_post_non_utf8_charset_415(
    alice: ApiClient, channel: str, content_type: str
) -> None:
    answer = alice.post(
        POSTS,
        {"content": "x", "publish_at": FAR, "channel_ids": [channel]},
        headers={"Content-Type": content_type},
    )

    assert answer.status == 415


def test_create_post_utf8_charset_accepted(alice: ApiClient, channel: str) -> None:
    answer = alice.post(
        POSTS,
        {"content": "x", "publish_at": FAR, "channel_ids": [channel]},
        headers={"Content-Type": "application/json; charset=UTF-8"},
    )

    assert answer.status == 201


def test_create_post_duplicate_member_names_400(alice: ApiClient, channel: str) -> None:
    raw = f'{{"content": "x", "content": "y", "publish_at": "{FAR}", "channel_ids": ["{channel}"]}}'

    answer = alice.post(POSTS, raw_body=raw)

    assert answer.status == 400 and "'content' twice" in answer.json["detail"]


@pytest.mark.parametrize("content", ["\u200b", "\ufeff \u200d", "\u2060\u00ad", "\u3164", " \n\t"])
def test_create_post_invisible_only_content_blank(
    alice: ApiClient, channel: str, content: str
) -> None:
    answer = alice.post(POSTS, {"content": content, "publish_at": FAR, "channel_ids": [channel]})

    assert answer.status == 422 and answer.json["errors"][0]["msg"] == "must not be blank"


@pytest.mark.parametrize("bad", ["\x00", "\x07", "\x1b[31m", "\x7f", "\x85", "\x9b"])
def test_create_post_control_characters_refused(alice: ApiClient, channel: str, bad: str) -> None:
    answer = alice.post(POSTS, {"content": f"a{bad}b", "publish_at": FAR, "channel_ids": [channel]})

    assert answer.status == 422 and answer.json["errors"][0]["loc"] == ["body", "content"]


def test_create_post_crlf_stored_as_lf_tab_kept(alice: ApiClient, channel: str) -> None:
    answer = alice.post(
        POSTS, {"content": "a\r\nb\tc\rd", "publish_at": FAR, "channel_ids": [channel]}
    )

    assert (answer.status, answer.json["content"]) == (201, "a\nb\tc\rd")


@pytest.mark.parametrize("name", ["ok\x1bname", "\u200b\u200b", "tab\x85"])
def test_create_channel_bad_name_refused(alice: ApiClient, name: str) -> None:
    answer = alice.post("/v1/channels", {**WEBHOOK, "name": name})

    assert answer.status == 422 and answer.json["errors"][0]["loc"] == ["body", "name"]


def test_create_channel_public_url_unusual_port_refused(alice: ApiClient) -> None:
    answer = alice.post("/v1/channels", {**WEBHOOK, "url": "https://hooks.example.com:6379/"})

    assert answer.status == 422 and "url port must be 443" in answer.json["errors"][0]["msg"]


# -- item 11: query strings, UTF-8 answers, ETags --------------------------------------------


@pytest.mark.parametrize(
    ("path", "query"),
    [(POSTS, {"stauts": "scheduled"}), ("/v1/channels", {"from": FAR}), (POSTS, {"page": "2"})],
)
def test_unknown_query_parameter_422_naming_it(
    alice: ApiClient, path: str, query: dict[str, str]
) -> None:
    answer = alice.get(path, query=query)

    name = next(iter(query))
    assert answer.status == 422 and answer.json["errors"][0]["loc"] == ["query", name]


def test_unknown_query_parameter_on_item_route_422(alice: ApiClient, channel: str) -> None:
    sid = _schedule(alice, channel)["schedule_id"]

    assert alice.get(f"{POSTS}/{sid}", query={"verbose": "1"}).status == 422


def test_answers_are_utf8_without_unicode_escapes(alice: ApiClient, channel: str) -> None:
    answer = alice.post(
        POSTS, {"content": "héllo ✓ 日本", "publish_at": FAR, "channel_ids": [channel]}
    )

    assert "héllo ✓ 日本" in answer.raw["body"] and "\\u" not in answer.raw["body"]


def test_problem_answers_are_utf8_without_unicode_escapes(alice: ApiClient) -> None:
    answer = alice.post("/v1/channels", {**WEBHOOK, "url": "https://hooks.example.com:81/é"})

    assert "\\u" not in answer.raw["body"]


def test_etag_changes_when_worker_changes_the_post(  # type: ignore[no-untyped-def]
    alice: ApiClient, channel: str, tables
) -> None:
    sid = _schedule(alice, channel)["schedule_id"]
    scheduled = alice.get(f"{POSTS}/{sid}").headers["ETag"]
    tables.set_post(sid, status="publishing")
    publishing = alice.get(f"{POSTS}/{sid}").headers["ETag"]
    tables.set_post(sid, status="published")
    published = alice.get(f"{POSTS}/{sid}")

    assert scheduled == '"1"'
    assert len({scheduled, publishing, published.headers["ETag"]}) == 3
    assert published.json["version"] == 1


# -- item 12: messages -----------------------------------------------------------------------


def test_deeply_nested_body_says_nested_too_deeply(alice: ApiClient) -> None:
    raw = "[" * 30_000 + "]" * 30_000

    answer = alice.post(POSTS, raw_body=raw)

    assert answer.status == 400 and "nested too deeply" in answer.json["detail"]


def test_moderately_nested_body_says_nested_too_deeply(alice: ApiClient) -> None:
    answer = alice.post(POSTS, raw_body="[" * 40 + "]" * 40)

    assert answer.status == 400 and "nested too deeply" in answer.json["detail"]


@pytest.mark.parametrize("field", ["content", "media_ids", "publish_at", "channel_ids"])
def test_patch_null_field_named_in_error(alice: ApiClient, channel: str, field: str) -> None:
    sid = _schedule(alice, channel)["schedule_id"]

    answer = alice.patch(f"{POSTS}/{sid}", {field: None})

    assert answer.status == 422
    assert answer.json["errors"][0]["loc"] == ["body", field]
    assert "null" in answer.json["errors"][0]["msg"]


@pytest.mark.parametrize("field", ["content", "publish_at", "channel_ids"])
def test_create_null_field_named_in_error(alice: ApiClient, channel: str, field: str) -> None:
    body: dict[str, object] = {"content": "x", "publish_at": FAR, "channel_ids": [channel]}
    body[field] = None

    answer = alice.post(POSTS, body)

    assert answer.status == 422 and ["body", field] in [e["loc"] for e in answer.json["errors"]]


def test_header_names_have_one_spelling(alice: ApiClient, channel: str) -> None:
    sid = _schedule(alice, channel)["schedule_id"]
    answers = [
        alice.get(f"{POSTS}/{sid}"),
        alice.get(f"{POSTS}/missing"),
        alice.post(POSTS, raw_body="{"),
        alice.get("/v1/channels"),
        invoke(_without_content_type(make_event("POST", POSTS, body={}))),
    ]
    spellings: dict[str, set[str]] = {}
    for answer in answers:
        for name in answer.headers:
            spellings.setdefault(name.lower(), set()).add(name)

    assert all(len(names) == 1 for names in spellings.values()), spellings
    assert json.loads(answers[0].raw["body"])["schedule_id"] == sid
