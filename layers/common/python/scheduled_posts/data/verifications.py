"""The read-back's writes on a post item (``logic/verify.py``): one conditional update per
delivery, applied only while the delivery is still ``published`` (a retry or an erasure in
between wins). The post's ``version`` is not bumped: a read-back is not an edit."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from scheduled_posts import keys
from scheduled_posts.clock import format_instant
from scheduled_posts.data.aws import dynamodb_resource


class VerificationStore:
    """Writes ``deliveries.<channel>.verified_at`` / ``.verification`` of the posts table."""

    def __init__(self, *, posts_table_name: str, dynamodb: Any | None = None) -> None:
        self._name = posts_table_name
        self._dynamodb = dynamodb

    def record(
        self,
        schedule_id: str,
        channel_id: str,
        *,
        verified_at: datetime | None,
        finding: str | None,
    ) -> bool:
        """Set ``verified_at`` (when given) and the finding (``None`` removes it); ``False``
        when the delivery is no longer ``published`` (nothing written)."""
        sets = ["deliveries.#c.verification = :f"] if finding else []
        values: dict[str, Any] = {":published": "published"}
        if finding:
            values[":f"] = finding
        if verified_at is not None:
            sets.append("deliveries.#c.verified_at = :v")
            values[":v"] = format_instant(verified_at)
        expression = ("SET " + ", ".join(sets)) if sets else ""
        if not finding:
            expression += " REMOVE deliveries.#c.verification"
        table = (self._dynamodb or dynamodb_resource()).Table(self._name)
        try:
            table.update_item(
                Key={"pk": keys.post_pk(schedule_id), "sk": keys.POST_SK},
                UpdateExpression=expression.strip(),
                ConditionExpression="deliveries.#c.#s = :published",
                ExpressionAttributeNames={"#c": channel_id, "#s": "status"},
                ExpressionAttributeValues=values,
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                return False
            raise
        return True
