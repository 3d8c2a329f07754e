"""One function per arrow of the recurring-series state diagram (``docs/recurring.md``,
"Series states"), pure like :mod:`.transitions` is for posts.

Each owner arrow (:func:`create`, :func:`edit`, :func:`pause`, :func:`resume`, :func:`delete`)
checks that it may start from the series' status (else :class:`SeriesTransitionRefused`, the
API's 409) and returns a :class:`SeriesChange`: the whole new series (version + 1, the old one
recorded as ``superseded`` so a request that stops halfway is finished by the materializer) and
the :class:`~.reasons.OccurrenceCancelReason` its cancelled occurrences carry. The
materializer's arrows are :func:`extended` (``active -> active | ended``). ``data.series``
applies a change under :func:`save_guard` and counts the series down when :func:`closes`; an
occurrence is written only to a series in :data:`OCCURRENCE_WRITABLE` at the version it was
computed from. :data:`SERIES_ARROWS` is the table the diagram is tested against
(``tests/unit/lifecycle/test_series_diagram.py``). Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from scheduled_posts.clock import format_instant
from scheduled_posts.errors import StateConflictError
from scheduled_posts.lifecycle.reasons import OccurrenceCancelReason
from scheduled_posts.models.series import OPEN_SERIES_STATUSES, Series, SeriesStatus

_INITIAL = "[*]"
_ONE_MS = timedelta(milliseconds=1)
_A, _P = SeriesStatus.ACTIVE, SeriesStatus.PAUSED
_E, _C = SeriesStatus.ENDED, SeriesStatus.CANCELLED

#: The series transition table: every arrow of the diagram, by name, as its (from, to) edges.
SERIES_ARROWS: dict[str, frozenset[tuple[str, str]]] = {
    "create": frozenset({(_INITIAL, _A)}),
    "edit": frozenset({(_A, _A), (_P, _P)}),
    "pause": frozenset({(_A, _P)}),
    "resume": frozenset({(_P, _A)}),
    "delete": frozenset({(_A, _C), (_P, _C)}),
    "extend": frozenset({(_A, _A)}),
    "end": frozenset({(_A, _E)}),
}

#: Where an owner arrow is a no-op answering the series unchanged (pausing a paused series,
#: resuming an active one, deleting one that is over): idempotent, not an arrow.
UNCHANGED: dict[str, frozenset[SeriesStatus]] = {
    "pause": frozenset({_P}),
    "resume": frozenset({_A}),
    "delete": frozenset({_C, _E}),
}

#: The only status an occurrence may be written to (at the version it was computed from).
OCCURRENCE_WRITABLE = SeriesStatus.ACTIVE


class SeriesTransitionRefused(StateConflictError):
    """The arrow cannot start from the series' status (``arrow``, ``series_status``): a 409."""

    def __init__(self, arrow: str, status: SeriesStatus) -> None:
        super().__init__(f"the recurring schedule is {status.value}; it can no longer be changed")
        self.arrow = arrow
        self.series_status = status


@dataclass(frozen=True)
class SeriesChange:
    """What an owner arrow writes: ``new`` replaces ``old`` (``data.series.save``), and the
    occurrences the change cancels carry ``reason``."""

    arrow: str
    old: Series
    new: Series
    reason: OccurrenceCancelReason


def check(arrow: str, series: Series) -> None:
    """Raise :class:`SeriesTransitionRefused` unless ``arrow`` may start from its status."""
    if all(source != series.status for source, _ in SERIES_ARROWS[arrow]):
        raise SeriesTransitionRefused(arrow, series.status)


def unchanged(arrow: str, series: Series) -> bool:
    """Whether ``arrow`` leaves ``series`` as it is (:data:`UNCHANGED`)."""
    return series.status in UNCHANGED.get(arrow, frozenset())


def create(series: Series) -> Series:
    """``[*] -> active``: ``series`` as built from the request, checked to start at version 1,
    ``active``, with nothing recorded as superseded."""
    if (series.status, series.version, series.superseded) != (_A, 1, None):
        raise SeriesTransitionRefused("create", series.status)
    return series


def _changed(
    arrow: str, old: Series, now: datetime, reason: OccurrenceCancelReason, **update: Any
) -> SeriesChange:
    check(arrow, old)
    new = old.model_copy(
        update={
            **update,
            "version": old.version + 1,
            "updated_at": now,
            "superseded": old.snapshot(),
            "superseded_reason": reason,
            "extend_at": now,
        }
    )
    if (str(old.status), str(new.status)) not in SERIES_ARROWS[arrow]:
        raise SeriesTransitionRefused(arrow, new.status)
    return SeriesChange(arrow, old, new, reason)


def edit(old: Series, changes: dict[str, Any], *, now: datetime, retimed: bool) -> SeriesChange:
    """``active | paused -> same``: new post fields or timing (``changes``, already checked).
    A new timing (``retimed``) of an active series materializes again from ``now``."""
    if retimed and old.status == _A:
        changes = {**changes, **_from_now(now), "stopped_reason": None}
    return _changed("edit", old, now, OccurrenceCancelReason.SERIES_EDITED, **changes)


def pause(old: Series, *, now: datetime) -> SeriesChange:
    """``active -> paused``: its not-yet-claimed occurrences are cancelled."""
    return _changed(
        "pause", old, now, OccurrenceCancelReason.SERIES_PAUSED, status=_P, stopped_reason=None
    )


def resume(old: Series, *, now: datetime) -> SeriesChange:
    """``paused -> active``, materialized from ``now`` (the past is never back-filled)."""
    return _changed(
        "resume", old, now, OccurrenceCancelReason.SERIES_EDITED, status=_A, **_from_now(now)
    )


def delete(old: Series, *, now: datetime) -> SeriesChange:
    """``active | paused -> cancelled``: every not-yet-claimed occurrence is cancelled."""
    return _changed(
        "delete", old, now, OccurrenceCancelReason.SERIES_DELETED, status=_C, stopped_reason=None
    )


def extended(progressed: Series, *, extend_at: datetime | None) -> Series:
    """The materializer's save: ``active -> active`` while it has a next extension
    (``extend_at``), ``active -> ended`` when it has none (nothing left to publish later)."""
    check("extend", progressed)
    status = _A if extend_at is not None else _E
    return progressed.model_copy(update={"extend_at": extend_at, "status": status})


def _from_now(now: datetime) -> dict[str, Any]:
    return {"materialized_through": now - _ONE_MS, "extend_at": now}


def save_guard(old: Series) -> dict[str, Any]:
    """The stored values a save of a change of ``old`` requires unchanged (item values):
    ``version`` (an owner's change), ``status`` and ``materialized_through`` (a materializer
    run)."""
    return {
        "version": old.version,
        "status": old.status.value,
        "materialized_through": format_instant(old.materialized_through),
    }


def closes(old: Series, new: Series) -> bool:
    """Whether the change leaves ``MAX_SERIES_PER_USER``'s open statuses (the counter's -1)."""
    return old.status in OPEN_SERIES_STATUSES and new.status not in OPEN_SERIES_STATUSES
