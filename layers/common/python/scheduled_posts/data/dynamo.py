"""DynamoDB helpers used by every store: the condition-failure check, the transaction runner
(``TransactionConflict`` retried), and the update-expression builder.

A failed condition is ``ConditionalCheckFailedException`` on a single write, or
``TransactionCanceledException`` whose ``CancellationReasons`` name ``ConditionalCheckFailed``
on a transaction (Amazon DynamoDB API Reference, ``TransactWriteItems``: "Errors"). A
transaction colliding with another in flight fails with ``TransactionConflict``, which botocore
does not retry; :func:`transact` retries it at most :data:`TRANSACTION_ATTEMPTS` times.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

#: Tries of one transaction when DynamoDB reports ``TransactionConflict``.
TRANSACTION_ATTEMPTS = 3


class TransactionConflictExhaustedError(Exception):
    """A transaction kept failing with ``TransactionConflict`` after the retries."""


def error_code(exc: ClientError) -> str:
    """The error code of a botocore ``ClientError`` (``""`` when absent)."""
    return str(exc.response.get("Error", {}).get("Code", ""))


def cancellation_reasons(exc: ClientError) -> list[str]:
    """The per-action codes of a cancelled transaction (``"None"`` for an action that passed)."""
    return [r.get("Code", "None") for r in exc.response.get("CancellationReasons") or []]


def is_cancelled(exc: ClientError) -> bool:
    """True for a ``TransactionCanceledException``."""
    return error_code(exc) == "TransactionCanceledException"


def is_condition_failure(exc: ClientError) -> bool:
    """True when a write (or any action of a transaction) lost its condition.

    A cancelled transaction without reasons (some emulators) counts when its message names
    ``ConditionalCheckFailed``."""
    code = error_code(exc)
    if code == "ConditionalCheckFailedException":
        return True
    if code == "TransactionCanceledException":
        reasons = cancellation_reasons(exc)
        if not reasons:
            return "ConditionalCheckFailed" in str(exc.response.get("Error", {}).get("Message", ""))
        return "ConditionalCheckFailed" in reasons
    return False


def transact(
    client: Any,
    items: list[dict[str, Any]],
    *,
    token: str | None = None,
    attempts: int = TRANSACTION_ATTEMPTS,
) -> None:
    """``TransactWriteItems`` of ``items`` (``token``: its ``ClientRequestToken``, 1-36
    characters, idempotent for 10 minutes), retried while it fails only on
    ``TransactionConflict``.

    Raises
    ------
    TransactionConflictExhaustedError
        Still ``TransactionConflict`` after ``attempts`` tries (chained from the ClientError).
    botocore.exceptions.ClientError
        Anything else, including a failed condition (check it with :func:`is_condition_failure`).
    """
    extra = {"ClientRequestToken": token} if token is not None else {}
    for attempt in range(1, attempts + 1):
        try:
            client.transact_write_items(TransactItems=items, **extra)
            return
        except ClientError as exc:
            reasons = cancellation_reasons(exc)
            conflict = (
                is_cancelled(exc)
                and "TransactionConflict" in reasons
                and "ConditionalCheckFailed" not in reasons
            )
            if not conflict:
                raise
            if attempt == attempts:
                raise TransactionConflictExhaustedError(str(exc)) from exc


@dataclass
class UpdateExpression:
    """Builds ``UpdateExpression``/``ConditionExpression`` with generated placeholders.

    ``set_path(("deliveries", "ch1"), value)`` writes ``#n0.#n1 = :v0``; every attribute name
    goes through ``ExpressionAttributeNames``, so reserved words (``status``) need no care.
    """

    names: dict[str, str] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)
    sets: list[str] = field(default_factory=list)
    removes: list[str] = field(default_factory=list)
    conditions: list[str] = field(default_factory=list)

    def name(self, attribute: str) -> str:
        """The placeholder of ``attribute`` (one per distinct name)."""
        for placeholder, existing in self.names.items():
            if existing == attribute:
                return placeholder
        placeholder = f"#n{len(self.names)}"
        self.names[placeholder] = attribute
        return placeholder

    def value(self, value: Any) -> str:
        """A fresh value placeholder for ``value``."""
        placeholder = f":v{len(self.values)}"
        self.values[placeholder] = value
        return placeholder

    def set_path(self, path: Iterable[str], value: Any) -> None:
        """``SET <path> = <value>``."""
        self.sets.append(".".join(self.name(p) for p in path) + " = " + self.value(value))

    def set_all(self, changes: Mapping[tuple[str, ...], Any]) -> None:
        """``SET`` every ``path -> value`` of ``changes``."""
        for path, value in changes.items():
            self.set_path(path, value)

    def remove(self, *attributes: str) -> None:
        """``REMOVE`` top-level ``attributes``."""
        self.removes.extend(self.name(a) for a in attributes)

    def require_equal(self, attribute: str, value: Any) -> None:
        """Add ``<attribute> = <value>`` to the condition (joined with AND)."""
        self.require_path_equal((attribute,), value)

    def require_path_equal(self, path: Iterable[str], value: Any) -> None:
        """Add ``<path> = <value>`` to the condition (``("deliveries", "ch1", "rate_slot")``
        is ``#n0.#n1.#n2``)."""
        self.conditions.append(".".join(self.name(p) for p in path) + f" = {self.value(value)}")

    def kwargs(self) -> dict[str, Any]:
        """The ``UpdateItem`` (or transaction ``Update``) expression keyword arguments."""
        expression = ""
        if self.sets:
            expression = "SET " + ", ".join(self.sets)
        if self.removes:
            expression += (" " if expression else "") + "REMOVE " + ", ".join(self.removes)
        out: dict[str, Any] = {
            "UpdateExpression": expression,
            "ExpressionAttributeNames": dict(self.names),
        }
        if self.values:
            out["ExpressionAttributeValues"] = dict(self.values)
        if self.conditions:
            out["ConditionExpression"] = " AND ".join(self.conditions)
        return out
