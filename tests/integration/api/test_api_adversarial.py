"""Adversarial regression tests of the scheduling API: each one is a bug found by attacking it.

Every test drives the real handler with API Gateway HTTP API v2 events on moto and the SimClock.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from scheduled_posts.data.posts import PostRepository
from tests.support.api import ApiClient, ApiResponse, install_api

FAR = "2026-11-30T09:30:00Z"
POSTS = "/v1/scheduled-posts"


@pytest.fixture
def channel(alice: ApiClient) -> str:
    return alice.create_channel()


@pytest.fixture
def post(alice: ApiClient, channel: str) -> dict:
    return alice.schedule(FAR, [channel])


def _problem(answer: ApiResponse, status: int) -> None:
    assert answer.status == status, answer.json
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert answer.json["status"] == status


def _create(client: ApiClient, channel: str, publish_at: str = FAR, **headers: str) -> ApiResponse:
    body = {"content": "x", "publish_at": publish_at, "channel_ids": [channel]}
    return client.post(POSTS, body, headers=headers)


# ------------------------------------------------- publish_at: strictly RFC 3339 (ASCII)


@pytest.mark.parametrize(
    "publish_at",
    [
        "2026-11-30T09:30:00.\uff15Z",  # fullwidth digit in the fraction
        "2026-11-30T09:30:00+\uff10\uff11:\uff10\uff10",  # fullwidth digits in the offset
        "2026-11-30T09:30:00+\u0660\u0661:\u0660\u0660",  # Arabic-Indic digits in the offset
        " 2026-11-30T09:30:00Z",
        "2026-11-30T09:30:00Z\n",
    ],
)
def test_create_post_publish_at_not_rfc3339_is_422_and_writes_nothing(
    alice: ApiClient, channel: str, tables, publish_at: str
) -> None:
    answer = _create(alice, channel, publish_at)
    _problem(answer, 422)
    assert answer.json["errors"][0]["loc"] == ["body", "publish_at"]
    assert tables.due_items() == []


def test_list_posts_from_with_non_ascii_digits_is_422(alice: ApiClient, post: dict) -> None:
    answer = alice.get(POSTS, query={"from": "2026-11-30T09:30:00+\uff10\uff11:00"})
    _problem(answer, 422)
    assert answer.json["errors"][0]["loc"] == ["query", "from"]


# ------------------------------------------------------ If-Match: strong comparison


@pytest.mark.parametrize("if_match", ['W/"1"', '"01"', '"v1"'])
def test_patch_post_if_match_not_a_strong_match_is_412_and_changes_nothing(
    alice: ApiClient, post: dict, tables, if_match: str
) -> None:
    """RFC 9110 section 13.1.1: If-Match uses the strong comparison; a weak tag never matches."""
    path = f"{POSTS}/{post['schedule_id']}"
    answer = alice.patch(path, {"content": "edited"}, headers={"If-Match": if_match})
    _problem(answer, 412)
    assert tables.post_item(post["schedule_id"])["content"] == "hello"


def test_patch_post_if_match_unquoted_is_422_and_changes_nothing(
    alice: ApiClient, post: dict, tables
) -> None:
    path = f"{POSTS}/{post['schedule_id']}"
    answer = alice.patch(path, {"content": "edited"}, headers={"If-Match": "1"})
    _problem(answer, 422)
    assert answer.json["errors"][0]["loc"] == ["header", "If-Match"]
    assert "quoted" in answer.json["errors"][0]["msg"]
    assert tables.post_item(post["schedule_id"])["content"] == "hello"


def test_create_post_blank_content_message_has_no_pydantic_prefix(
    alice: ApiClient, channel: str
) -> None:
    answer = alice.post(POSTS, {"content": "  ", "publish_at": FAR, "channel_ids": [channel]})
    _problem(answer, 422)
    assert answer.json["errors"][0]["msg"] == "must not be blank"


def test_patch_post_if_match_list_naming_the_current_version_is_200(
    alice: ApiClient, post: dict
) -> None:
    path = f"{POSTS}/{post['schedule_id']}"
    answer = alice.patch(path, {"content": "edited"}, headers={"If-Match": '"7", "1"'})
    assert answer.status == 200, answer.json
    assert answer.headers["ETag"] == '"2"'


# --------------------------------------------------------------------- media types


def test_create_post_media_type_is_case_insensitive(alice: ApiClient, channel: str) -> None:
    """RFC 9110 section 8.3.1: type and subtype are case-insensitive."""
    answer = _create(alice, channel, **{"content-type": "Application/JSON"})
    assert answer.status == 201, answer.json


# ----------------------------------------------------------- lost races, no If-Match


@pytest.fixture
def racing(monkeypatch: pytest.MonkeyPatch, tables) -> None:
    """Every edit/cancel transaction loses to another edit that lands just before it."""
    original = PostRepository.replace

    def lose(self: PostRepository, old: Any, new: Any, **kwargs: Any) -> None:
        tables.set_post(old.schedule_id, version=old.version + 1)
        original(self, old, new, **kwargs)

    monkeypatch.setattr(PostRepository, "replace", lose)


@pytest.mark.parametrize(("method", "body"), [("PATCH", {"content": "mine"}), ("DELETE", None)])
def test_write_without_if_match_that_keeps_losing_is_409_not_412(
    alice: ApiClient, post: dict, racing: None, method: str, body: Any
) -> None:
    """412 means a precondition the client sent failed (RFC 9110 section 15.5.13); without
    If-Match, a post that kept changing under the request is a conflict (409)."""
    answer = alice.request(method, f"{POSTS}/{post['schedule_id']}", body)
    _problem(answer, 409)


# ---------------------------------------------------------------- pending limit race


def test_create_at_the_limit_while_another_create_folds_the_releases_is_201(
    aws, clock, promoted, tables, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two slots were released; another create folds both releases (and takes one slot)
    between this create's refused transaction and its own fold: one slot is still free."""
    install_api(aws.settings.model_copy(update={"MAX_PENDING_POSTS": 2}), clock)
    alice = ApiClient("alice")
    channel = alice.create_channel()
    for _ in range(2):
        alice.delete(f"{POSTS}/{_create(alice, channel).json['schedule_id']}")
    original = PostRepository.fold_releases
    raced: list[int] = []

    def fold_after_a_rival(self: PostRepository, owner: str) -> int:
        if not raced:
            raced.append(0)
            raced[0] = _create(alice, channel).status  # the rival create, in between
        return original(self, owner)

    monkeypatch.setattr(PostRepository, "fold_releases", fold_after_a_rival)
    answer = _create(alice, channel)
    assert raced == [201]
    assert answer.status == 201, answer.json
    assert len(alice.get(POSTS, query={"status": "scheduled"}).json["items"]) == 2


