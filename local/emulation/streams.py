"""A DynamoDB stream event source mapping for emulated AWS (moto has no Lambda trigger on
streams): poll the table's stream with ``GetShardIterator``/``GetRecords`` and hand batches to a
Lambda handler in the event shape Lambda uses, honouring ``batchItemFailures``.

Per shard, a checkpoint (the last sequence number the handler finished) is kept; a poll reads
after it. When the handler reports failures, the checkpoint stops before the lowest failed
sequence number and the next poll hands that record (and those after it) over again, as Lambda
does with ``ReportBatchItemFailures``. A handler that raises leaves the checkpoint where it was.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import boto3
from botocore.config import Config

log = logging.getLogger("local.streams")

Handler = Callable[[dict[str, Any], Any], dict[str, Any] | None]

#: Records per batch (the event source mapping's ``BatchSize``; the CDK app uses the same).
STREAM_BATCH_SIZE = 100


def streams_client() -> Any:
    """A ``dynamodbstreams`` client. botocore would otherwise send stream-ARN calls to an
    account-based endpoint (``<account>.streams-ddb...``) that in-process moto does not match."""
    return boto3.client("dynamodbstreams", config=Config(account_id_endpoint_mode="disabled"))


def stream_arn(dynamodb: Any, table_name: str) -> str:
    """The table's latest stream ARN (KeyError when it has no stream)."""
    return str(dynamodb.describe_table(TableName=table_name)["Table"]["LatestStreamArn"])


@dataclass
class StreamPoller:
    """Feeds one table's stream to ``handler(event, context)``.

    ``context_factory()`` makes each invocation's Lambda context; ``batch_size`` records at most
    per invocation.
    """

    streams: Any
    arn: str
    handler: Handler
    context_factory: Callable[[], Any]
    batch_size: int = STREAM_BATCH_SIZE
    checkpoints: dict[str, str | None] = field(default_factory=dict)

    def _records(self, shard_id: str) -> list[dict[str, Any]]:
        after = self.checkpoints.get(shard_id)
        kwargs: dict[str, Any] = {"StreamArn": self.arn, "ShardId": shard_id}
        if after is None:
            kwargs["ShardIteratorType"] = "TRIM_HORIZON"
        else:
            kwargs.update(ShardIteratorType="AFTER_SEQUENCE_NUMBER", SequenceNumber=after)
        iterator = self.streams.get_shard_iterator(**kwargs)["ShardIterator"]
        records = self.streams.get_records(ShardIterator=iterator, Limit=self.batch_size)
        return list(records.get("Records", []))

    def poll(self) -> int:
        """One pass over every shard: at most one batch each. Returns the records the handler
        finished (checkpoints moved past)."""
        done = 0
        shards = self.streams.describe_stream(StreamArn=self.arn)["StreamDescription"]["Shards"]
        for shard in shards:
            shard_id = shard["ShardId"]
            records = self._records(shard_id)
            if not records:
                continue
            event = {
                "Records": [
                    {**r, "eventSourceARN": self.arn, "eventSource": "aws:dynamodb"}
                    for r in records
                ]
            }
            try:
                response = self.handler(event, self.context_factory()) or {}
            except Exception:
                log.exception("stream handler failed; the batch will be handed over again")
                continue
            failed = {f["itemIdentifier"] for f in response.get("batchItemFailures", [])}
            for record in records:
                sequence = record["dynamodb"]["SequenceNumber"]
                if sequence in failed:
                    break
                self.checkpoints[shard_id] = sequence
                done += 1
        return done

    def caught_up(self) -> bool:
        """True when no shard has a record after its checkpoint."""
        shards = self.streams.describe_stream(StreamArn=self.arn)["StreamDescription"]["Shards"]
        return not any(self._records(shard["ShardId"]) for shard in shards)

    def drain(self, max_polls: int = 100) -> int:
        """Poll until a pass finishes nothing (or ``max_polls``); the records finished."""
        total = 0
        for _ in range(max_polls):
            done = self.poll()
            total += done
            if done == 0:
                return total
        return total


class StreamLoop:
    """Polls a :class:`StreamPoller` every ``interval_seconds`` on a daemon thread until
    ``stop_event`` is set (the local stack's relay trigger)."""

    def __init__(self, poller: StreamPoller, *, interval_seconds: float, stop_event: Any) -> None:
        import threading

        self.poller = poller
        self.interval_seconds = interval_seconds
        self.stop_event = stop_event
        self._thread = threading.Thread(target=self._loop, name="stream-relay", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        if self._thread.ident is not None:
            self._thread.join(timeout)

    def _loop(self) -> None:
        while not self.stop_event.is_set():
            try:
                self.poller.poll()
            except Exception:
                log.exception("stream poll failed; retrying")
            self.stop_event.wait(self.interval_seconds)
