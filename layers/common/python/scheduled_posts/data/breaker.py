"""Per-channel circuit-breaker items: ``pk = BREAKER#<channel_id>``, ``sk = STATE``.

One item per channel that has failed lately (``docs/data-model.md``, "Circuit-breaker item";
decision "A breaker per destination"), shared by every worker environment:

* ``failures``: consecutive timeouts, connection errors and 5xx answers (``ADD``);
* ``opened_until``: epoch seconds until which the breaker is open (absent: closed);
* ``probe_until``: epoch seconds until which one worker holds the half-open probe;
* ``expires_at``: DynamoDB TTL, so a destination that stopped failing leaves no item behind.

Every change is one ``UpdateItem``; the ones that decide (open, take the probe) are
conditional, so two workers never both open it or both probe.
"""

from __future__ import annotations

from dataclasses import dataclass

from botocore.exceptions import ClientError

from scheduled_posts import keys
from scheduled_posts.data.aws import TableStore
from scheduled_posts.data.dynamo import is_condition_failure

_SK = "STATE"


@dataclass(frozen=True)
class BreakerState:
    """A breaker item as read: ``failures`` (count), ``opened_until`` and ``probe_until``
    (epoch seconds, None when absent)."""

    failures: int = 0
    opened_until: int | None = None
    probe_until: int | None = None


def _int(item: dict[str, object], name: str) -> int | None:
    value = item.get(name)
    return None if value is None else int(str(value))


class BreakerStore(TableStore):
    """Circuit-breaker items of ``PostsTable`` (``table_name`` and ``table`` as
    :class:`scheduled_posts.data.aws.TableStore`). Raises ``ClientError`` on any DynamoDB error
    other than a failed condition."""

    def _key(self, channel_id: str) -> dict[str, str]:
        return {"pk": keys.breaker_pk(channel_id), "sk": _SK}

    def read(self, channel_id: str) -> BreakerState:
        """The channel's breaker (closed with 0 failures when no item). An eventually
        consistent read (half a read unit): a breaker seen a second late costs one attempt."""
        item = self.table.get_item(Key=self._key(channel_id)).get("Item")
        if not item:
            return BreakerState()
        return BreakerState(
            failures=_int(item, "failures") or 0,
            opened_until=_int(item, "opened_until"),
            probe_until=_int(item, "probe_until"),
        )

    def add_failure(self, channel_id: str, *, expires_at: int) -> int:
        """One more consecutive failure; the new count."""
        answer = self.table.update_item(
            Key=self._key(channel_id),
            UpdateExpression="ADD failures :one SET expires_at = :x",
            ExpressionAttributeValues={":one": 1, ":x": expires_at},
            ReturnValues="UPDATED_NEW",
        )
        return int(answer["Attributes"]["failures"])

    def open(self, channel_id: str, *, until: int, now: int, expires_at: int) -> bool:
        """Open the breaker until ``until`` (epoch s) unless it is already open at ``now``
        (an open breaker is never extended by a late failure; a failed probe reopens it)."""
        return self._conditional(
            channel_id,
            "SET opened_until = :until, expires_at = :x REMOVE probe_until",
            "attribute_not_exists(opened_until) OR opened_until <= :now",
            {":until": until, ":now": now, ":x": expires_at},
        )

    def take_probe(self, channel_id: str, *, opened_until: int, until: int, now: int) -> bool:
        """Hold the half-open probe until ``until`` when the breaker is still the one read
        (``opened_until``) and nobody holds an unexpired probe; True when taken."""
        return self._conditional(
            channel_id,
            "SET probe_until = :until",
            "opened_until = :opened AND (attribute_not_exists(probe_until) OR probe_until <= :now)",
            {":until": until, ":now": now, ":opened": opened_until},
        )

    def close(self, channel_id: str) -> None:
        """Close the breaker: no failures, not open, no probe (a success was answered)."""
        self.table.update_item(
            Key=self._key(channel_id),
            UpdateExpression="SET failures = :zero REMOVE opened_until, probe_until",
            ExpressionAttributeValues={":zero": 0},
        )

    def _conditional(
        self, channel_id: str, update: str, condition: str, values: dict[str, int]
    ) -> bool:
        try:
            self.table.update_item(
                Key=self._key(channel_id),
                UpdateExpression=update,
                ConditionExpression=condition,
                ExpressionAttributeValues=values,
            )
        except ClientError as exc:
            if is_condition_failure(exc):
                return False
            raise
        return True
