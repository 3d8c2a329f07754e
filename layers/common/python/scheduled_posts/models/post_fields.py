"""The fields a post's text is made of, shared by posts, their variants and recurring schedules:
the text rules (control characters, blank text, the 5,000 code point cap of ``docs/api.md``
and decision "Request hygiene before routing"), the id shape, ``media_ids``, ``language`` and
``publish_at``. Re-exported by ``models/api.py``, their first home."""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, StrictStr, StringConstraints

from scheduled_posts.clock import parse_instant

#: Longest ``content``, in Unicode code points (``docs/api.md``).
MAX_CONTENT_CODE_POINTS = 5000
#: Most ``media_ids`` per post (``docs/api.md``).
MAX_MEDIA_IDS = 10
#: Most ``channel_ids`` per post (``docs/api.md``).
MAX_CHANNELS_PER_POST = 10
#: Ids the service generates are UUIDs; clients may only send ids of this shape.
ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"


#: C0 and C1 control characters and DEL, except tab, line feed and carriage return (decision
#: "Request hygiene before routing").
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
#: Characters that render as nothing although Unicode does not call them white space: Hangul
#: fillers and the braille blank, abused to post "empty" text, and U+FFFC OBJECT REPLACEMENT
#: CHARACTER (a placeholder for an embedded object the text does not carry).
_INVISIBLE_EXTRA = frozenset("\u115f\u1160\u2800\u3164\uffa0\ufffc")
#: General categories that show nothing on their own (Unicode 15, section 4.5): format
#: characters (Cf: zero-width spaces and joiners, BOM, soft hyphen, bidi marks, tags) and marks
#: (Mn, Mc, Me: combining accents, variation selectors U+FE00-FE0F and U+E0100-E01EF, the
#: combining grapheme joiner), which only modify a base character; with no visible base
#: character they draw nothing but perhaps a dotted circle.
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Mn", "Mc", "Me"})


def _clean_text(value: str) -> str:
    """Refuse strings DynamoDB or a receiver could choke on: control characters (C0 and C1,
    DEL; tab, LF and CR are allowed) and lone surrogates."""
    match = _CONTROL.search(value)
    if match is not None:
        code = ord(match.group())
        name = "NUL" if code == 0 else f"U+{code:04X}"
        raise ValueError(
            f"must not contain control characters ({name}); only tab, line feed and carriage "
            "return are allowed"
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("must be valid Unicode (no lone surrogates)") from exc
    return value


def is_blank(value: str) -> bool:
    """Whether ``value`` shows nothing: only white space, format characters (Cf), marks with no
    base character to modify (Mn, Mc, Me, variation selectors among them), Hangul/braille
    fillers or U+FFFC. ``"e\u0301"`` (e with a combining accent) is not blank."""
    return all(
        ch.isspace() or ch in _INVISIBLE_EXTRA or unicodedata.category(ch) in _INVISIBLE_CATEGORIES
        for ch in value
    )


def _content_rule(value: str) -> str:
    _clean_text(value)
    value = value.replace("\r\n", "\n")
    if is_blank(value):
        raise ValueError("must not be blank")
    if len(value) > MAX_CONTENT_CODE_POINTS:
        raise ValueError(f"must be at most {MAX_CONTENT_CODE_POINTS} characters (code points)")
    return value


def _not_blank(value: str) -> str:
    _clean_text(value)
    if is_blank(value):
        raise ValueError("must not be blank")
    return value


def _not_null(value: Any) -> Any:
    """A field that may be left out but not sent as ``null`` (the error names it)."""
    if value is None:
        raise ValueError("must not be null; leave the field out to keep its value")
    return value


def parse_rfc3339(value: str) -> datetime:
    """The exact RFC 3339 text (ASCII, nothing around it) -> aware UTC; see :func:`parse_instant`.

    Raises
    ------
    ValueError
        Like :func:`parse_instant`.
    """
    return parse_instant(value)


def _parse_publish_at(value: Any) -> datetime:
    """RFC 3339 with an explicit offset -> aware UTC, rounded up to the millisecond."""
    if not isinstance(value, str):
        raise ValueError("must be an RFC 3339 date-time string with an offset")
    if len(value) > 64:
        raise ValueError("is too long for an RFC 3339 date-time")
    try:
        return parse_rfc3339(value)
    except OverflowError as exc:  # an offset that moves the instant out of range
        raise ValueError("is out of range") from exc


def _distinct(values: list[str]) -> list[str]:
    if len(set(values)) != len(values):
        raise ValueError("must not contain duplicates")
    return values


Id = Annotated[StrictStr, StringConstraints(pattern=ID_PATTERN)]
Content = Annotated[
    StrictStr,
    Field(
        min_length=1,
        description="1 to 5,000 Unicode code points, not blank (invisible characters alone are "
        "blank); no control characters but tab, LF and CR; CRLF is stored as LF",
    ),
    AfterValidator(_content_rule),
]
MediaId = Annotated[StrictStr, Field(min_length=1, max_length=256), AfterValidator(_clean_text)]
MediaIds = Annotated[list[MediaId], Field(max_length=MAX_MEDIA_IDS)]
ChannelIds = Annotated[
    list[Id],
    Field(min_length=1, max_length=MAX_CHANNELS_PER_POST),
    AfterValidator(_distinct),
]
Language = Annotated[
    StrictStr,
    StringConstraints(pattern=r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,4}$", max_length=35),
    Field(description="BCP 47 language tag of the content (e.g. en, pt-BR): Bluesky langs"),
]
PublishAt = Annotated[
    datetime,
    BeforeValidator(_parse_publish_at),
    Field(
        description="RFC 3339 date-time with an explicit offset (Z or +hh:mm); stored in UTC, "
        "rounded up to the millisecond"
    ),
]
#: The words a create's ``publish_at`` takes besides an instant: the current instant, or the
#: earliest free slot of the post's channels' posting schedules (``logic/posting_queue.py``).
PUBLISH_AT_WORDS = ("now", "next_free_slot")


def _publish_at_or_word(value: Any) -> Any:
    return value if value in PUBLISH_AT_WORDS else _parse_publish_at(value)


CreatePublishAt = Annotated[
    datetime | Literal["now", "next_free_slot"],
    BeforeValidator(_publish_at_or_word),
    Field(
        description="RFC 3339 date-time with an explicit offset (Z or +hh:mm), stored in UTC "
        'and rounded up to the millisecond; or "now" (this instant, through the same path), or '
        '"next_free_slot" (the earliest slot free in every channel\'s posting schedule)'
    ),
]
