"""The fire path and its operations: dispatch queue + DLQ, sweeper, worker, watchdog, reconciler,
and the materializer of recurring schedules, and the verifier (scheduled verification).

Sizing (see ``docs/decisions.md``): one post takes at most ``DELIVERY_TIMEOUT_SECONDS`` + 2 s
(its channels are delivered concurrently), a batch of ``worker_batch_size`` posts is processed
in sequence, and the config refuses a worker timeout under twice a full batch. The queue's
visibility timeout is 6 x the worker timeout (AWS Lambda Developer Guide, "Using Lambda with
Amazon SQS"); redrive to the DLQ after ``MAX_RECEIVE_COUNT`` receives.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_scheduler as scheduler
from aws_cdk import aws_scheduler_targets as targets
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.config import StageConfig
from infra.function import ServiceFunctionConstruct
from infra.queues import secure_queue
from scheduled_posts.tables import DISPATCH_DLQ, DISPATCH_QUEUE, QueueDef

#: What the materializer may do on PostsTable and DueIndexTable (and their indexes): the calls
#: of ``data/series.py`` and ``data/posts.py`` it makes, a ``TransactWriteItems`` needing the
#: action of each item (DynamoDB Developer Guide, "Using IAM with DynamoDB transactions").
MATERIALIZER_TABLE_ACTIONS = (
    "dynamodb:GetItem",
    "dynamodb:Query",
    "dynamodb:ConditionCheckItem",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
)
#: The verifier's posts-table actions: BatchGetItem (the window's posts and the channels),
#: UpdateItem (``verified_at``/``verification`` and rate-limit counters). No Query, Scan, Put or
#: Delete.
VERIFIER_POSTS_ACTIONS = ("dynamodb:BatchGetItem", "dynamodb:UpdateItem")
#: Schedule DLQs keep failed invocations for the SQS maximum, 14 days.
_SCHEDULE_DLQ_RETENTION = Duration.days(14)


def dispatch_queue_environment(queues: Sequence[sqs.IQueue]) -> dict[str, str]:
    """What a sender of dispatch messages is told: ``DISPATCH_QUEUE_URL`` (the first queue) and,
    with several, ``DISPATCH_QUEUE_URLS`` (all, in order; absent with one, so a one-queue
    template is unchanged)."""
    env = {DISPATCH_QUEUE.settings_name: queues[0].queue_url}
    if len(queues) > 1:
        env["DISPATCH_QUEUE_URLS"] = ",".join(q.queue_url for q in queues)
    return env


class DispatchConstruct(Construct):
    """Queues, the four dispatch Lambdas, their grants and their schedules.

    Attributes
    ----------
    queue, dlq : aws_sqs.Queue
        ``DispatchQueue`` and ``DispatchDLQ`` (logical ids pinned).
    queues : list[aws_sqs.Queue]
        Every dispatch queue (``config.dispatch_queue_count``): ``queue`` first, then
        ``DispatchQueue2``, ``DispatchQueue3``, ...; each has its own worker mapping and
        dead-letters to ``dlq``.
    sweeper, worker, watchdog, reconciler, materializer, verifier : aws_lambda.Function
    schedule_dlqs : dict[str, aws_sqs.Queue]
        One dead-letter queue per schedule, keyed by function name.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StageConfig,
        posts: dynamodb.ITable,
        due_index: dynamodb.ITable,
        idempotency: dynamodb.ITable,
        credentials_key: kms.IKey,
        layer: lambda_.ILayerVersion,
        runtime: lambda_.Runtime,
        functions_root: Path,
    ) -> None:
        super().__init__(scope, construct_id)
        self._config = config
        self._layer = layer
        self._runtime = runtime
        self._functions_root = functions_root
        self.dlq = self._build_queue(DISPATCH_DLQ, dead_letter=None)
        self.queue = self._build_queue(DISPATCH_QUEUE, dead_letter=self.dlq)
        self.queues = [self.queue] + [
            self._build_queue(
                replace(DISPATCH_QUEUE, logical_id=f"{DISPATCH_QUEUE.logical_id}{n}"),
                dead_letter=self.dlq,
            )
            for n in range(2, config.dispatch_queue_count + 1)
        ]
        self.schedule_dlqs: dict[str, sqs.Queue] = {}

        queue_env = dispatch_queue_environment(self.queues)
        tables_env = {
            "POSTS_TABLE_NAME": posts.table_name,
            "DUE_INDEX_TABLE_NAME": due_index.table_name,
        }
        self.sweeper = self._build_function(
            "sweeper",
            timeout_seconds=config.sweeper_timeout_seconds,
            environment={"DUE_INDEX_TABLE_NAME": due_index.table_name, **queue_env},
            description="Sends posts due within the lookahead to the dispatch queue",
            memory_mb=config.sweeper_memory_mb,
        )
        self.worker = self._build_function(
            "worker",
            timeout_seconds=config.worker_timeout_seconds,
            environment={
                **tables_env,
                "IDEMPOTENCY_TABLE_NAME": idempotency.table_name,
                "CREDENTIALS_KEY_ID": credentials_key.key_arn,
                **queue_env,
            },
            description="Claims and publishes posts from the dispatch queue",
        )
        self.watchdog = self._build_function(
            "watchdog",
            timeout_seconds=config.watchdog_timeout_seconds,
            environment={**tables_env, **queue_env},
            description="Returns posts with expired leases to dispatch",
        )
        self.reconciler = self._build_function(
            "reconciler",
            timeout_seconds=config.reconciler_timeout_seconds,
            environment={**tables_env, **queue_env},
            description="Rescues posts that fell due but were not dispatched",
        )
        self.materializer = self._build_function(
            "materializer",
            timeout_seconds=config.materializer_timeout_seconds,
            environment=dict(tables_env),
            description="Writes the next occurrences of recurring schedules as posts",
        )
        self.verifier = self._build_function(
            "verifier",
            timeout_seconds=config.verifier_timeout_seconds,
            environment=dict(tables_env),
            description="Reads recently published deliveries back from their networks",
        )
        self._grant(posts=posts, due_index=due_index, idempotency=idempotency)
        # Only the worker (and the API) open credentials; it also seals refreshed sessions.
        credentials_key.grant(self.worker, "kms:Decrypt", "kms:GenerateDataKey")
        self._build_worker_source()
        settings = config.settings
        self._build_schedule("sweeper", self.sweeper, settings.SWEEP_INTERVAL_SECONDS)
        self._build_schedule("watchdog", self.watchdog, settings.WATCHDOG_INTERVAL_SECONDS)
        self._build_schedule("reconciler", self.reconciler, settings.RECONCILE_INTERVAL_SECONDS)
        self._build_schedule(
            "materializer", self.materializer, settings.MATERIALIZE_INTERVAL_SECONDS
        )
        self._build_schedule("verifier", self.verifier, settings.VERIFY_INTERVAL_SECONDS)

    def _build_queue(self, definition: QueueDef, *, dead_letter: sqs.IQueue | None) -> sqs.Queue:
        queue = secure_queue(
            self,
            definition.logical_id,
            retention_period=Duration.days(definition.retention_days),
            visibility_timeout=Duration.seconds(self._config.visibility_timeout_seconds),
            dead_letter_queue=(
                sqs.DeadLetterQueue(
                    queue=dead_letter,
                    max_receive_count=self._config.settings.MAX_RECEIVE_COUNT,
                )
                if dead_letter is not None
                else None
            ),
            removal_policy=RemovalPolicy.RETAIN
            if self._config.retain_data
            else RemovalPolicy.DESTROY,
        )
        cfn = queue.node.default_child
        assert isinstance(cfn, sqs.CfnQueue)
        cfn.override_logical_id(definition.logical_id)
        return queue

    def _build_function(
        self,
        name: str,
        *,
        timeout_seconds: int,
        environment: dict[str, str],
        description: str,
        memory_mb: int | None = None,
    ) -> lambda_.Function:
        construct = ServiceFunctionConstruct(
            self,
            name.capitalize(),
            name=name,
            functions_root=self._functions_root,
            layer=self._layer,
            runtime=self._runtime,
            config=self._config,
            timeout_seconds=timeout_seconds,
            environment=environment,
            description=description,
            memory_mb=memory_mb,
        )
        return construct.function

    def _grant(
        self,
        *,
        posts: dynamodb.ITable,
        due_index: dynamodb.ITable,
        idempotency: dynamodb.ITable,
    ) -> None:
        # Sweeper: the due index only, never post content (docs/data-model.md, "Who may read what").
        due_index.grant_read_write_data(self.sweeper)
        # Worker: consume is granted by its event sources; it re-sends with delays.
        posts.grant_read_write_data(self.worker)
        due_index.grant_read_data(self.worker)
        idempotency.grant_read_write_data(self.worker)
        for function in (self.watchdog, self.reconciler):
            posts.grant_read_write_data(function)
            due_index.grant_read_data(function)
        # Every sender may send to every dispatch queue (a post's queue is its id's hash).
        for queue in self.queues:
            for function in (self.sweeper, self.worker, self.watchdog, self.reconciler):
                queue.grant_send_messages(function)
        # Materializer: series and occurrence posts, their due entries and the series index;
        # no queue (an occurrence due within the lookahead gets a late marker for the sweeper).
        # Only what it calls: point reads, Queries and (transactional) single-item writes;
        # never a Scan or a batch (it reads only the series due for extension).
        for table in (posts, due_index):
            table.grant(self.materializer, *MATERIALIZER_TABLE_ACTIONS)
        # Verifier: the window's due entries (Query), its posts and their channels, its writes.
        due_index.grant(self.verifier, "dynamodb:Query")
        posts.grant(self.verifier, *VERIFIER_POSTS_ACTIONS)

    def _build_worker_source(self) -> None:
        for queue in self.queues:
            self.worker.add_event_source(
                event_sources.SqsEventSource(
                    queue,
                    batch_size=self._config.worker_batch_size,
                    report_batch_item_failures=True,
                    max_concurrency=self._config.worker_max_concurrency,
                )
            )

    def _build_schedule(self, name: str, function: lambda_.IFunction, period_seconds: int) -> None:
        """A rate schedule with a retry policy and its own dead-letter queue.

        ``max_event_age`` equals the period: a run older than one period is superseded by the
        next one (EventBridge Scheduler accepts 60 s to 24 h).
        """
        title = name.capitalize()
        dlq = secure_queue(
            self,
            f"{title}ScheduleDLQ",
            retention_period=_SCHEDULE_DLQ_RETENTION,
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.schedule_dlqs[name] = dlq
        scheduler.Schedule(
            self,
            f"{title}Schedule",
            schedule=scheduler.ScheduleExpression.rate(Duration.minutes(period_seconds // 60)),
            target=targets.LambdaInvoke(
                function,
                dead_letter_queue=dlq,
                retry_attempts=self._config.schedule_retry_attempts,
                max_event_age=Duration.seconds(period_seconds),
            ),
            description=f"Runs the {name} every {period_seconds // 60} minute(s)",
        )
