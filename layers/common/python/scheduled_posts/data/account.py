"""DynamoDB access for a whole account: export and erasure (decision "Erasure is synchronous
and resumable").

Where a user's items live (``docs/data-model.md``), and how each is found without a scan:

* ``PostsTable``: posts through GSI ``by_owner`` (expired ones too); each post's attempts and
  event trail under its ``pk`` (a series' trail under its own); the owner's event feed
  (``FEED#<sub>``); the ``OWNER#<sub>`` partition (channels, pending counters, the channel counter,
  the create-idempotency index and the erasure request); ``RATE#<channel_id>`` per channel;
  recurring schedules (``SERIES#<id>``/``SERIES``) through GSI ``by_owner`` under
  ``OWNER#<sub>#SERIES`` (their open-series counter is in the ``OWNER#<sub>`` partition).
* ``DueIndexTable``: each post's due entry (keys derived from ``publish_at`` and the shard)
  and late marker (``LATE#<shard>``, ``due_sk``); each series' materialization entry
  (``SERIES#<hour>#<shard>``, ``<extend_at>#<series_id>``).
* ``IdempotencyTable``: the delivery records (key prefix ``deliver``, key
  ``<schedule_id>:<channel_id>``) and the create records (key prefix ``create_post``, key
  ``[owner, Idempotency-Key]``; prefix ``create_series``, key ``[owner, "series:" + key]``; the
  keys listed by the create-idempotency index), whose ids are
  Powertools' ``<prefix>#<md5 of the JSON key>``.

* The media bucket (``MEDIA_BUCKET_NAME``): each upload's object ``media/<media_id>``, named by
  the media items of the ``OWNER#<sub>`` partition (``sk`` ``MEDIA#<media_id>``), deleted
  before those items (:meth:`AccountStore.delete_media_objects`).

What stays: the owner's feed counter (``data/feed_sequence.py``), keyed by a one-way hash of
the subject, as the tombstone that keeps the relay from storing events of the erased posts
that are still in the stream; it expires after two days.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import boto3
from boto3.dynamodb.conditions import Key
from botocore.config import Config

from scheduled_posts import keys
from scheduled_posts.buckets import MEDIA_BUCKET
from scheduled_posts.data.aws import BOTO_CONFIG, dynamodb_resource
from scheduled_posts.data.calendar_feeds import CALENDAR_FEED_SK, calendar_feed_pk
from scheduled_posts.data.channels import channel_from_item
from scheduled_posts.data.event_feed import feed_pk
from scheduled_posts.data.feed_sequence import FeedSequence
from scheduled_posts.data.imports import import_object_key
from scheduled_posts.data.notification_endpoints import endpoint_from_item
from scheduled_posts.data.post_reads import attempt_from_item
from scheduled_posts.lifecycle.import_events import IMPORT_SK_PREFIX
from scheduled_posts.models.account_media import ExportMedia
from scheduled_posts.models.notifications import NotificationEndpoint
from scheduled_posts.models.post import Attempt, Channel, Post
from scheduled_posts.models.series import Series

#: ``sk`` of the erasure request in the ``OWNER#<sub>`` partition.
ERASURE_SK = "ERASURE"
#: ``sk`` prefix of the create-idempotency index items (one per ``Idempotency-Key`` used):
#: post creates, recurring-schedule creates.
IDEMPOTENCY_INDEX_PREFIX = "IDEMPOTENCY#"
SERIES_IDEMPOTENCY_INDEX_PREFIX = "IDEMPOTENCY_SERIES#"
#: Powertools ``key_prefix`` of the delivery and create idempotency records.
DELIVERY_KEY_PREFIX = "deliver"
CREATE_KEY_PREFIX = "create_post"
CREATE_SERIES_KEY_PREFIX = "create_series"
#: ``sk`` prefix of a media item in the ``OWNER#<sub>`` partition (``MEDIA#<media_id>``).
MEDIA_SK_PREFIX = "MEDIA#"
#: Keys per S3 ``DeleteObjects`` request (its maximum, S3 API Reference).
DELETE_OBJECTS_BATCH = 1000


def idempotency_record_id(prefix: str, key: Any) -> str:
    """The ``id`` Powertools gives the record of ``key`` under ``key_prefix=prefix``:
    ``<prefix>#<md5 hex of json.dumps(key, sort_keys=True)>`` (its default hash function;
    ``BasePersistenceLayer._generate_hash``). The erasure test checks the records are gone."""
    text = json.dumps(key, sort_keys=True)
    return f"{prefix}#{hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()}"


class AccountStore:
    """Reads and deletes every item of one user across the three tables."""

    def __init__(
        self,
        *,
        posts_table_name: str,
        due_table_name: str,
        idempotency_table_name: str,
        dynamodb: Any | None = None,
        media_bucket_name: str | None = None,
        s3: Any | None = None,
    ) -> None:
        """``media_bucket_name``: the uploads' bucket (``None``: no media to link or delete);
        ``s3``: a boto3 S3 client (default: one created on first use)."""
        self._names = (posts_table_name, due_table_name, idempotency_table_name)
        self._dynamodb = dynamodb
        self._bucket = media_bucket_name
        self._s3 = s3

    def _table(self, index: int) -> Any:
        return (self._dynamodb or dynamodb_resource()).Table(self._names[index])

    # ------------------------------------------------------------------ reads

    def _query(self, table: Any, **kwargs: Any) -> Iterator[dict[str, Any]]:
        while True:
            page = table.query(**kwargs)
            yield from page.get("Items", [])
            if "LastEvaluatedKey" not in page:
                return
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def _owner_items(self, gsi_pk: str) -> Iterator[dict[str, Any]]:
        """The items indexed under ``gsi_pk`` in ``by_owner``, each read again from the table
        with a strongly consistent read (a GSI read is eventually consistent); one deleted
        since the index was read is skipped."""
        for index_item in self._query(
            self._table(0),
            IndexName="by_owner",
            KeyConditionExpression=Key("gsi1pk").eq(gsi_pk),
        ):
            key = {"pk": index_item["pk"], "sk": index_item["sk"]}
            item = self._table(0).get_item(Key=key, ConsistentRead=True).get("Item")
            if item is not None:
                yield item

    def posts(self, owner: str) -> list[Post]:
        """Every post item of ``owner`` still stored (also those past retention, not yet
        removed by TTL), by ``(publish_at, schedule_id)``."""
        return [Post.from_item(item) for item in self._owner_items(keys.owner_posts_gsi_pk(owner))]

    def series(self, owner: str) -> list[Series]:
        """Every recurring schedule of ``owner`` (any status), in creation order."""
        return [
            Series.from_item(item) for item in self._owner_items(keys.owner_series_gsi_pk(owner))
        ]

    def _partition(self, pk: str) -> list[dict[str, Any]]:
        """Every item under ``pk`` in ``PostsTable`` (consistent, paginated)."""
        return list(
            self._query(
                self._table(0), KeyConditionExpression=Key("pk").eq(pk), ConsistentRead=True
            )
        )

    def _delete_all(self, items: list[dict[str, Any]]) -> None:
        with self._table(0).batch_writer() as batch:
            for item in items:
                batch.delete_item(Key={"pk": item["pk"], "sk": item["sk"]})

    def _sequence(self) -> FeedSequence:
        return FeedSequence(self._names[0], table=self._table(0))

    def attempt_items(self, schedule_id: str) -> list[dict[str, Any]]:
        """Every attempt item of a post (expired ones too), in start order."""
        return list(
            self._query(
                self._table(0),
                KeyConditionExpression=Key("pk").eq(keys.post_pk(schedule_id))
                & Key("sk").begins_with("ATTEMPT#"),
                ConsistentRead=True,
            )
        )

    def attempts(self, schedule_id: str) -> list[Attempt]:
        """Every attempt of a post (expired ones too), in start order."""
        return [attempt_from_item(item) for item in self.attempt_items(schedule_id)]

    def owner_items(self, owner: str) -> list[dict[str, Any]]:
        """Every item of the ``OWNER#<sub>`` partition."""
        return list(
            self._query(
                self._table(0),
                KeyConditionExpression=Key("pk").eq(keys.owner_pk(owner)),
                ConsistentRead=True,
            )
        )

    def channels(self, owner: str) -> list[Channel]:
        """Every channel of ``owner`` (secrets included: callers must not show them)."""
        return [
            channel_from_item(item)
            for item in self.owner_items(owner)
            if str(item["sk"]).startswith("CHANNEL#")
        ]

    def notification_endpoints(self, owner: str) -> list[NotificationEndpoint]:
        """Every notification endpoint of ``owner`` (signing secrets included: callers must not
        show them)."""
        return [
            endpoint_from_item(item)
            for item in self.owner_items(owner)
            if str(item["sk"]).startswith(keys.NOTIFICATION_ENDPOINT_PREFIX)
        ]

    def media(self, owner: str) -> list[ExportMedia]:
        """Every media item of ``owner`` (any status), in ``media_id`` order, without links."""
        return [
            ExportMedia.model_validate(_plain(item))
            for item in self.owner_items(owner)
            if str(item["sk"]).startswith(MEDIA_SK_PREFIX) and "media_id" in item
        ]

    def media_download_url(self, media_id: str, *, expires_seconds: int) -> str | None:
        """A pre-signed ``GET`` of ``media/<media_id>`` valid ``expires_seconds`` (signed
        locally, no request), or ``None`` without a media bucket."""
        if self._bucket is None:
            return None
        url: str = self._s3_client().generate_presigned_url(
            "get_object",
            Params={"Bucket": self._bucket, "Key": MEDIA_BUCKET.object_key(media_id)},
            ExpiresIn=expires_seconds,
        )
        return url

    def erasure_requested(self, owner: str) -> bool:
        """Whether an erasure of ``owner`` was requested and is not complete."""
        item = (
            self._table(0)
            .get_item(Key={"pk": keys.owner_pk(owner), "sk": ERASURE_SK}, ConsistentRead=True)
            .get("Item")
        )
        return item is not None

    # ----------------------------------------------------------------- writes

    def request_erasure(self, owner: str, *, requested_at: str) -> None:
        """Record that ``owner`` asked to be erased (kept until the erasure completes); from
        then on the relay stores and sends no event of ``owner``."""
        self._sequence().mark_erasing(owner, requested_at=requested_at)
        self._table(0).put_item(
            Item={"pk": keys.owner_pk(owner), "sk": ERASURE_SK, "requested_at": requested_at}
        )

    def remember_idempotency_key(
        self, owner: str, key: str, *, expires_at: int, series: bool = False
    ) -> None:
        """Index a create ``Idempotency-Key`` of ``owner`` (TTL ``expires_at``, epoch s), so
        that erasure can find its record; ``series`` for a recurring-schedule create, whose
        Powertools key is ``"series:" + key`` under :data:`CREATE_SERIES_KEY_PREFIX`."""
        index = SERIES_IDEMPOTENCY_INDEX_PREFIX if series else IDEMPOTENCY_INDEX_PREFIX
        self._table(0).put_item(
            Item={
                "pk": keys.owner_pk(owner),
                "sk": f"{index}{key}",
                "key": key,
                "expires_at": expires_at,
            }
        )

    def delete_post(self, post: Post) -> None:
        """Delete a post with its attempts, event trail, due entry, late marker and delivery
        records."""
        posts, due, idempotency = self._table(0), self._table(1), self._table(2)
        pk = keys.post_pk(post.schedule_id)
        self._delete_all([i for i in self._partition(pk) if i["sk"] != keys.POST_SK])
        # The entry's keys are derived, not stored on the post (decision "Post items store no NULLs
        # and nothing derived").
        due_sk = keys.order_key(post.publish_at, post.schedule_id)
        due.delete_item(Key={"bucket": keys.due_bucket(post.publish_at, post.shard), "due": due_sk})
        due.delete_item(Key={"bucket": keys.late_bucket(post.shard), "due": due_sk})
        with idempotency.batch_writer() as batch:
            for channel_id in dict.fromkeys([*post.channel_ids, *post.deliveries]):
                key = f"{post.schedule_id}:{channel_id}"
                batch.delete_item(Key={"id": idempotency_record_id(DELIVERY_KEY_PREFIX, key)})
        posts.delete_item(Key={"pk": keys.post_pk(post.schedule_id), "sk": keys.POST_SK})

    def delete_series(self, series: Series) -> None:
        """Delete a series item, its event trail and its materialization-index entry (the
        materializer's ``ConditionCheck`` on the series then fails: it writes no more
        occurrences)."""
        where = series.index_keys()
        if where is not None:
            self._table(1).delete_item(Key={"bucket": where[0], "due": where[1]})
        pk = keys.series_pk(series.series_id)
        self._delete_all([i for i in self._partition(pk) if i["sk"] != keys.SERIES_SK])
        self._table(0).delete_item(Key={"pk": pk, "sk": keys.SERIES_SK})

    def delete_media_objects(self, owner: str) -> int:
        """Delete the object of every media item of ``owner`` (``media/<media_id>``) and the
        file of every import of ``owner`` (``imports/<owner>/<import_id>``; a missing one is no
        error, S3 ``DeleteObjects``), before the items themselves go with
        :meth:`delete_owner_items`; how many keys were sent. Raises ``RuntimeError`` naming
        the keys S3 could not delete (the erasure stays ``pending`` and a repeat resumes).
        An import file sent through ``POST /v1/imports/uploads`` but never imported is not
        named by any item: the bucket's lifecycle rule expires it
        (``buckets.IMPORT_FILE_EXPIRATION_DAYS``)."""
        object_keys: list[str] = []
        for item in self.owner_items(owner):
            sk = str(item["sk"])
            if sk.startswith(MEDIA_SK_PREFIX):
                object_keys.append(MEDIA_BUCKET.object_key(sk[len(MEDIA_SK_PREFIX) :]))
            elif sk.startswith(IMPORT_SK_PREFIX) and "#" not in sk[len(IMPORT_SK_PREFIX) :]:
                object_keys.append(import_object_key(owner, sk[len(IMPORT_SK_PREFIX) :]))
        if not object_keys or self._bucket is None:
            return 0
        for start in range(0, len(object_keys), DELETE_OBJECTS_BATCH):
            chunk = object_keys[start : start + DELETE_OBJECTS_BATCH]
            answer = self._s3_client().delete_objects(
                Bucket=self._bucket,
                Delete={"Objects": [{"Key": k} for k in chunk], "Quiet": True},
            )
            if answer.get("Errors"):
                failed = [e.get("Key") for e in answer["Errors"]]
                raise RuntimeError(f"S3 did not delete the objects {failed}")
        return len(object_keys)

    def _s3_client(self) -> Any:
        if self._s3 is None:
            # SigV4 pre-signed links (every region takes them; SigV2 only the oldest).
            config = BOTO_CONFIG.merge(Config(signature_version="s3v4"))
            self._s3 = boto3.client("s3", config=config)
        return self._s3

    def delete_owner_feed(self, owner: str) -> None:
        """Delete ``owner``'s event feed (``FEED#<sub>``)."""
        self._delete_all(self._partition(feed_pk(owner)))

    def delete_owner_items(self, owner: str) -> None:
        """Delete the ``OWNER#<sub>`` partition but the erasure request, each channel's
        rate-limit items, and the create-idempotency records the index names."""
        posts, idempotency = self._table(0), self._table(2)
        items = self.owner_items(owner)
        for item in items:
            sk = str(item["sk"])
            if sk.startswith("CHANNEL#"):
                rate = self._query(
                    posts, KeyConditionExpression=Key("pk").eq(keys.rate_pk(sk[len("CHANNEL#") :]))
                )
                with posts.batch_writer() as batch:
                    for rate_item in rate:
                        batch.delete_item(Key={"pk": rate_item["pk"], "sk": rate_item["sk"]})
            elif sk == CALENDAR_FEED_SK:
                feed = calendar_feed_pk(str(item["token_hash"]))
                posts.delete_item(Key={"pk": feed, "sk": CALENDAR_FEED_SK})
            elif sk.startswith(IDEMPOTENCY_INDEX_PREFIX):
                record = idempotency_record_id(CREATE_KEY_PREFIX, [owner, item["key"]])
                idempotency.delete_item(Key={"id": record})
            elif sk.startswith(SERIES_IDEMPOTENCY_INDEX_PREFIX):
                key = [owner, "series:" + item["key"]]
                record = idempotency_record_id(CREATE_SERIES_KEY_PREFIX, key)
                idempotency.delete_item(Key={"id": record})
        with posts.batch_writer() as batch:
            for item in items:
                if item["sk"] != ERASURE_SK:
                    batch.delete_item(Key={"pk": item["pk"], "sk": item["sk"]})

    def complete_erasure(self, owner: str, *, erased_at: str, now_epoch: float) -> None:
        """Turn the feed counter into the tombstone (nothing created before ``erased_at``
        enters the feed again), then delete the erasure request: the last item of ``owner``."""
        self._sequence().mark_erased(owner, erased_at=erased_at, now_epoch=now_epoch)
        self._table(0).delete_item(Key={"pk": keys.owner_pk(owner), "sk": ERASURE_SK})


def _plain(item: dict[str, Any]) -> dict[str, Any]:
    """A DynamoDB item's numbers as ``int``/``float`` (boto3 reads them as ``Decimal``)."""
    return {
        k: (int(v) if v == v.to_integral_value() else float(v)) if isinstance(v, Decimal) else v
        for k, v in item.items()
    }
