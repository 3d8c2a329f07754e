"""PostRepository transaction handling without DynamoDB: bounded TransactionConflict retries
(edit and cancel are transactions; create is ordered single writes since issue 16)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.exceptions import ClientError

from scheduled_posts.data.dynamo import TRANSACTION_ATTEMPTS
from scheduled_posts.data.posts import PostRepository, TransactionConflictError
from scheduled_posts.models.post import Post, PostStatus

AT = datetime(2026, 11, 30, 9, 30, tzinfo=UTC)


def _cancelled(*codes: str) -> ClientError:
    return ClientError(
        {
            "Error": {"Code": "TransactionCanceledException", "Message": "cancelled"},
            "CancellationReasons": [{"Code": c} for c in codes],
        },
        "TransactWriteItems",
    )


class _Client:
    def __init__(self, failures: list[ClientError]) -> None:
        self.failures = failures
        self.calls = 0

    def transact_write_items(self, **_: Any) -> None:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)


class _Resource:
    def __init__(self, client: _Client) -> None:
        self.meta = type("Meta", (), {"client": client})()


def _repo(client: _Client) -> PostRepository:
    return PostRepository(posts_table_name="p", due_table_name="d", dynamodb=_Resource(client))


def _post() -> Post:
    return Post(
        schedule_id="s1",
        owner="alice",
        status=PostStatus.SCHEDULED,
        content="x",
        publish_at=AT,
        channel_ids=["c1"],
        created_at=AT,
        updated_at=AT,
    )


def _edited(post: Post) -> Post:
    return post.model_copy(update={"content": "y", "version": post.version + 1})


def test_edit_transaction_conflict_is_retried_then_succeeds() -> None:
    client = _Client([_cancelled("TransactionConflict", "None", "None")] * 2)
    _repo(client).replace(_post(), _edited(_post()), old_late=False, new_late=False)
    assert client.calls == 3


def test_edit_transaction_conflict_every_time_gives_up_as_409() -> None:
    client = _Client([_cancelled("TransactionConflict", "None", "None")] * 10)
    with pytest.raises(TransactionConflictError) as info:
        _repo(client).replace(_post(), _edited(_post()), old_late=False, new_late=False)
    assert client.calls == TRANSACTION_ATTEMPTS
    assert info.value.status == 409


def test_edit_other_client_error_is_not_retried() -> None:
    error = ClientError({"Error": {"Code": "ValidationException", "Message": "x"}}, "Tx")
    client = _Client([error])
    with pytest.raises(ClientError):
        _repo(client).replace(_post(), _edited(_post()), old_late=False, new_late=False)
    assert client.calls == 1
