"""DynamoDB reads of recurring schedules (``docs/data-model.md``, "Series"): a series, an
owner's page, a series' occurrence posts, the materialization index, a shard's watermark and
the open-series count. :class:`SeriesReader` is the base of
``data.series.SeriesRepository``, which adds the writes; nothing here writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from boto3.dynamodb.conditions import Attr, Key

from scheduled_posts import keys
from scheduled_posts.clock import format_instant, instant_from_storage
from scheduled_posts.data.aws import dynamodb_resource
from scheduled_posts.models.post import Post, PostStatus
from scheduled_posts.models.series import Series


@dataclass(frozen=True)
class IndexEntry:
    """A materialization-index entry: the series and when it needs extending."""

    bucket: str
    due: str
    series_id: str
    extend_at: datetime


@dataclass(frozen=True)
class SeriesPage:
    """One page of an owner's series; ``last_key`` is the ``gsi1sk`` to resume after."""

    series: list[Series]
    last_key: str | None


class SeriesReader:
    """The reads of series items, the materialization index and the open-series counter
    (``PostsTable`` and ``DueIndexTable``)."""

    def __init__(
        self,
        *,
        posts_table_name: str,
        due_table_name: str,
        dynamodb: Any | None = None,
    ) -> None:
        self._posts_name = posts_table_name
        self._due_name = due_table_name
        self._dynamodb = dynamodb

    @property
    def _resource(self) -> Any:
        return self._dynamodb or dynamodb_resource()

    @property
    def _table(self) -> Any:
        return self._resource.Table(self._posts_name)

    @property
    def _due(self) -> Any:
        return self._resource.Table(self._due_name)

    def get(self, series_id: str) -> Series | None:
        """The series (any owner), strongly consistent, or ``None``."""
        item = self._table.get_item(
            Key={"pk": keys.series_pk(series_id), "sk": keys.SERIES_SK}, ConsistentRead=True
        ).get("Item")
        return Series.from_item(item) if item else None

    def query_owner(self, owner: str, *, after: str | None, limit: int) -> SeriesPage:
        """One page of ``owner``'s series in creation order (GSI ``by_owner``)."""
        kwargs: dict[str, Any] = {
            "IndexName": "by_owner",
            "KeyConditionExpression": Key("gsi1pk").eq(keys.owner_series_gsi_pk(owner)),
            "Limit": limit,
        }
        if after is not None:
            series_id = after.split("#", 1)[1]
            kwargs["ExclusiveStartKey"] = {
                "gsi1pk": keys.owner_series_gsi_pk(owner),
                "gsi1sk": after,
                "pk": keys.series_pk(series_id),
                "sk": keys.SERIES_SK,
            }
        page = self._table.query(**kwargs)
        last = page.get("LastEvaluatedKey")
        return SeriesPage(
            series=[Series.from_item(i) for i in page.get("Items", [])],
            last_key=last["gsi1sk"] if last else None,
        )

    def occurrences(self, series_id: str, *, lower: str | None, limit: int) -> list[Post]:
        """Up to ``limit`` occurrence posts of a series from ``lower`` (a ``gsi1sk``,
        inclusive), in ``(publish_at, schedule_id)`` order (GSI ``by_series``)."""
        condition = Key("occurrence_of").eq(series_id)
        if lower is not None:
            condition &= Key("gsi1sk").gte(lower)
        page = self._table.query(
            IndexName="by_series", KeyConditionExpression=condition, Limit=limit
        )
        return [Post.from_item(i) for i in page.get("Items", [])]

    def scheduled_occurrences(
        self, series_id: str, *, after: datetime, before: datetime
    ) -> list[str]:
        """The ids of a series' occurrence posts still ``scheduled`` with ``after <= publish_at
        < before`` (GSI ``by_series``, eventually consistent, every page; the status is
        filtered after the read, so reads grow with all the series' posts in the window)."""
        kwargs: dict[str, Any] = {
            "IndexName": "by_series",
            "KeyConditionExpression": Key("occurrence_of").eq(series_id)
            & Key("gsi1sk").between(format_instant(after), format_instant(before)),
            "FilterExpression": Attr("status").eq(PostStatus.SCHEDULED.value),
            "ProjectionExpression": "pk, publish_at",
        }
        found: list[str] = []
        while True:
            page = self._table.query(**kwargs)
            found += [
                keys.schedule_id_from_post_pk(str(i["pk"]))
                for i in page.get("Items", [])
                if instant_from_storage(i["publish_at"]) < before
            ]
            if "LastEvaluatedKey" not in page:
                return found
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def index_entries(self, bucket: str, *, upper: str) -> list[IndexEntry]:
        """Every entry of one index partition with ``due <= upper`` (paginated Query)."""
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": Key("bucket").eq(bucket) & Key("due").lte(upper),
            "ConsistentRead": True,
        }
        found: list[IndexEntry] = []
        while True:
            page = self._due.query(**kwargs)
            found += [
                IndexEntry(
                    bucket=i["bucket"],
                    due=i["due"],
                    series_id=i["series_id"],
                    extend_at=instant_from_storage(i["extend_at"]),
                )
                for i in page.get("Items", [])
            ]
            if "LastEvaluatedKey" not in page:
                return found
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def watermark(self, shard: int) -> datetime | None:
        """The shard's materialized-through watermark (every entry before it was read)."""
        item = self._due.get_item(
            Key={"bucket": keys.SERIES_WATERMARK_BUCKET, "due": str(shard)}, ConsistentRead=True
        ).get("Item")
        return instant_from_storage(item["through"]) if item else None

    def open_count(self, owner: str) -> int:
        """The owner's open (active or paused) series, as counted."""
        item = self._table.get_item(
            Key={"pk": keys.owner_pk(owner), "sk": keys.SERIES_COUNT_SK}, ConsistentRead=True
        ).get("Item")
        return int(item.get("open", 0)) if item else 0
