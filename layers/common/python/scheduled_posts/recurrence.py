"""Recurrence rules: cron or weekly slots read as wall-clock time in an IANA zone
(``docs/recurring.md``).

Pure: no I/O and no clock. Cron expressions are parsed and iterated by ``croniter`` (with its
``implement_cron_bug`` switch, so the two day fields combine exactly as in Vixie cron: OR when
both are restricted, AND when either starts with ``*``); zones come from ``zoneinfo`` (the
``tzdata`` package pins the database). Nothing here parses cron by hand: this module only
refuses the non-standard extensions croniter also accepts (``L``, ``#``, ``H``, ``?``, six
fields, ``@daily``) so that a rule means the same in any cron.

**DST rule** (``docs/recurring.md``): croniter yields *wall-clock* times in the zone;
:func:`resolve_wall_time` turns each into one UTC instant:

* a wall time that does not exist (the spring-forward gap) fires once, at the first valid
  instant after the gap (the transition itself): ``02:30`` America/Los_Angeles on 2026-03-08
  is ``2026-03-08T10:00:00Z`` (03:00 PDT);
* a wall time that occurs twice (the fall-back repeat) fires once, at its first, earlier
  instant: ``01:30`` America/New_York on 2026-11-01 is ``2026-11-01T05:30:00Z`` (01:30 EDT).

Several wall times that resolve to the same instant (``*/15 2 * * *`` on a spring-forward day)
fire once: instants are strictly increasing.
"""

from __future__ import annotations

import heapq
import re
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from itertools import islice, pairwise
from zoneinfo import ZoneInfo, available_timezones

from croniter import CroniterBadDateError, croniter

from scheduled_posts.clock import format_instant

