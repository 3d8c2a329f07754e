"""Key formats of every item (see ``docs/data-model.md``). Pure functions, no I/O."""

from __future__ import annotations

import uuid
import zlib
from datetime import datetime

from scheduled_posts.clock import format_instant, hour_bucket

POST_SK = "POST"
PENDING_SK = "PENDING"
#: The per-user draft counter (``drafts``, under ``MAX_DRAFTS``) beside ``PENDING``.
DRAFTS_SK = "DRAFTS"
RELEASE_SHARDS = 8
WATERMARK_BUCKET = "WATERMARK"
LATE_PREFIX = "LATE#"
#: A post due within ``LOOKAHEAD_SECONDS + LATE_MARGIN_SECONDS`` of its write gets a late marker.
LATE_MARGIN_SECONDS = 60
#: ``~`` sorts after every character of an id or instant: the upper end of a ``due`` range.
SK_HIGH = "~"


def shard_for(schedule_id: str, shard_count: int) -> int:
    """The write shard of a post: ``crc32(schedule_id) % shard_count`` (stable across processes)."""
    return zlib.crc32(schedule_id.encode()) % shard_count


def post_pk(schedule_id: str) -> str:
    return f"POST#{schedule_id}"


def schedule_id_from_post_pk(pk: str) -> str:
    """The inverse of ``post_pk``: a post item stores its id only in its key (decision "A post item
    stores its id and owner only in its keys")."""
    prefix = "POST#"
    if not pk.startswith(prefix):
        raise ValueError(f"not a post key: {pk!r}")
    return pk[len(prefix) :]


def owner_pk(owner: str) -> str:
    return f"OWNER#{owner}"


def channel_sk(channel_id: str) -> str:
    return f"CHANNEL#{channel_id}"


#: The per-user channel counter item (``n``), beside the channels under ``OWNER#<sub>``.
CHANNEL_COUNT_SK = "COUNT#CHANNELS"


def notification_endpoint_sk(endpoint_id: str) -> str:
    return f"NOTIFY#{endpoint_id}"


#: The sort-key prefix of notification endpoints under ``OWNER#<sub>``.
NOTIFICATION_ENDPOINT_PREFIX = "NOTIFY#"
#: The per-user notification endpoint counter item (``n``).
NOTIFICATION_ENDPOINT_COUNT_SK = "COUNT#NOTIFY"


def owner_posts_gsi_pk(owner: str) -> str:
    return f"OWNER#{owner}#POST"


def owner_from_posts_gsi_pk(gsi1pk: str) -> str:
    """The inverse of ``owner_posts_gsi_pk``: a post item stores its owner only in its GSI key
    (decision "A post item stores its id and owner only in its keys"). Raises ``ValueError`` for any
    other key."""
    prefix, suffix = "OWNER#", "#POST"
    if not (gsi1pk.startswith(prefix) and gsi1pk.endswith(suffix)) or len(gsi1pk) <= len(
        prefix + suffix
    ):
        raise ValueError(f"not an owner's posts key: {gsi1pk!r}")
    return gsi1pk[len(prefix) : -len(suffix)]


def order_key(publish_at: datetime, schedule_id: str) -> str:
    """``<publish_at>#<schedule_id>``: listing order (GSI ``by_owner``) and due-index order."""
    return f"{format_instant(publish_at)}#{schedule_id}"


def due_bucket(publish_at: datetime, shard: int) -> str:
    """Partition key of a due entry: ``YYYY-MM-DDTHH#<shard>`` (hour bucket x write shard)."""
    return f"{hour_bucket(publish_at)}#{shard}"


def late_bucket(shard: int) -> str:
    return f"{LATE_PREFIX}{shard}"


def release_sk(schedule_id: str) -> str:
    """The pending-counter release item a post's release goes to (spreads a burst over 8 items)."""
    return f"{PENDING_SK}#RELEASED#{zlib.crc32(schedule_id.encode()) % RELEASE_SHARDS}"


def attempt_sk(started_at: datetime, channel_id: str, attempt: int) -> str:
    return f"ATTEMPT#{format_instant(started_at)}#{channel_id}#{attempt:03d}"


def lease_shard(shard: int) -> str:
    return f"LEASE#{shard}"


def rate_pk(channel_id: str) -> str:
    return f"RATE#{channel_id}"


def breaker_pk(channel_id: str) -> str:
    """The circuit-breaker item of a channel (``data/breaker.py``)."""
    return f"BREAKER#{channel_id}"


def rate_minute(instant: datetime) -> str:
    """The UTC minute a rate-limit slot belongs to: ``YYYY-MM-DDTHH:MM``."""
    return instant.strftime("%Y-%m-%dT%H:%M")


# ------------------------------------------------------------ recurring schedules
SERIES_SK = "SERIES"
#: The owner's open-series counter (``MAX_SERIES_PER_USER``): ``pk = OWNER#<sub>``.
SERIES_COUNT_SK = "SERIES_COUNT"
#: Partitions of the materialization index in ``DueIndexTable``: never read by the sweeper,
#: which reads only ``<hour>#<shard>`` and ``LATE#<shard>``.
SERIES_INDEX_PREFIX = "SERIES#"
SERIES_WATERMARK_BUCKET = "SERIES#WATERMARK"


def series_pk(series_id: str) -> str:
    return f"SERIES#{series_id}"


def owner_series_gsi_pk(owner: str) -> str:
    return f"OWNER#{owner}#SERIES"


def series_order_key(instant: datetime, series_id: str) -> str:
    """``<instant>#<series_id>``: listing order (``created_at``) and index order (``extend_at``)."""
    return f"{format_instant(instant)}#{series_id}"


def series_bucket(extend_at: datetime, shard: int) -> str:
    """Partition key of a series' materialization entry: ``SERIES#<YYYY-MM-DDTHH>#<shard>``,
    keyed like a due entry (hour bucket x write shard) on the instant it needs extending."""
    return f"{SERIES_INDEX_PREFIX}{hour_bucket(extend_at)}#{shard}"


def new_lease_token() -> str:
    """A fresh, unguessable lease token (a random UUID's hex: 32 characters)."""
    return uuid.uuid4().hex
