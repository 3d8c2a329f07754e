"""DynamoDB capacity-unit sizing rules, applied to items we can see.

Rules (DynamoDB Developer Guide, "DynamoDB read and write operations" and "Item sizes and
formats"; "Transactions: how it works"):

* An item's size is the sum of its attribute names' UTF-8 lengths and its values' sizes: a string
  is its UTF-8 length, a number about 1 byte per two significant digits plus 1, a binary its
  length, a boolean or null 1 byte, a list or map 3 bytes plus 1 byte per element plus its
  elements, a set the sum of its members.
* Writes: 1 write unit per 1 KB (1,024 bytes) of item, rounded up, at least 1. ``PutItem`` and
  ``DeleteItem`` are charged on the larger of the old and new item, ``UpdateItem`` on the larger
  of the item before and after. A failed conditional write still consumes write units.
* Reads: 1 read unit per 4 KB, rounded up, for a strongly consistent read; half for an
  eventually consistent read. A ``Query`` is charged on the total size of the items it read
  (``ScannedCount``), summed and then rounded up once per page, not per item.
* Transactions (``TransactWriteItems``/``TransactGetItems``) cost 2x the units of their actions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

WRITE_UNIT_BYTES = 1024
READ_UNIT_BYTES = 4096


def _number_size(value: Any) -> int:
    """Bytes of a DynamoDB number: 1 byte per two significant digits (rounded up), plus 1."""
    digits = Decimal(str(value)).normalize().as_tuple().digits
    significant = len(digits) if any(digits) else 1
    return math.ceil(significant / 2) + 1


def value_size(value: Any) -> int:
    """Bytes of one attribute value, in boto3 resource types or low-level ``{"S": ...}`` form.

    Raises
    ------
    TypeError
        For a value DynamoDB cannot store.
    """
    if isinstance(value, Mapping) and len(value) == 1:
        (tag, inner), *_ = value.items()
        if tag in {"S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"}:
            return _typed_size(tag, inner)
    if value is None or isinstance(value, bool):
        return 1
    if isinstance(value, str):
        return len(value.encode())
    if isinstance(value, int | float | Decimal):
        return _number_size(value)
    if isinstance(value, bytes | bytearray):
        return len(value)
    if isinstance(value, Mapping):
        return 3 + sum(len(str(k).encode()) + value_size(v) + 1 for k, v in value.items())
    if isinstance(value, list | tuple):
        return 3 + sum(value_size(v) + 1 for v in value)
    if isinstance(value, set | frozenset):
        return sum(value_size(v) for v in value)
    raise TypeError(f"not a DynamoDB value: {type(value).__name__}")


def _typed_size(tag: str, inner: Any) -> int:
    if tag == "S":
        return len(str(inner).encode())
    if tag == "N":
        return _number_size(inner)
    if tag == "B":
        return len(inner)
    if tag in {"BOOL", "NULL"}:
        return 1
    if tag == "M":
        return 3 + sum(len(k.encode()) + value_size(v) + 1 for k, v in inner.items())
    if tag == "L":
        return 3 + sum(value_size(v) + 1 for v in inner)
    if tag == "SS":
        return sum(len(v.encode()) for v in inner)
    if tag == "NS":
        return sum(_number_size(v) for v in inner)
    return sum(len(v) for v in inner)  # BS


def item_size(item: Mapping[str, Any] | None) -> int:
    """Bytes of a whole item (names plus values); 0 for ``None`` (no item)."""
    if not item:
        return 0
    return sum(len(name.encode()) + value_size(value) for name, value in item.items())


def write_units(*sizes: int, transactional: bool = False) -> int:
    """Write units of one write whose item sizes (before, after) are ``sizes`` bytes.

    Charged on the largest, 1 KB per unit rounded up, at least 1; doubled in a transaction.
    """
    units = max(1, math.ceil(max(sizes, default=0) / WRITE_UNIT_BYTES))
    return units * (2 if transactional else 1)


def read_units(total_bytes: int, *, consistent: bool, transactional: bool = False) -> float:
    """Read units for ``total_bytes`` read at once (one item, or one Query page summed).

    4 KB per unit rounded up, at least 1; 0.5 per 4 KB when eventually consistent; doubled in a
    transaction. An empty Query page still costs the minimum (0.5 or 1).
    """
    units = max(1, math.ceil(total_bytes / READ_UNIT_BYTES))
    if transactional:
        return float(units * 2)
    return float(units) if consistent else units / 2


def query_read_units(item_sizes: Iterable[int], *, consistent: bool) -> float:
    """Read units of one Query page over items of ``item_sizes`` bytes (summed, then rounded)."""
    return read_units(sum(item_sizes), consistent=consistent)
