"""Request and response shapes of the recurring-schedule API (``docs/recurring.md``), as pydantic v2
models.

A rule is exactly one of ``cron`` (five fields) or ``slots`` (a weekly pattern), read as
wall-clock time in ``timezone`` (an IANA name or ``UTC``). Field-level problems (a zone that is
not IANA, a cron that is not five standard fields, a slot time that is not ``HH:MM``) are 422
problems whose ``errors[].type`` names the problem (``timezone_not_iana``, ``cron_invalid``,
...). Rules that need a setting or an iteration (the minimum interval, a rule that never
matches) are checked by ``scheduled_posts.logic.series`` with the same ``errors`` shape.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    model_validator,
)
from pydantic_core import PydanticCustomError

from scheduled_posts import recurrence
from scheduled_posts.clock import format_instant, parse_instant
from scheduled_posts.models.account_media import ExportMedia
from scheduled_posts.models.api import ChannelIds, Content, ExportPost, MediaIds
from scheduled_posts.models.channel_api import ChannelOut
from scheduled_posts.models.notifications import NotificationEndpointOut
from scheduled_posts.models.thread import FirstComment, Part, Parts, PatchParts
from scheduled_posts.models.variants import Variant, Variants
from scheduled_posts.recurrence import Bounds, Occurrence, Rule, RuleError, WeeklySlot

#: Most occurrences one preview returns (``docs/recurring.md``).
MAX_PREVIEW_COUNT = 100
#: Most entries in ``slots`` and times in one entry: a weekly pattern, not a cron in disguise.
MAX_SLOTS = 7
MAX_SLOT_TIMES = 48
#: Largest ``max_occurrences`` accepted.
MAX_OCCURRENCES = 100_000


class Weekday(StrEnum):
    MON = "mon"
    TUE = "tue"
    WED = "wed"
    THU = "thu"
    FRI = "fri"
    SAT = "sat"
    SUN = "sun"


def _custom(exc: RuleError) -> PydanticCustomError:
    return PydanticCustomError(exc.kind, exc.message)


def _timezone(value: str) -> str:
    """The zone name as stored: ``Etc/UTC`` and the other names of UTC become ``UTC``."""
    try:
        return recurrence.canonical_zone_name(value)
    except RuleError as exc:
        raise _custom(exc) from exc


def _cron(value: str) -> str:
    try:
        return recurrence.check_cron(value)
    except RuleError as exc:
        raise _custom(exc) from exc


def _slot_time(value: str) -> str:
    try:
        recurrence.check_time(value)
    except RuleError as exc:
        raise _custom(exc) from exc
    return value


def _distinct(values: list[Any]) -> list[Any]:
    if len(set(values)) != len(values):
        raise ValueError("must not contain duplicates")
    return values


def _instant(value: Any) -> datetime:
    if not isinstance(value, str):
        raise ValueError("must be an RFC 3339 date-time string with an offset")
    if len(value) > 64:
        raise ValueError("is too long for an RFC 3339 date-time")
    try:
        return parse_instant(value)
    except OverflowError as exc:
        raise ValueError("is out of range") from exc


Instant = Annotated[
    datetime,
    BeforeValidator(_instant),
    Field(description="RFC 3339 date-time with an explicit offset (Z or +hh:mm)"),
]
Timezone = Annotated[
    StrictStr,
    Field(
        min_length=1,
        max_length=64,
        description="IANA time zone (Area/Location, e.g. America/New_York) or UTC; fixed "
        "offsets and abbreviations such as EST are refused",
    ),
    AfterValidator(_timezone),
]
Cron = Annotated[
    StrictStr,
    Field(
        min_length=1,
        max_length=200,
        description="Five cron fields (minute hour day-of-month month day-of-week), wall-clock "
        "time in timezone; both day fields restricted: a day matches either (Vixie cron)",
    ),
    AfterValidator(_cron),
]
SlotTime = Annotated[StrictStr, Field(description="HH:MM, 24 h"), AfterValidator(_slot_time)]


class Slot(BaseModel):
    """One entry of a weekly pattern: every ``times`` on every ``days``."""

    model_config = ConfigDict(extra="forbid")

    days: Annotated[list[Weekday], Field(min_length=1, max_length=7), AfterValidator(_distinct)]
    times: Annotated[
        list[SlotTime], Field(min_length=1, max_length=MAX_SLOT_TIMES), AfterValidator(_distinct)
    ]


class RuleFields(BaseModel):
    """The rule and its bounds, shared by create, edit and preview."""

    model_config = ConfigDict(extra="forbid")

    timezone: Timezone
    cron: Cron | None = None
    slots: Annotated[list[Slot], Field(min_length=1, max_length=MAX_SLOTS)] | None = None
    ends_at: Instant | None = None
    max_occurrences: Annotated[StrictInt, Field(ge=1, le=MAX_OCCURRENCES)] | None = None

    @model_validator(mode="after")
    def _exactly_one_rule(self) -> RuleFields:
        if (self.cron is None) == (self.slots is None):
            raise PydanticCustomError("rule_missing", "give exactly one of cron or slots")
        return self

    def rule(self) -> Rule:
        """The domain rule (``scheduled_posts.recurrence.Rule``)."""
        slots = None
        if self.slots is not None:
            slots = tuple(
                WeeklySlot(days=tuple(d.value for d in s.days), times=tuple(s.times))
                for s in self.slots
            )
        return Rule(timezone=self.timezone, cron=self.cron, slots=slots)

    def bounds(self, starts_at: datetime) -> Bounds:
        return Bounds(
            starts_at=starts_at, ends_at=self.ends_at, max_occurrences=self.max_occurrences
        )


class PreviewRequest(RuleFields):
    """``POST /v1/recurring-schedules/preview`` body: nothing is stored."""

    starts_at: Instant | None = Field(
        default=None, description="Any instant, past or future (default: now)"
    )
    count: Annotated[StrictInt, Field(ge=1, le=MAX_PREVIEW_COUNT)] = 10


class OccurrenceOut(BaseModel):
    """One occurrence: the UTC instant and the wall time with its offset."""

    occurrence_at: str = Field(description="UTC, YYYY-MM-DDTHH:MM:SS.mmmZ")
    local_time: str = Field(description="Wall time in timezone with its offset")

    @classmethod
    def of(cls, occurrence: Occurrence) -> OccurrenceOut:
        return cls(
            occurrence_at=format_instant(occurrence.occurrence_at),
            local_time=occurrence.local_time_text,
        )


class PreviewOut(BaseModel):
    """``POST /v1/recurring-schedules/preview`` 200 body: the first ``count`` occurrences at or
    after ``starts_at`` within the bounds."""

    occurrences: list[OccurrenceOut]


# ------------------------------------------------------------------ the series API


class SeriesCreate(RuleFields):
    """``POST /v1/recurring-schedules`` body: the post fields (a thread's ``parts`` and a
    ``first_comment`` too, as a post's: ``models/thread.py``), the rule and its bounds."""

    content: Content
    media_ids: MediaIds = Field(default_factory=list)
    channel_ids: ChannelIds
    variants: Variants = Field(default_factory=dict)
    parts: Parts | None = None
    first_comment: FirstComment | None = Field(
        None, description="A reply by the same account to part 1, delay_seconds after each post"
    )
    starts_at: Instant | None = Field(default=None, description="Default: now")


class SeriesPatch(BaseModel):
    """``PATCH /v1/recurring-schedules/{series_id}`` body: at least one field. ``cron`` replaces
    ``slots`` and the reverse; ``ends_at``, ``max_occurrences`` and ``first_comment`` may be
    ``null`` (removed); ``parts: []`` makes the template a single post again."""

    model_config = ConfigDict(extra="forbid")

    content: Content | None = None
    media_ids: MediaIds | None = None
    channel_ids: ChannelIds | None = None
    variants: Annotated[
        Variants | None, Field(description="Replaces every variant ({} removes them all)")
    ] = None
    parts: Annotated[
        PatchParts | None,
        Field(description="Replaces the thread's replies ([] makes it a single post)"),
    ] = None
    first_comment: Annotated[
        FirstComment | None, Field(description="Replaces the first comment (null removes it)")
    ] = None
    timezone: Timezone | None = None
    cron: Cron | None = None
    slots: Annotated[list[Slot], Field(min_length=1, max_length=MAX_SLOTS)] | None = None
    starts_at: Instant | None = None
    ends_at: Instant | None = None
    max_occurrences: Annotated[StrictInt, Field(ge=1, le=MAX_OCCURRENCES)] | None = None

    @model_validator(mode="after")
    def _sensible(self) -> SeriesPatch:
        given = self.model_fields_set
        if not given:
            raise PydanticCustomError("patch_empty", "give at least one field")
        nullable = {"ends_at", "max_occurrences", "first_comment"}
        nulls = sorted(n for n in given - nullable if getattr(self, n) is None)
        if nulls:
            raise PydanticCustomError("patch_null", "may not be null: {names}", {"names": nulls})
        if self.cron is not None and self.slots is not None:
            raise PydanticCustomError("rule_missing", "give exactly one of cron or slots")
        return self

    @property
    def changes_timing(self) -> bool:
        """Whether the rule, zone or bounds change (not only the post fields)."""
        timing = {"timezone", "cron", "slots", "starts_at", "ends_at", "max_occurrences"}
        return bool(self.model_fields_set & timing)


class SeriesOut(BaseModel):
    """A recurring schedule as every series endpoint returns it."""

    series_id: str
    status: str
    content: str
    media_ids: list[str]
    channel_ids: list[str]
    variants: dict[str, Variant] = Field(default_factory=dict)
    parts: list[Part] = Field(default_factory=list, description="A thread's replies")
    first_comment: FirstComment | None = None
    timezone: str
    cron: str | None
    slots: list[dict[str, list[str]]] | None
    starts_at: str
    ends_at: str | None
    max_occurrences: int | None
    version: int
    created_at: str
    updated_at: str
    materialized_through: str = Field(description="Every occurrence up to here exists as a post")
    stopped_reason: str | None = Field(
        description="Why an active series is not materializing (pending_limit), else null"
    )
    next_occurrences: list[OccurrenceOut] = Field(description="The next 5 occurrences")


class SeriesPage(BaseModel):
    """``GET /v1/recurring-schedules`` body. Only ``next_cursor: null`` ends the list."""

    items: list[SeriesOut]
    next_cursor: str | None


class AccountExport(BaseModel):
    """``GET /v1/me/export`` body: everything the service holds about the caller (here, not
    in ``models/api.py``, because it holds :class:`SeriesOut`)."""

    subject: str
    exported_at: str
    posts: list[ExportPost]
    recurring_schedules: list[SeriesOut]
    channels: list[ChannelOut]
    notification_endpoints: list[NotificationEndpointOut]
    media: list[ExportMedia] = []


class SeriesOccurrenceOut(OccurrenceOut):
    """An upcoming occurrence; ``schedule_id`` and ``status`` once it exists as a post."""

    schedule_id: str | None
    status: str | None
    detached: bool


class SeriesOccurrenceList(BaseModel):
    """``GET /v1/recurring-schedules/{series_id}/occurrences`` body, in time order."""

    items: list[SeriesOccurrenceOut]