#: The weekday names of a slot, Monday first (cron's day-of-week numbers 1..6, 0).
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_CRON_DOW = {"mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6, "sun": 0}
#: The areas of the IANA tz database's geographic names (tz-link.html, "Area/Location").
GEOGRAPHIC_AREAS = frozenset(
    {
        "Africa",
        "America",
        "Antarctica",
        "Arctic",
        "Asia",
        "Atlantic",
        "Australia",
        "Europe",
        "Indian",
        "Pacific",
    }
)
#: One cron list item: ``*`` or a number/name, an optional range end, an optional step.
_ITEM = r"(?:\*|(?:\d{1,2}|[A-Za-z]{3})(?:-(?:\d{1,2}|[A-Za-z]{3}))?)(?:/\d{1,2})?"
_FIELD = re.compile(rf"{_ITEM}(?:,{_ITEM})*\Z", re.ASCII)
_TIME = re.compile(r"([01]\d|2[0-3]):([0-5]\d)\Z", re.ASCII)
_MINUTES_PER_DAY = 1440
_MINUTES_PER_WEEK = 7 * _MINUTES_PER_DAY
#: Day matches inspected when looking for two consecutive matching days (8 years: a leap cycle).
_DAY_SCAN = 8 * 366
_OCCURRENCE_NAMESPACE = uuid.UUID("0b6f7c52-3d1e-4b8a-9f21-6c4e2a9d5e13")


class RuleError(ValueError):
    """A rule, zone or bound that cannot be used; ``field`` names the input, ``kind`` the
    problem (``timezone_not_iana``, ``cron_invalid``, ``rule_never_matches`` ...)."""

    def __init__(self, field: str, kind: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.kind = kind
        self.message = message


@lru_cache(maxsize=1)
def _zone_names() -> frozenset[str]:
    return frozenset(available_timezones())


#: IANA's names of UTC itself (tzdata ``etcetera``: ``Etc/UTC`` is the zone, the others link to
#: it), what many systems report: read as ``UTC``. The fixed offsets ``Etc/GMT+N``/``-N`` and
#: ``GMT`` stay refused (decision "Etc/UTC is UTC; fixed offsets stay refused").
UTC_NAMES = frozenset({"UTC", "Etc/UTC", "Etc/UCT", "Etc/Universal", "Etc/Zulu"})


def canonical_zone_name(name: str) -> str:
    """``UTC`` for every name in :data:`UTC_NAMES`, else ``name`` once :func:`zone_for` accepts
    it (the name a series stores and shows).

    Raises
    ------
    RuleError
        As :func:`zone_for`.
    """
    return zone_for(name).key


def zone_for(name: str) -> ZoneInfo:
    """The zone of an IANA ``Area/Location`` name (e.g. ``America/New_York``) or of UTC (any
    name in :data:`UTC_NAMES`, as the zone ``UTC``).

    Raises
    ------
    RuleError
        ``timezone_not_iana`` for anything else: fixed offsets (``+02:00``, ``Etc/GMT-2``),
        abbreviations (``EST``, ``CET``, ``GMT``), legacy aliases (``US/Eastern``) and unknown
        names.
    """
    if name in UTC_NAMES:
        return ZoneInfo("UTC")
    area = name.split("/", 1)[0] if "/" in name else ""
    if area not in GEOGRAPHIC_AREAS or name not in _zone_names():
        raise RuleError(
            "timezone",
            "timezone_not_iana",
            "must be an IANA time zone name such as America/New_York, or UTC; fixed offsets "
            "(+02:00, Etc/GMT-2) and abbreviations (EST, CET) are refused because they do not "
            "follow daylight saving time",
        )
    return ZoneInfo(name)


def check_cron(expression: str) -> str:
    """Check a five-field cron expression; return it with single spaces.

    Fields: minute hour day-of-month month day-of-week, each ``*``, numbers, names (``JAN``,
    ``MON``), ranges, lists and steps. Values are checked by croniter.

    Raises
    ------
    RuleError
        ``cron_invalid``: not five fields, a non-standard extension, or a value out of range.
    """
    fields = expression.split()
    if len(fields) != 5 or not all(_FIELD.match(f) for f in fields):
        raise RuleError(
            "cron",
            "cron_invalid",
            "must be five cron fields (minute hour day-of-month month day-of-week) using *, "
            "numbers, names, ranges, lists and steps",
        )
    normalised = " ".join(fields)
    try:
        croniter.expand(normalised)
    except (ValueError, KeyError, IndexError) as exc:
        raise RuleError("cron", "cron_invalid", "has a value out of range") from exc
    return normalised


def check_time(value: str) -> tuple[int, int]:
    """``HH:MM`` (24 h, 00:00 to 23:59) -> (hour, minute).

    Raises
    ------
    RuleError
        ``slot_time_invalid`` for anything else.
    """
    match = _TIME.match(value)
    if match is None:
        raise RuleError("slots", "slot_time_invalid", "times must be HH:MM, 00:00 to 23:59")
    return int(match[1]), int(match[2])


@dataclass(frozen=True)
class WeeklySlot:
    """Wall-clock ``times`` (``HH:MM``) on each of ``days`` (``mon`` .. ``sun``)."""

    days: tuple[str, ...]
    times: tuple[str, ...]


@dataclass(frozen=True)
class Rule:
    """Exactly one of ``cron`` or ``slots``, read as wall-clock time in ``timezone``."""

    timezone: str
    cron: str | None = None
    slots: tuple[WeeklySlot, ...] | None = None

    @property
    def zone(self) -> ZoneInfo:
        return zone_for(self.timezone)

    def cron_expressions(self) -> tuple[str, ...]:
        """The rule as cron expressions: the cron itself, or one per slot time."""
        if self.cron is not None:
            return (self.cron,)
        expressions = []
        for slot in self.slots or ():
            days = ",".join(str(_CRON_DOW[d]) for d in slot.days)
            for text in slot.times:
                hour, minute = check_time(text)
                expressions.append(f"{minute} {hour} * * {days}")
        return tuple(dict.fromkeys(expressions))


@dataclass(frozen=True)
class Bounds:
    """``starts_at`` (inclusive), ``ends_at`` (inclusive, as RFC 5545's UNTIL) and
    ``max_occurrences`` (counted from ``starts_at``, as RFC 5545's COUNT)."""

    starts_at: datetime
    ends_at: datetime | None = None
    max_occurrences: int | None = None


@dataclass(frozen=True)
class Occurrence:
    """One firing: ``occurrence_at`` (aware UTC) and the same instant in the rule's zone."""

    occurrence_at: datetime
    local_time: datetime

    @property
    def local_time_text(self) -> str:
        """``2026-03-08T03:00:00-07:00``: the wall time with its UTC offset."""
        return self.local_time.isoformat(timespec="seconds")


def resolve_wall_time(wall: datetime, zone: ZoneInfo) -> datetime:
    """The UTC instant a naive wall-clock time in ``zone`` fires at (the DST rule above).

    A valid wall time is its own instant; a repeated one its first (``fold=0``) instant; one
    in a gap the transition instant that ends the gap (found to the second by bisection:
    every transition of the tz database is on a whole second).
    """
    first = wall.replace(tzinfo=zone, fold=0).astimezone(UTC)
    if first.astimezone(zone).replace(tzinfo=None) == wall:
        return first
    # In a gap, fold=0 applies the offset before the transition (PEP 495), a later instant
    # than fold=1's: the transition lies between them.
    low = wall.replace(tzinfo=zone, fold=1).astimezone(UTC)
    high, before = first, low.astimezone(zone).utcoffset()
    while high - low > timedelta(seconds=1):
        middle = (low + (high - low) / 2).replace(microsecond=0)
        if middle.astimezone(zone).utcoffset() == before:
            low = middle
        else:
            high = middle
    return high


def _wall_times(expression: str, after: datetime) -> Iterator[datetime]:
    """Naive wall times matching ``expression`` strictly after the naive ``after``."""
    try:
        source = croniter(expression, after, ret_type=datetime, implement_cron_bug=True)
        while True:
            yield source.get_next()
    except (CroniterBadDateError, OverflowError, ValueError):
        return  # no later match within croniter's search window, or past year 9999


def iter_occurrences(rule: Rule, *, not_before: datetime) -> Iterator[Occurrence]:
    """Every occurrence at or after ``not_before`` (aware), in strictly increasing order.

    Unbounded: take what you need (``itertools.islice``). Ends only when the rule matches no
    later wall time (a never-matching rule yields nothing).
    """
    zone = rule.zone
    try:
        after = (not_before - timedelta(microseconds=1)).astimezone(zone).replace(tzinfo=None)
    except OverflowError:
        return
    streams = [_wall_times(e, after) for e in rule.cron_expressions()]
    last: datetime | None = None
    for wall in heapq.merge(*streams):
        try:
            instant = resolve_wall_time(wall, zone)
        except OverflowError:
            return
        if instant < not_before or (last is not None and instant <= last):
            continue
        last = instant
        yield Occurrence(occurrence_at=instant, local_time=instant.astimezone(zone))


def occurrences(
    rule: Rule,
    bounds: Bounds,
    *,
    count: int,
    not_before: datetime | None = None,
    already: int = 0,
) -> list[Occurrence]:
    """At most ``count`` occurrences within ``bounds``, at or after ``not_before`` (default
    ``bounds.starts_at``; never earlier than it). ``already`` is how many occurrences of
    ``max_occurrences`` were used before ``not_before``."""
    start = bounds.starts_at if not_before is None else max(not_before, bounds.starts_at)
    if bounds.max_occurrences is not None:
        count = min(count, bounds.max_occurrences - already)
    if count <= 0:
        return []
    found = []
    for occurrence in islice(iter_occurrences(rule, not_before=start), count):
        if bounds.ends_at is not None and occurrence.occurrence_at > bounds.ends_at:
            break
        found.append(occurrence)
    return found


def _day_minutes(expression: str) -> list[int]:
    expanded, _ = croniter.expand(expression)
    minutes = range(60) if expanded[0] == ["*"] else expanded[0]
    hours = range(24) if expanded[1] == ["*"] else expanded[1]
    return sorted({int(h) * 60 + int(m) for h in hours for m in minutes})


def _consecutive_days_match(expression: str) -> bool:
    """Whether two consecutive calendar days both match the day fields of ``expression``."""
    _, _, dom, month, dow = expression.split()
    days = _wall_times(f"0 0 {dom} {month} {dow}", datetime(2000, 1, 1))  # noqa: DTZ001 - wall
    previous = None
    for day in islice(days, _DAY_SCAN):
        if previous is not None and day - previous == timedelta(days=1):
            return True
        previous = day
    return False


def nominal_interval_minutes(rule: Rule) -> int | None:
    """The shortest wall-clock gap between two consecutive matches of the rule, in minutes,
    or ``None`` when it matches at most once a year. A DST gap can bring two instants closer
    on one day (``docs/recurring.md``); this is the rule's own spacing."""
    if rule.cron is not None:
        times = _day_minutes(rule.cron)
        gaps = [b - a for a, b in pairwise(times)]
        wrap = _MINUTES_PER_DAY - times[-1] + times[0]
        if (not gaps or wrap < min(gaps)) and _consecutive_days_match(rule.cron):
            gaps.append(wrap)
        return min(gaps) if gaps else None
    week = sorted(
        {
            WEEKDAYS.index(day) * _MINUTES_PER_DAY + hour * 60 + minute
            for slot in rule.slots or ()
            for day in slot.days
            for hour, minute in (check_time(t) for t in slot.times)
        }
    )
    gaps = [b - a for a, b in pairwise(week)]
    gaps.append(_MINUTES_PER_WEEK - week[-1] + week[0])
    return min(gaps)


def check_rule(rule: Rule, bounds: Bounds, *, min_interval_seconds: int) -> Occurrence:
    """Refuse a rule the service cannot run; return its first occurrence within ``bounds``.

    Raises
    ------
    RuleError
        ``interval_too_short`` when two consecutive matches are under ``min_interval_seconds``
        apart (``MIN_RECURRENCE_INTERVAL_SECONDS``); ``rule_never_matches`` when no date ever
        matches (the 31st of February); ``no_occurrence_in_bounds`` when the first match is
        after ``ends_at``.
    """
    field = "cron" if rule.cron is not None else "slots"
    interval = nominal_interval_minutes(rule)
    if interval is not None and interval * 60 < min_interval_seconds:
        raise RuleError(
            field,
            "interval_too_short",
            f"occurrences would be {interval * 60} s apart; the minimum is "
            f"{min_interval_seconds} s (MIN_RECURRENCE_INTERVAL_SECONDS)",
        )
    first = next(iter_occurrences(rule, not_before=bounds.starts_at), None)
    if first is None:
        raise RuleError(field, "rule_never_matches", "the rule never matches (e.g. 31 February)")
    if bounds.ends_at is not None and first.occurrence_at > bounds.ends_at:
        raise RuleError(
            "ends_at", "no_occurrence_in_bounds", "the rule has no occurrence before ends_at"
        )
    return first


def occurrence_schedule_id(series_id: str, occurrence_at: datetime) -> str:
    """The post id of a series' occurrence: a UUID (version 5) of the series id and the
    occurrence's UTC instant, so every writer of the same occurrence names the same post."""
    return str(uuid.uuid5(_OCCURRENCE_NAMESPACE, f"{series_id}\n{format_instant(occurrence_at)}"))


def texts(found: Iterable[Occurrence]) -> list[dict[str, str]]:
    """``[{"occurrence_at": "...Z", "local_time": "...+hh:mm"}]`` for API answers."""
    return [
        {"occurrence_at": format_instant(o.occurrence_at), "local_time": o.local_time_text}
        for o in found
    ]
