"""data/dynamo.py without DynamoDB: the expression builder and the condition-failure check."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from scheduled_posts.data.dynamo import (
    TRANSACTION_ATTEMPTS,
    TransactionConflictExhaustedError,
    UpdateExpression,
    is_condition_failure,
    transact,
)
from scheduled_posts.data.posts import PostRepository, TransactionConflictError
from scheduled_posts.data.series import SeriesRepository


def error(code: str, reasons: list[str] | None = None, message: str = "") -> ClientError:
    response: dict[str, Any] = {"Error": {"Code": code, "Message": message}}
    if reasons is not None:
        response["CancellationReasons"] = [{"Code": r} for r in reasons]
    return ClientError(response, "Op")  # type: ignore[arg-type]


def test_update_expression_names_every_path_and_joins_conditions() -> None:
    b = UpdateExpression()
    b.set_path(("status",), "publishing")
    b.set_path(("deliveries", "c-1"), {"status": "pending"})
    b.remove("lease_shard")
    b.require_equal("status", "scheduled")
    b.require_equal("version", 3)
    kwargs = b.kwargs()
    assert kwargs["UpdateExpression"] == "SET #n0 = :v0, #n1.#n2 = :v1 REMOVE #n3"
    assert kwargs["ConditionExpression"] == "#n0 = :v2 AND #n4 = :v3"
    assert kwargs["ExpressionAttributeNames"] == {
        "#n0": "status",
        "#n1": "deliveries",
        "#n2": "c-1",
        "#n3": "lease_shard",
        "#n4": "version",
    }
    assert kwargs["ExpressionAttributeValues"][":v2"] == "scheduled"


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (error("ConditionalCheckFailedException"), True),
        (error("TransactionCanceledException", ["None", "ConditionalCheckFailed"]), True),
        (error("TransactionCanceledException", ["TransactionConflict"]), False),
        (error("TransactionCanceledException", [], "... [ConditionalCheckFailed] ..."), True),
        (error("ProvisionedThroughputExceededException"), False),
    ],
)
def test_is_condition_failure(exc: ClientError, expected: bool) -> None:
    assert is_condition_failure(exc) is expected


class Client:
    def __init__(self, failures: list[ClientError]) -> None:
        self.failures = failures
        self.calls = 0

    def transact_write_items(self, **kwargs: Any) -> None:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)


def test_transact_retries_a_conflict_then_succeeds() -> None:
    client = Client([error("TransactionCanceledException", ["TransactionConflict"])])
    transact(client, [])
    assert client.calls == 2


def test_transact_gives_up_after_the_attempts() -> None:
    conflict = error("TransactionCanceledException", ["TransactionConflict"])
    client = Client([conflict, conflict])
    with pytest.raises(TransactionConflictExhaustedError):
        transact(client, [], attempts=2)


def test_transact_does_not_retry_a_failed_condition() -> None:
    client = Client([error("TransactionCanceledException", ["ConditionalCheckFailed"])])
    with pytest.raises(ClientError):
        transact(client, [])
    assert client.calls == 1


def test_series_transaction_still_colliding_is_a_409_conflict() -> None:
    # Given a client whose every transaction collides (TransactionConflict)
    conflict = error("TransactionCanceledException", ["TransactionConflict"])
    client = Client([conflict] * TRANSACTION_ATTEMPTS)

    class Resource:
        meta = type("Meta", (), {"client": client})

    series = SeriesRepository(
        posts_table_name="posts",
        due_table_name="due",
        posts=PostRepository(posts_table_name="posts", due_table_name="due"),
        dynamodb=Resource(),
    )
    # When a series write runs out of retries
    with pytest.raises(TransactionConflictError) as raised:
        series._transact([])
    # Then the API answers 409 (as for posts), never 500
    assert raised.value.status == 409
    assert client.calls == TRANSACTION_ATTEMPTS
