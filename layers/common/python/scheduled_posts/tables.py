"""The one definition of every table, index and queue.

Both the CDK app (``infra/data.py``, ``infra/dispatch.py``) and the local stack build their
resources from these definitions, and the data layer uses the same attribute names, so the three
cannot drift. Importable without ``aws_cdk`` or boto3.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class IndexDef:
    """A global secondary index: name, key attribute names, projection (``ALL``/``KEYS_ONLY``)."""

    name: str
    partition_key: str
    sort_key: str | None
    projection: str = "ALL"


@dataclass(frozen=True)
class TableDef:
    """A DynamoDB table: CDK logical id, key names (all strings), GSIs, TTL attribute and the
    stream's view type (``NEW_AND_OLD_IMAGES`` or None for no stream)."""

    logical_id: str
    settings_name: str
    partition_key: str
    sort_key: str | None
    indexes: tuple[IndexDef, ...] = field(default_factory=tuple)
    ttl_attribute: str | None = None
    stream_view_type: str | None = None

    @property
    def key_attributes(self) -> tuple[str, ...]:
        """Every attribute used in a key of the table or an index (all of type S)."""
        names = [self.partition_key] + ([self.sort_key] if self.sort_key else [])
        for index in self.indexes:
            names.append(index.partition_key)
            if index.sort_key:
                names.append(index.sort_key)
        return tuple(dict.fromkeys(names))


BY_OWNER_INDEX = IndexDef("by_owner", "gsi1pk", "gsi1sk", "ALL")
BY_LEASE_INDEX = IndexDef("by_lease", "lease_shard", "lease_expires_at", "KEYS_ONLY")
#: A recurring schedule's occurrences, sparse: only occurrence posts carry
#: ``occurrence_of`` (the series id; the series item itself has none). Sorted like
#: ``by_owner`` (``<publish_at>#<schedule_id>``).
BY_SERIES_INDEX = IndexDef("by_series", "occurrence_of", "gsi1sk", "ALL")

POSTS_TABLE = TableDef(
    logical_id="PostsTable",
    settings_name="POSTS_TABLE_NAME",
    partition_key="pk",
    sort_key="sk",
    indexes=(BY_OWNER_INDEX, BY_LEASE_INDEX, BY_SERIES_INDEX),
    ttl_attribute="expires_at",
    # The outbox of outcome events (docs/events.md; decision "The outbox is the posts table's
    # DynamoDB stream (`NEW_AND_OLD_IMAGES`), not an outbox item"): every committed write of a
    # post, before and after, read by the relay.
    stream_view_type="NEW_AND_OLD_IMAGES",
)

DUE_INDEX_TABLE = TableDef(
    logical_id="DueIndexTable",
    settings_name="DUE_INDEX_TABLE_NAME",
    partition_key="bucket",
    sort_key="due",
    ttl_attribute="expires_at",
)

IDEMPOTENCY_TABLE = TableDef(
    logical_id="IdempotencyTable",
    settings_name="IDEMPOTENCY_TABLE_NAME",
    partition_key="id",
    sort_key=None,
    ttl_attribute="expiration",
)

ALL_TABLES: tuple[TableDef, ...] = (POSTS_TABLE, DUE_INDEX_TABLE, IDEMPOTENCY_TABLE)


@dataclass(frozen=True)
class QueueDef:
    """An SQS standard queue. ``dead_letter`` names the DLQ's logical id, if any."""

    logical_id: str
    settings_name: str
    dead_letter: str | None = None
    retention_days: int = 4


DISPATCH_DLQ = QueueDef("DispatchDLQ", "DISPATCH_DLQ_URL", retention_days=14)
DISPATCH_QUEUE = QueueDef("DispatchQueue", "DISPATCH_QUEUE_URL", dead_letter="DispatchDLQ")
ALL_QUEUES: tuple[QueueDef, ...] = (DISPATCH_DLQ, DISPATCH_QUEUE)
#: Notifications to users' endpoints (``docs/events.md``): the relay sends, the notifier consumes;
#: after ``NOTIFY_MAX_ATTEMPTS`` receives a message moves to the DLQ. Sized apart from the dispatch
#: queues (their own receive count and visibility), so not in :data:`ALL_QUEUES`.
NOTIFY_DLQ = QueueDef("NotifyDLQ", "NOTIFY_DLQ_URL", retention_days=14)
NOTIFY_QUEUE = QueueDef("NotifyQueue", "NOTIFY_QUEUE_URL", dead_letter="NotifyDLQ")
NOTIFY_QUEUES: tuple[QueueDef, ...] = (NOTIFY_DLQ, NOTIFY_QUEUE)
#: Bulk imports (decision "Bulk import"): one message per chunk of an import, consumed by the
#: importer; after ``IMPORT_MAX_RECEIVES`` receives a chunk moves to the DLQ, whose consumer
#: marks the import ``failed``.
IMPORT_DLQ = QueueDef("ImportDLQ", "IMPORT_DLQ_URL", retention_days=14)
IMPORT_QUEUE = QueueDef("ImportQueue", "IMPORT_QUEUE_URL", dead_letter="ImportDLQ")
IMPORT_QUEUES: tuple[QueueDef, ...] = (IMPORT_DLQ, IMPORT_QUEUE)
#: Receives of one chunk before the DLQ (a chunk is idempotent, so retries are safe). Five, as
#: the Lambda developer guide advises for an SQS event source ("set the maxReceiveCount on the
#: source queue's redrive policy to at least 5"): a crash, a lost delete and a throttled run or
#: two must not fail an import that would have finished.
IMPORT_MAX_RECEIVES = 5


def create_table_request(table: TableDef, table_name: str) -> dict[str, object]:
    """The boto3 ``create_table`` kwargs for a table (on-demand billing), for moto and local."""
    key_schema = [{"AttributeName": table.partition_key, "KeyType": "HASH"}]
    if table.sort_key:
        key_schema.append({"AttributeName": table.sort_key, "KeyType": "RANGE"})
    request: dict[str, object] = {
        "TableName": table_name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [
            {"AttributeName": name, "AttributeType": "S"} for name in table.key_attributes
        ],
        "KeySchema": key_schema,
    }
    if table.indexes:
        gsis = []
        for index in table.indexes:
            schema = [{"AttributeName": index.partition_key, "KeyType": "HASH"}]
            if index.sort_key:
                schema.append({"AttributeName": index.sort_key, "KeyType": "RANGE"})
            gsis.append(
                {
                    "IndexName": index.name,
                    "KeySchema": schema,
                    "Projection": {"ProjectionType": index.projection},
                }
            )
        request["GlobalSecondaryIndexes"] = gsis
    if table.stream_view_type:
        request["StreamSpecification"] = {
            "StreamEnabled": True,
            "StreamViewType": table.stream_view_type,
        }
    return request
