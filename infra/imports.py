"""Bulk imports (decision "Bulk import"): the import queue and its DLQ, the importer Lambda on
both, and the API's right to start an import.

The API keeps a committed import's file under ``imports/<owner>/<import_id>`` in the media
bucket (``s3:PutObject``; ``s3:DeleteObject`` for the account erasure; the bucket's lifecycle
rule expires every import file after ``IMPORT_FILE_EXPIRATION_DAYS``) and sends one message per
chunk of 100 rows to ``ImportQueue``. The
importer reads the file (``s3:GetObject`` on ``imports/*`` only), creates each row's post as
the API's create does (posts and due-index tables read/write, the dispatch queues for a post
due within the lookahead) and records the chunk. A chunk that failed ``IMPORT_MAX_RECEIVES``
times moves to ``ImportDLQ``, where the same function's second mapping marks its import
``failed`` (so a stuck import is reported). Both queues refuse non-TLS requests (``enforceSSL``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sqs as sqs
from constructs import Construct, IConstruct

from infra.config import StageConfig
from infra.dispatch import dispatch_queue_environment
from infra.function import ServiceFunctionConstruct
from infra.queues import secure_queue
from scheduled_posts import sizing
from scheduled_posts.buckets import IMPORT_OBJECTS_PATTERN, MEDIA_BUCKET
from scheduled_posts.tables import IMPORT_DLQ, IMPORT_MAX_RECEIVES, IMPORT_QUEUE


class ImportsConstruct(Construct):
    """The import queue, its DLQ and the importer.

    Attributes
    ----------
    queue, dlq : aws_sqs.Queue
    importer : aws_lambda.Function
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StageConfig,
        posts: dynamodb.Table,
        due_index: dynamodb.Table,
        dispatch_queues: Sequence[sqs.IQueue],
        bucket: s3.IBucket,
        api: lambda_.Function,
        layer: lambda_.ILayerVersion,
        runtime: lambda_.Runtime,
        functions_root: Path,
    ) -> None:
        super().__init__(scope, construct_id)
        self._config = config
        self._build_queues()
        queue_env = {
            IMPORT_QUEUE.settings_name: self.queue.queue_url,
            IMPORT_DLQ.settings_name: self.dlq.queue_url,
        }
        self.importer = ServiceFunctionConstruct(
            self,
            "Importer",
            name="importer",
            functions_root=functions_root,
            layer=layer,
            runtime=runtime,
            config=config,
            timeout_seconds=sizing.DEFAULT_IMPORTER_TIMEOUT_SECONDS,
            environment={
                "POSTS_TABLE_NAME": posts.table_name,
                "DUE_INDEX_TABLE_NAME": due_index.table_name,
                MEDIA_BUCKET.settings_name: bucket.bucket_name,
                **dispatch_queue_environment(dispatch_queues),
                **queue_env,
            },
            description="Importer: import queue -> one chunk of an import's posts per record",
        ).function
        for queue in (self.queue, self.dlq):
            self.importer.add_event_source(
                event_sources.SqsEventSource(
                    queue,
                    batch_size=sizing.DEFAULT_IMPORTER_BATCH_SIZE,
                    report_batch_item_failures=True,
                )
            )
        # Creates posts as the API's create does.
        for table in (posts, due_index):
            table.grant_read_write_data(self.importer)
        for dispatch in dispatch_queues:
            dispatch.grant_send_messages(self.importer)
        objects = bucket.arn_for_objects(IMPORT_OBJECTS_PATTERN)
        self.importer.add_to_role_policy(
            iam.PolicyStatement(actions=["s3:GetObject"], resources=[objects])
        )
        # The API keeps the file and queues the chunks (and reads a file uploaded through its
        # pre-signed form); the account erasure deletes the owner's files.
        api.add_to_role_policy(
            iam.PolicyStatement(
                actions=["s3:PutObject", "s3:GetObject", "s3:DeleteObject"], resources=[objects]
            )
        )
        self.queue.grant_send_messages(api)
        api.add_environment(IMPORT_QUEUE.settings_name, self.queue.queue_url)

    def acknowledgements(
        self, *, api: lambda_.Function, nag_prefix: str
    ) -> list[tuple[IConstruct, str, str]]:
        """(scope, cdk-nag finding id, reason) for the findings accepted on purpose here; the
        stack adds the importer's common Lambda ones (basic execution role, X-Ray, runtime)."""
        objects = f"<{MEDIA_BUCKET.logical_id}.Arn>/{IMPORT_OBJECTS_PATTERN}"
        reason = (
            "Import files are one object per import (imports/<owner>/<import_id>), created at "
            "run time: the grant covers the imports/ prefix only (API PutObject, GetObject and "
            "DeleteObject for the account erasure; importer GetObject)."
        )
        return [
            (
                self.dlq,
                f"{nag_prefix}SQS3",
                "This queue is the import queue's dead-letter queue (its arrival marks the "
                "import failed); a DLQ of a DLQ would only hide failures.",
            ),
            (api, f"{nag_prefix}IAM5[Resource::{objects}]", reason),
            (self.importer, f"{nag_prefix}IAM5[Resource::{objects}]", reason),
        ]

    def _build_queues(self) -> None:
        removal = RemovalPolicy.RETAIN if self._config.retain_data else RemovalPolicy.DESTROY
        # Both queues feed the importer: both hide a received message for 6 x its timeout.
        visibility = Duration.seconds(
            sizing.visibility_timeout_seconds(sizing.DEFAULT_IMPORTER_TIMEOUT_SECONDS)
        )
        self.dlq = secure_queue(
            self,
            IMPORT_DLQ.logical_id,
            retention_period=Duration.days(IMPORT_DLQ.retention_days),
            visibility_timeout=visibility,
            removal_policy=removal,
        )
        self.queue = secure_queue(
            self,
            IMPORT_QUEUE.logical_id,
            retention_period=Duration.days(IMPORT_QUEUE.retention_days),
            visibility_timeout=visibility,
            dead_letter_queue=sqs.DeadLetterQueue(
                queue=self.dlq, max_receive_count=IMPORT_MAX_RECEIVES
            ),
            removal_policy=removal,
        )
