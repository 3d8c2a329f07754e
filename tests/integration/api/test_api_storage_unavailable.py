"""A storage failure left after botocore's retries is a 503 problem with Retry-After, not a 500."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from scheduled_posts.data.posts import PostRepository
from tests.support.api import ApiClient


def _raise(code: str):
    def fail(*args, **kwargs):
        raise ClientError({"Error": {"Code": code, "Message": "injected"}}, "GetItem")

    return fail


def test_get_post_throttled_is_503_with_retry_after(
    alice: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(PostRepository, "get", _raise("ProvisionedThroughputExceededException"))
    answer = alice.get("/v1/scheduled-posts/6b1e0c44-0000-4000-8000-000000000000")
    assert answer.status == 503
    assert answer.headers["Retry-After"] == "1"
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert answer.json["status"] == 503


def test_get_post_other_aws_error_is_500_problem(
    alice: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(PostRepository, "get", _raise("InternalServerError"))
    answer = alice.get("/v1/scheduled-posts/6b1e0c44-0000-4000-8000-000000000000")
    assert answer.status == 500
    assert answer.headers["Content-Type"] == "application/problem+json"
