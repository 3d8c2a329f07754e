"""The emulated SQS event source mapping: batches, partial failures, whole-batch retries."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from local.emulation.lambda_runtime import LambdaContext, LambdaFunction
from local.emulation.sqs import EventSourceMapping, SqsPoller, failed_ids, to_event_record
from tests.support.clock import SimClock
from tests.support.fixtures import AwsResources


def _poller(aws: AwsResources, handler: Any, batch_size: int = 10) -> SqsPoller:
    url = aws.settings.DISPATCH_QUEUE_URL
    return SqsPoller(
        aws.sqs,
        queue_url=url,
        queue_arn="arn:aws:sqs:us-east-1:123456789012:test-DispatchQueue",
        function=LambdaFunction("worker", 30, handler=handler),
        batch_size=batch_size,
        wait_seconds=0,
    )


def _send(aws: AwsResources, *bodies: str) -> None:
    for body in bodies:
        aws.sqs.send_message(QueueUrl=aws.settings.DISPATCH_QUEUE_URL, MessageBody=body)


def _depth(aws: AwsResources) -> int:
    attrs = aws.sqs.get_queue_attributes(
        QueueUrl=aws.settings.DISPATCH_QUEUE_URL,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attrs["ApproximateNumberOfMessages"]) + int(
        attrs["ApproximateNumberOfMessagesNotVisible"]
    )


def test_poller_empty_queue_never_invokes_the_function(aws: AwsResources) -> None:
    calls: list[Any] = []
    outcome = _poller(aws, lambda e, c: calls.append(e)).poll_once()
    assert (outcome, calls) == (None, [])


def test_poller_records_look_like_lambda_sqs_records(aws: AwsResources) -> None:
    _send(aws, '{"n": 1}')
    events: list[dict[str, Any]] = []
    _poller(aws, lambda e, c: events.append(e)).poll_once()
    record = events[0]["Records"][0]
    assert record["body"] == '{"n": 1}'
    assert record["attributes"]["ApproximateReceiveCount"] == "1"
    assert "SentTimestamp" in record["attributes"]
    assert (record["eventSource"], record["awsRegion"]) == ("aws:sqs", "us-east-1")
    assert record["messageId"] and record["receiptHandle"] and record["md5OfBody"]


def test_poller_partial_failure_deletes_only_successful_records(aws: AwsResources) -> None:
    _send(aws, "ok", "bad", "ok2")

    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        failed = [r["messageId"] for r in event["Records"] if r["body"] == "bad"]
        return {"batchItemFailures": [{"itemIdentifier": i} for i in failed]}

    outcome = _poller(aws, handler).poll_once()
    assert outcome is not None
    assert (len(outcome.deleted), len(outcome.retried)) == (2, 1)
    assert _depth(aws) == 1


def test_poller_handler_raises_deletes_nothing(aws: AwsResources) -> None:
    _send(aws, "a", "b")

    def handler(event: dict[str, Any], context: Any) -> None:
        raise RuntimeError("every record failed")

    outcome = _poller(aws, handler).poll_once()
    assert outcome is not None and outcome.deleted == [] and len(outcome.retried) == 2
    assert _depth(aws) == 2


def test_poller_unknown_item_identifier_retries_whole_batch(aws: AwsResources) -> None:
    _send(aws, "a", "b")
    outcome = _poller(
        aws, lambda e, c: {"batchItemFailures": [{"itemIdentifier": "not-in-batch"}]}
    ).poll_once()
    assert outcome is not None and outcome.deleted == []
    assert _depth(aws) == 2


def test_poller_batch_size_bounds_the_batch(aws: AwsResources) -> None:
    _send(aws, *[str(n) for n in range(5)])
    sizes: list[int] = []
    _poller(aws, lambda e, c: sizes.append(len(e["Records"])), batch_size=2).poll_once()
    assert sizes and sizes[0] <= 2


def test_poller_context_counts_down_from_the_timeout(aws: AwsResources) -> None:
    _send(aws, "a")
    remaining: list[int] = []
    _poller(aws, lambda e, c: remaining.append(c.get_remaining_time_in_millis())).poll_once()
    assert 0 < remaining[0] <= 30_000


def test_lambda_context_expired_reports_zero() -> None:
    assert LambdaContext("f", 0).get_remaining_time_in_millis() == 0


def test_failed_ids_none_response_is_full_success() -> None:
    assert failed_ids(None, {"a"}) == set()


def test_failed_ids_malformed_response_fails_whole_batch() -> None:
    assert failed_ids({"batchItemFailures": "a"}, {"a"}) is None


def test_to_event_record_maps_message_attributes() -> None:
    record = to_event_record(
        {
            "MessageId": "m",
            "ReceiptHandle": "r",
            "Body": "b",
            "Attributes": {"ApproximateReceiveCount": "3"},
            "MessageAttributes": {"k": {"StringValue": "v", "DataType": "String"}},
        },
        "arn",
    )
    assert record["messageAttributes"]["k"]["stringValue"] == "v"
    assert record["attributes"] == {"ApproximateReceiveCount": "3"}


def test_lambda_function_serialises_invocations() -> None:
    inside = threading.Semaphore(0)
    active = {"now": 0, "max": 0}
    lock = threading.Lock()

    def handler(event: dict[str, Any], context: Any) -> None:
        with lock:
            active["now"] += 1
            active["max"] = max(active["max"], active["now"])
        inside.release()
        with lock:
            active["now"] -= 1

    function = LambdaFunction("api", 5, handler=handler)
    threads = [threading.Thread(target=function.invoke, args=({},)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert active["max"] == 1


def test_poller_emulated_long_poll_returns_message_sent_during_the_wait(
    aws: AwsResources,
) -> None:
    poller = _poller(aws, lambda e, c: None)
    poller.wait_seconds = 5
    poller.poll_interval_seconds = 0.05
    sender = threading.Timer(0.2, _send, args=(aws, "late"))
    sender.start()
    messages = poller.receive()
    sender.join()
    assert [m["Body"] for m in messages] == ["late"]


def test_lambda_context_counts_down_on_the_given_clock() -> None:
    now = [1000.0]
    context = LambdaContext("f", 30, clock=lambda: now[0])
    now[0] += 12.5

    assert context.get_remaining_time_in_millis() == 17_500


def test_mapping_invocation_overrunning_its_timeout_deletes_nothing(
    aws: AwsResources, clock: SimClock
) -> None:
    # Given a worker that takes longer than its 30 s timeout on the simulated clock
    _send(aws, "a", "b")

    def slow(event: dict[str, Any], context: Any) -> dict[str, Any]:
        clock.advance(31)
        return {"batchItemFailures": []}

    mapping = EventSourceMapping(
        aws.sqs,
        queue_url=aws.settings.DISPATCH_QUEUE_URL,
        queue_arn="arn:aws:sqs:us-east-1:123456789012:test-DispatchQueue",
        function=LambdaFunction("worker", 30, handler=slow, clock=clock.seconds),
    )

    # When the mapping invokes it
    outcome = mapping.poll_once()

    # Then the whole batch is left for a retry, as Lambda does for a timed-out invocation
    assert outcome is not None
    assert (outcome.error, outcome.deleted, len(outcome.retried)) == ("timeout", [], 2)
    assert _depth(aws) == 2


def test_poller_runs_several_batches_at_once(aws: AwsResources) -> None:
    # Three one-record batches can all be inside the handler together only when the poller keeps
    # three in flight: one batch at a time breaks the barrier, and every batch is retried.
    barrier = threading.Barrier(3, timeout=10)
    settled = threading.Event()

    def handler(event: dict[str, Any], context: Any) -> None:
        barrier.wait()

    def on_batch(records: list[dict[str, Any]], outcome: Any) -> None:
        if poller.batches >= 3:
            settled.set()

    _send(aws, "a", "b", "c")
    poller = SqsPoller(
        aws.sqs,
        queue_url=aws.settings.DISPATCH_QUEUE_URL,
        queue_arn="arn:aws:sqs:us-east-1:123456789012:test-DispatchQueue",
        function=LambdaFunction("worker", 30, handler=handler, max_concurrency=3),
        batch_size=1,
        wait_seconds=1,
        poll_interval_seconds=0.01,
        concurrency=3,
        on_batch=on_batch,
    )
    poller.start()
    try:
        assert settled.wait(20)
    finally:
        poller.stop()
        poller.join(5)
    assert not barrier.broken
    assert _depth(aws) == 0


def test_poller_refuses_no_concurrency(aws: AwsResources) -> None:
    with pytest.raises(ValueError, match="concurrency"):
        SqsPoller(
            aws.sqs,
            queue_url=aws.settings.DISPATCH_QUEUE_URL,
            queue_arn="arn:aws:sqs:us-east-1:123456789012:q",
            function=LambdaFunction("worker", 30, handler=lambda e, c: None),
            concurrency=0,
        )
