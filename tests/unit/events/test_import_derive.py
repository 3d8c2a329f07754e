"""``import.completed`` / ``import.failed`` derived from the import record's writes."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from scheduled_posts.lifecycle.events import derive_events
from scheduled_posts.models.events import ImportCompleted, ImportFailed


def _record(status: str, **extra: Any) -> dict[str, Any]:
    return {
        "pk": "OWNER#alice",
        "sk": "IMPORT#imp-1",
        "owner": "alice",
        "import_id": "imp-1",
        "status": status,
        "rows_total": Decimal(3),
        "rows_done": Decimal(2),
        "rows_failed": Decimal(1),
        "created_at": "2026-11-29T12:00:00.000Z",
        "updated_at": "2026-11-29T12:05:00.000Z",
        **extra,
    }


def test_import_finish_running_to_completed_reports_completed_once() -> None:
    [event] = derive_events(_record("running"), _record("completed"))
    assert isinstance(event, ImportCompleted)
    assert (event.import_id, event.rows_done, event.rows_failed) == ("imp-1", 2, 1)
    assert event.trail_pk() == "OWNER#alice"
    assert derive_events(_record("completed"), _record("completed")) == []
    again = derive_events(_record("queued"), _record("completed"))
    assert again[0].event_id == event.event_id  # a replay names the same fact


def test_import_finish_failed_reports_failed_with_its_error() -> None:
    [event] = derive_events(_record("running"), _record("failed", error="file gone"))
    assert isinstance(event, ImportFailed) and event.error == "file gone"


def test_import_progress_and_chunk_results_report_nothing() -> None:
    assert derive_events(None, _record("queued")) == []
    assert derive_events(_record("queued"), _record("running")) == []
    chunk = {"pk": "OWNER#alice", "sk": "IMPORT#imp-1#ROWS#0000", "results": []}
    assert derive_events(None, chunk) == []
