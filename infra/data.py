"""DynamoDB tables, built from ``scheduled_posts.tables`` (the one definition of keys and TTL).

Only the posts table has a stream (``NEW_AND_OLD_IMAGES``, from its definition): it is the
outbox of outcome events, read by the relay (``infra/outbox.py``; decision "The outbox is the posts
table's DynamoDB stream (`NEW_AND_OLD_IMAGES`), not an outbox item"). Logical ids are pinned to the
definitions' ``logical_id`` (``PostsTable``, ``DueIndexTable``, ``IdempotencyTable``), so moving a
table in the construct tree never replaces it (and its data) in production.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from constructs import Construct

from scheduled_posts.tables import (
    DUE_INDEX_TABLE,
    IDEMPOTENCY_TABLE,
    POSTS_TABLE,
    IndexDef,
    TableDef,
)

_PROJECTIONS = {"ALL": dynamodb.ProjectionType.ALL, "KEYS_ONLY": dynamodb.ProjectionType.KEYS_ONLY}


def _string_key(name: str | None) -> dynamodb.Attribute | None:
    return dynamodb.Attribute(name=name, type=dynamodb.AttributeType.STRING) if name else None


class DataConstruct(Construct):
    """The three tables: on-demand, point-in-time recovery, AWS-managed KMS encryption, TTL.

    ``warm_write_units_per_second`` (write request units per second, or None for a new on-demand
    table's 4,000) is set as warm throughput on the posts and idempotency tables, so they serve
    a burst of due posts at once (DynamoDB Developer Guide, "Understanding DynamoDB warm
    throughput"; sized by ``bench/capacity_sim.py``, ``docs/capacity.md``).

    Attributes
    ----------
    posts, due_index, idempotency : aws_dynamodb.Table
    credentials_key : aws_kms.Key
        ``CredentialsKey``: its data keys seal network channel credentials and Bluesky
        sessions (envelope encryption, ``data/credentials.py``); yearly rotation.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        retain: bool,
        warm_write_units_per_second: int | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self._retain = retain
        # The worker's writes go to the posts and idempotency tables: their write throughput is
        # what binds a burst of due posts (docs/capacity.md); the due index is written by the
        # sweeper, one partition per shard, capped per partition whatever the table's warmth.
        warm = (
            dynamodb.WarmThroughput(write_units_per_second=warm_write_units_per_second)
            if warm_write_units_per_second
            else None
        )
        self.posts = self._build_table(POSTS_TABLE, warm=warm)
        self.due_index = self._build_table(DUE_INDEX_TABLE)
        self.idempotency = self._build_table(IDEMPOTENCY_TABLE, warm=warm)
        self.credentials_key = self._build_credentials_key()

    def _build_credentials_key(self) -> kms.Key:
        key = kms.Key(
            self,
            "CredentialsKey",
            description="Seals channel credentials (Mastodon tokens, Bluesky app passwords)",
            enable_key_rotation=True,
            pending_window=Duration.days(30 if self._retain else 7),
            removal_policy=RemovalPolicy.RETAIN if self._retain else RemovalPolicy.DESTROY,
        )
        cfn = key.node.default_child
        assert isinstance(cfn, kms.CfnKey)
        cfn.override_logical_id("CredentialsKey")  # replacing it would orphan every credential
        return key

    def _build_table(
        self, definition: TableDef, *, warm: dynamodb.WarmThroughput | None = None
    ) -> dynamodb.Table:
        table = dynamodb.Table(
            self,
            definition.logical_id,
            partition_key=_string_key(definition.partition_key),
            sort_key=_string_key(definition.sort_key),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            time_to_live_attribute=definition.ttl_attribute,
            stream=(
                dynamodb.StreamViewType(definition.stream_view_type)
                if definition.stream_view_type
                else None
            ),
            warm_throughput=warm,
            deletion_protection=self._retain,
            removal_policy=RemovalPolicy.RETAIN if self._retain else RemovalPolicy.DESTROY,
        )
        for index in definition.indexes:
            self._add_index(table, index)
        cfn = table.node.default_child
        assert isinstance(cfn, dynamodb.CfnTable)
        cfn.override_logical_id(definition.logical_id)
        return table

    @staticmethod
    def _add_index(table: dynamodb.Table, index: IndexDef) -> None:
        table.add_global_secondary_index(
            index_name=index.name,
            partition_key=dynamodb.Attribute(
                name=index.partition_key, type=dynamodb.AttributeType.STRING
            ),
            sort_key=_string_key(index.sort_key),
            projection_type=_PROJECTIONS[index.projection],
        )
