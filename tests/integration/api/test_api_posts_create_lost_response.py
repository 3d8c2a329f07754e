"""A create whose transaction committed but whose answer was lost (botocore retried it).

DynamoDB answers a retried ``TransactWriteItems`` carrying the same ``ClientRequestToken`` with
success; moto ignores the token, so there the retry fails the post's own
``attribute_not_exists`` condition (``[ConditionalCheckFailed, None, None]``). Either way the
create committed and must answer 201, never 500.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from scheduled_posts.data.aws import dynamodb_resource
from tests.support.api import ApiClient, ApiResponse

FAR = "2026-11-30T09:30:00Z"


class LostFirstAnswer:
    """Wraps ``transact_write_items``: the first call commits, then fails the way botocore's
    retry of it does on moto (the same request sent again after the first one committed)."""

    def __init__(self, original: Callable[..., Any]) -> None:
        self.original = original
        self.calls: list[dict[str, Any]] = []

    def __call__(self, **kwargs: Any) -> Any:
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
    wrapper = LostFirstAnswer(client.transact_write_items)
    monkeypatch.setattr(client, "transact_write_items", wrapper)
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

    assert answer.status == 201, answer.json
    assert alice.get(f"/v1/scheduled-posts/{answer.json['schedule_id']}").status == 200


def test_create_post_transaction_carries_a_client_request_token_per_post(
    alice: ApiClient, channel: str, lost_answer: LostFirstAnswer
) -> None:
    lost_answer.calls.append({})  # no lost answer this time: plain calls
    _create(alice, channel)
    _create(alice, channel)

    tokens = [call.get("ClientRequestToken") for call in lost_answer.calls[1:]]
    assert len(tokens) == 2
    assert all(tokens) and len(set(tokens)) == 2
    assert all(len(token) <= 36 for token in tokens)  # the API's limit (1-36 characters)