# ------------------------------------------------------------------- the caller's sub


@pytest.mark.parametrize("sub", ["x" * 3000, "x" * 256, "alice\nbob"])
def test_create_channel_unusable_sub_is_401_and_writes_nothing(
    promoted: Any, tables, sub: str
) -> None:
    """OpenID Connect Core 1.0 section 2: a ``sub`` has at most 255 characters; a longer one
    would overflow DynamoDB's 2,048-byte partition key (``OWNER#<sub>``) and fail as a 500."""
    body = {"platform": "webhook", "name": "n", "url": "https://hooks.example.com/in"}
    _problem(ApiClient(sub).post("/v1/channels", body), 401)
    assert tables.posts.scan()["Items"] == []


# ------------------------------------------------------------------------ deep nesting


def test_create_post_deep_nesting_is_never_a_500(bare: ApiClient) -> None:
    """Nesting that the precheck's ``json.loads`` parses but Powertools' second parse, run a
    few dozen frames deeper, overflows the stack with: every depth is a 400 or 422 problem."""
    statuses = set()
    for depth in range(40, sys.getrecursionlimit() + 40, 3):
        raw = f'{{"content": "x", "publish_at": "{FAR}", "media_ids": {"[" * depth}{"]" * depth}}}'
        answer = bare.post(POSTS, raw_body=raw)
        assert answer.headers["Content-Type"] == "application/problem+json"
        statuses.add(answer.status)
    assert statuses <= {400, 422}
