"""The events of one committed write of an import record (``OWNER#<sub>``, ``IMPORT#<id>``).

One event when the write moved the import from ``queued``/``running`` to ``completed``
(``import.completed``) or ``failed`` (``import.failed``): ``data/imports.py`` ``finish`` is
conditional on the import not being finished, so a second finish writes nothing and reports
nothing. Chunk result items (``IMPORT#<id>#ROWS#<n>``) report nothing. The event id is the
UUIDv5 of ``<type>|<import_id>``. Pure: reads the plain item values, no boto3, no clock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from scheduled_posts.clock import instant_from_storage
from scheduled_posts.models.events import BaseEvent, EventType, ImportCompleted, ImportFailed

Item = Mapping[str, Any]
IMPORT_SK_PREFIX = "IMPORT#"
_FINAL = {"completed": EventType.IMPORT_COMPLETED, "failed": EventType.IMPORT_FAILED}


def is_import_record(sk: str) -> bool:
    """True for an import record's sort key (not a chunk's results)."""
    return sk.startswith(IMPORT_SK_PREFIX) and "#ROWS#" not in sk


def import_events(old: Item | None, new: Item, event_id: Callable[..., str]) -> list[BaseEvent]:
    """``[ImportCompleted]`` or ``[ImportFailed]`` when this write finished the import."""
    status = str(new.get("status"))
    if status not in _FINAL or (old is not None and old.get("status") == status):
        return []
    kind = _FINAL[status]
    fields: dict[str, Any] = {
        "event_id": event_id(kind, new["import_id"]),
        "occurred_at": instant_from_storage(str(new["updated_at"])),
        "owner": str(new["owner"]),
        "import_id": str(new["import_id"]),
        "rows_total": int(new["rows_total"]),
        "rows_done": int(new.get("rows_done", 0)),
        "rows_failed": int(new.get("rows_failed", 0)),
    }
    if kind is EventType.IMPORT_FAILED:
        return [ImportFailed(**fields, error=str(new.get("error") or "the import stopped"))]
    return [ImportCompleted(**fields)]
