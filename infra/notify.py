"""Notifications: the notify queue and its DLQ, the notifier Lambda on the queue,
and the relay's right to fan out into it (``docs/events.md``, "Notifications").

The relay (``infra/outbox.py``) reads the owner's endpoints (``Query`` on the posts table) and
sends one message per (event, endpoint) to ``NotifyQueue``. The notifier reads the endpoint
(``GetItem``), POSTs the event, hides a failed message for its backoff
(``ChangeMessageVisibility``, part of consuming) and sends a message no retry can fix to
``NotifyDLQ``; SQS moves one that failed ``NOTIFY_MAX_ATTEMPTS`` times there itself
(``maxReceiveCount``). Both queues refuse non-TLS requests (``enforceSSL``).
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.config import StageConfig
from infra.function import ServiceFunctionConstruct
from infra.queues import secure_queue
from scheduled_posts import sizing


class NotifyConstruct(Construct):
    """The notify queue, its DLQ and the notifier.

    Attributes
    ----------
    queue, dlq : aws_sqs.Queue
    notifier : aws_lambda.Function
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StageConfig,
        posts: dynamodb.Table,
        relay: lambda_.Function,
        layer: lambda_.ILayerVersion,
        runtime: lambda_.Runtime,
        functions_root: Path,
    ) -> None:
        super().__init__(scope, construct_id)
        self._config = config
        self._build_queues()
        queue_env = {
            "NOTIFY_QUEUE_URL": self.queue.queue_url,
            "NOTIFY_DLQ_URL": self.dlq.queue_url,
        }
        self.notifier = ServiceFunctionConstruct(
            self,
            "Notifier",
            name="notifier",
            functions_root=functions_root,
            layer=layer,
            runtime=runtime,
            config=config,
            timeout_seconds=sizing.DEFAULT_NOTIFIER_TIMEOUT_SECONDS,
            environment={"POSTS_TABLE_NAME": posts.table_name, **queue_env},
            description="Notifier: notify queue -> signed POSTs to notification endpoints",
        ).function
        self.notifier.add_event_source(
            event_sources.SqsEventSource(
                self.queue,
                batch_size=sizing.DEFAULT_NOTIFIER_BATCH_SIZE,
                report_batch_item_failures=True,
            )
        )
        # The notifier reads one endpoint item per message and may dead-letter a message.
        self.notifier.add_to_role_policy(
            iam.PolicyStatement(actions=["dynamodb:GetItem"], resources=[posts.table_arn])
        )
        self.dlq.grant_send_messages(self.notifier)
        # The relay lists the owner's endpoints (one Query) and queues the notifications.
        relay.add_to_role_policy(
            iam.PolicyStatement(actions=["dynamodb:Query"], resources=[posts.table_arn])
        )
        self.queue.grant_send_messages(relay)
        relay.add_environment("NOTIFY_QUEUE_URL", self.queue.queue_url)

    def _build_queues(self) -> None:
        removal = RemovalPolicy.RETAIN if self._config.retain_data else RemovalPolicy.DESTROY
        self.dlq = secure_queue(
            self,
            "NotifyDLQ",
            retention_period=Duration.days(14),
            removal_policy=removal,
        )
        self.queue = secure_queue(
            self,
            "NotifyQueue",
            retention_period=Duration.days(4),
            visibility_timeout=Duration.seconds(
                sizing.visibility_timeout_seconds(sizing.DEFAULT_NOTIFIER_TIMEOUT_SECONDS)
            ),
            dead_letter_queue=sqs.DeadLetterQueue(
                queue=self.dlq, max_receive_count=self._config.settings.NOTIFY_MAX_ATTEMPTS
            ),
            removal_policy=removal,
        )
