"""The network's ids of a delivery's uploaded media: the outbox of a media upload (decision
"A network media id is stored before the post that uses it").

Mastodon's ``POST /api/v2/media`` takes no ``Idempotency-Key``
(https://docs.joinmastodon.org/methods/media/#v2): a retry that uploads again makes a second
attachment. So the worker stores the id the network answered for each of the post's media
before it sends the status, and every later attempt of the delivery reuses it instead of
uploading again. One item per ``(delivery, media)`` in the posts table, under the post's
partition (so erasure and the post's expiry remove them with it)::

    pk = POST#<schedule_id>   sk = NETMEDIA#<channel_id>#<media_id>
    network_id, stored_at, expires_at (TTL)

The put is conditioned on the item not existing: when two holders of the delivery race (a
take-over after a lost lease), the first stored id wins and both use it; the other upload stays
unattached on the network (Mastodon removes unattached media after a day,
``MEDIA_REMOVE_UNATTACHED`` / ``media_cache_retention_period``).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from boto3.dynamodb.conditions import Key
from botocore.exceptions import BotoCoreError, ClientError

from scheduled_posts import keys
from scheduled_posts.clock import epoch_seconds, format_instant
from scheduled_posts.data.aws import dynamodb_resource
from scheduled_posts.errors import RetryableDeliveryError

PREFIX = "NETMEDIA#"
#: How long a stored id is kept: past any retry of the delivery (the misfire grace and the
#: retry horizon are hours), well within the post's own retention.
KEEP_DAYS = 30


def _split(idempotency_key: str) -> tuple[str, str]:
    schedule_id, _, channel_id = idempotency_key.partition(":")
    return schedule_id, channel_id


class NetworkMediaLog:
    """``known``/``remember`` of :class:`scheduled_posts.platforms.base.NetworkMediaIds` on the
    posts table; both raise :class:`RetryableDeliveryError` when DynamoDB cannot answer now."""

    def __init__(self, posts_table_name: str, *, prefix: str = PREFIX) -> None:
        self._table_name = posts_table_name
        #: The sort-key prefix of the log's items (``data/thread_parts.py`` keeps a thread's
        #: published parts under ``NETPART#`` the same way).
        self._prefix = prefix

    @property
    def table(self) -> Any:
        return dynamodb_resource().Table(self._table_name)

    def known(self, idempotency_key: str) -> dict[str, str]:
        """``{media_id: network_id}`` stored for the delivery ``idempotency_key``
        (``<schedule_id>:<channel_id>``), consistent read."""
        schedule_id, channel_id = _split(idempotency_key)
        prefix = f"{self._prefix}{channel_id}#"
        query: dict[str, Any] = {
            "KeyConditionExpression": Key("pk").eq(keys.post_pk(schedule_id))
            & Key("sk").begins_with(prefix),
            "ConsistentRead": True,
        }
        found: dict[str, str] = {}
        try:
            while True:
                page = self.table.query(**query)
                for item in page.get("Items", []):
                    found[str(item["sk"])[len(prefix) :]] = str(item["network_id"])
                if "LastEvaluatedKey" not in page:
                    return found
                query["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        except (BotoCoreError, ClientError) as exc:
            raise RetryableDeliveryError(f"network media ids could not be read: {exc}") from exc

    def remember(
        self, idempotency_key: str, media_id: str, network_id: str, *, now: datetime
    ) -> str:
        """Store ``network_id`` for ``media_id`` of the delivery unless one is stored; returns
        the stored one (ours, or the first holder's)."""
        schedule_id, channel_id = _split(idempotency_key)
        item_key = {"pk": keys.post_pk(schedule_id), "sk": f"{self._prefix}{channel_id}#{media_id}"}
        try:
            self.table.put_item(
                Item={
                    **item_key,
                    "network_id": network_id,
                    "stored_at": format_instant(now),
                    "expires_at": epoch_seconds(now + timedelta(days=KEEP_DAYS)),
                },
                ConditionExpression="attribute_not_exists(pk)",
            )
            return network_id
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                raise RetryableDeliveryError(f"network media id not stored: {exc}") from exc
        except BotoCoreError as exc:
            raise RetryableDeliveryError(f"network media id not stored: {exc}") from exc
        got = self.table.get_item(Key=item_key, ConsistentRead=True).get("Item") or {}
        return str(got.get("network_id") or network_id)
