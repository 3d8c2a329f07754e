"""A create whose post put committed but whose answer was lost (botocore retried it).

The retry fails the post's own ``attribute_not_exists`` condition. The create committed and
must answer 201, never 500, and count the post once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from scheduled_posts.data.aws import dynamodb_resource
from tests.support.api import ApiClient, ApiResponse

FAR = "2026-11-30T09:30:00Z"


class LostFirstAnswer:
    """Wraps ``put_item``: the first put of a post item commits, then is sent again the way
    botocore retries a request whose answer was lost."""

    def __init__(self, original: Callable[..., Any]) -> None:
        self.original = original
        self.calls: list[dict[str, Any]] = []

    def __call__(self, **kwargs: Any) -> Any:
        if (kwargs.get("Item") or {}).get("sk") not in ("POST", {"S": "POST"}):
            return self.original(**kwargs)
        self.calls.append(kwargs)
        if len(self.calls) > 1:
            return self.original(**kwargs)
        self.original(**kwargs)  # committed; its answer is "lost"
        return self.original(**kwargs)  # the retry


@pytest.fixture
def channel(alice: ApiClient) -> str:
    return alice.create_channel()


@pytest.fixture
def lost_answer(channel: str, monkeypatch: pytest.MonkeyPatch) -> LostFirstAnswer:
    client = dynamodb_resource().meta.client
    wrapper = LostFirstAnswer(client.put_item)
    monkeypatch.setattr(client, "put_item", wrapper)
    return wrapper


def _create(alice: ApiClient, channel: str) -> ApiResponse:
    return alice.post(
        "/v1/scheduled-posts",
        {"content": "hi", "media_ids": [], "publish_at": FAR, "channel_ids": [channel]},
    )


def test_create_post_answer_lost_after_commit_returns_201(
    alice: ApiClient, channel: str, lost_answer: LostFirstAnswer
) -> None:
    answer = _create(alice, channel)

    assert len(lost_answer.calls) == 1  # sent twice by the wrapper: committed, then retried
    assert answer.status == 201, answer.json
    assert alice.get(f"/v1/scheduled-posts/{answer.json['schedule_id']}").status == 200


def test_create_post_answer_lost_after_commit_counts_the_post_once(
    alice: ApiClient, channel: str, lost_answer: LostFirstAnswer, tables: Any
) -> None:
    _create(alice, channel)

    pending = tables.posts.get_item(Key={"pk": f"OWNER#{alice.sub}", "sk": "PENDING"})["Item"]
    assert len(lost_answer.calls) == 1  # sent twice by the wrapper: committed, then retried
    assert int(pending["pending"]) == 1
