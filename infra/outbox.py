"""Outcome events: the posts table's stream as the outbox, the relay Lambda on it, its
on-failure DLQ, and the EventBridge custom bus (``docs/events.md``).

The relay's event source mapping reads the stream in order (parallelization factor 1: one
batch per shard at a time, so one post's events leave in order), reports batch item failures,
bisects a failing batch, retries a record ``RELAY_RETRY_ATTEMPTS`` times and then sends its
description (shard, sequence numbers; not the data) to ``RelayDLQ``. A filter passes only
``POST`` and series items, so the feed's own items, the feed counters and attempt rows never
invoke it.
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from constructs import Construct

from infra.config import StageConfig
from infra.function import ServiceFunctionConstruct
from infra.queues import secure_queue
from scheduled_posts import keys
from scheduled_posts.lifecycle.events import SERIES_SK_PREFIX

#: Records per relay invocation (a batch of one shard).
RELAY_BATCH_SIZE = 100
#: Retries of a failing stream record before its description goes to the DLQ (Lambda event
#: source mapping ``MaximumRetryAttempts``, 0-10000). Bisection halves the batch on each.
RELAY_RETRY_ATTEMPTS = 50
#: A record older than this is given up (to the DLQ): the stream keeps records 24 h.
RELAY_MAX_RECORD_AGE = Duration.hours(23)
RELAY_TIMEOUT_SECONDS = 60
#: What the relay may do on the posts table (feed items and feed counters only).
RELAY_TABLE_ACTIONS = [
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
]


class OutboxConstruct(Construct):
    """The bus, the relay and its DLQ.

    Attributes
    ----------
    bus : aws_events.EventBus
    relay : aws_lambda.Function
    dlq : aws_sqs.Queue
        Descriptions of stream batches the relay gave up on (``docs/operations.md``).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StageConfig,
        posts: dynamodb.Table,
        layer: lambda_.ILayerVersion,
        runtime: lambda_.Runtime,
        functions_root: Path,
    ) -> None:
        super().__init__(scope, construct_id)
        self.bus = events.EventBus(self, "EventBus")
        self.dlq = secure_queue(
            self,
            "RelayDLQ",
            retention_period=Duration.days(14),
            removal_policy=RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY,
        )
        self.relay = ServiceFunctionConstruct(
            self,
            "Relay",
            name="relay",
            functions_root=functions_root,
            layer=layer,
            runtime=runtime,
            config=config,
            timeout_seconds=RELAY_TIMEOUT_SECONDS,
            environment={
                "POSTS_TABLE_NAME": posts.table_name,
                "EVENT_BUS_NAME": self.bus.event_bus_name,
            },
            description="Outbox relay: posts table stream -> outcome events (bus, feed)",
        ).function
        self._grant(posts)
        self._build_source(posts)

    def _grant(self, posts: dynamodb.Table) -> None:
        # Stream read is granted by the event source. The relay writes only feed items and
        # the owners' feed counters (decisions, "Feed positions"): it reads both, takes
        # positions with UpdateItem and takes back what an erasure overtook with DeleteItem.
        self.relay.add_to_role_policy(
            iam.PolicyStatement(actions=RELAY_TABLE_ACTIONS, resources=[posts.table_arn])
        )
        self.bus.grant_put_events_to(self.relay)

    def _build_source(self, posts: dynamodb.Table) -> None:
        self.relay.add_event_source(
            event_sources.DynamoEventSource(
                posts,
                starting_position=lambda_.StartingPosition.TRIM_HORIZON,
                batch_size=RELAY_BATCH_SIZE,
                bisect_batch_on_error=True,
                report_batch_item_failures=True,
                retry_attempts=RELAY_RETRY_ATTEMPTS,
                max_record_age=RELAY_MAX_RECORD_AGE,
                parallelization_factor=1,
                on_failure=event_sources.SqsDlq(self.dlq),
                filters=[
                    lambda_.FilterCriteria.filter(
                        {
                            "dynamodb": {
                                "Keys": {
                                    "sk": {
                                        "S": [
                                            keys.POST_SK,
                                            {"prefix": SERIES_SK_PREFIX},
                                        ]
                                    }
                                }
                            }
                        }
                    )
                ],
            )
        )
