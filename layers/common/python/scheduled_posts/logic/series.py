"""Recurring schedules (issue 13): rule checks shared by create, edit and preview.

The rules themselves (cron and weekly slots in an IANA zone, the DST rule, bounds) live in
``scheduled_posts.recurrence``; this module turns its :class:`RuleError` into the API's 422
``ValidationFailedError`` and applies the settings (``MIN_RECURRENCE_INTERVAL_SECONDS``).
"""

from __future__ import annotations

from datetime import datetime

from scheduled_posts import recurrence
from scheduled_posts.errors import ValidationFailedError
from scheduled_posts.models.recurring import PreviewRequest, RuleFields
from scheduled_posts.recurrence import Bounds, Occurrence, RuleError
from scheduled_posts.settings import Settings


def rule_problem(exc: RuleError) -> ValidationFailedError:
    """The 422 for a rule the service refuses: ``errors[0]`` names the field and the kind."""
    return ValidationFailedError(
        "the recurrence rule is not valid",
        errors=[{"loc": ["body", exc.field], "msg": exc.message, "type": exc.kind}],
    )


def checked_bounds(fields: RuleFields, *, starts_at: datetime, settings: Settings) -> Bounds:
    """The bounds of ``fields`` from ``starts_at``, after checking the rule against them.

    Raises
    ------
    ValidationFailedError
        ``ends_at`` not after ``starts_at``, an interval under
        ``MIN_RECURRENCE_INTERVAL_SECONDS``, a rule that never matches (31 February), or no
        occurrence before ``ends_at``.
    """
    if fields.ends_at is not None and fields.ends_at <= starts_at:
        raise rule_problem(RuleError("ends_at", "ends_before_start", "must be after starts_at"))
    bounds = fields.bounds(starts_at)
    try:
        recurrence.check_rule(
            fields.rule(), bounds, min_interval_seconds=settings.MIN_RECURRENCE_INTERVAL_SECONDS
        )
    except RuleError as exc:
        raise rule_problem(exc) from exc
    return bounds


def preview_occurrences(
    request: PreviewRequest, *, now: datetime, settings: Settings
) -> list[Occurrence]:
    """The first ``request.count`` occurrences at or after ``starts_at`` (default ``now``)
    within the bounds; stores nothing.

    Raises
    ------
    ValidationFailedError
        Like :func:`checked_bounds` (the same 422 problems as create).
    """
    starts_at = request.starts_at or now
    bounds = checked_bounds(request, starts_at=starts_at, settings=settings)
    return recurrence.occurrences(request.rule(), bounds, count=request.count)
