"""The request rules every post write shares: ``If-Match`` (RFC 9110 section 13.1.1), the
``ETag``, ``publish_at``'s window, the late marker's horizon and the 422 error entries.

* ``publish_at`` is not in the past and at most ``MAX_SCHEDULE_AHEAD_DAYS`` ahead, to the
  second. Failures are 422 (:class:`ValidationFailedError`).
* A stale ``If-Match`` is a 412; a malformed one a 422; without one, a write that lost a race
  is retried at most :data:`WRITE_ATTEMPTS` times, then answered 409.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from scheduled_posts import keys
from scheduled_posts.errors import StateConflictError, ValidationFailedError, VersionConflictError
from scheduled_posts.models.api import etag_for
from scheduled_posts.models.post import Post
from scheduled_posts.settings import Settings

#: Tries of an edit or cancel without ``If-Match`` that lost a race to another edit.
WRITE_ATTEMPTS = 3
#: ``entity-tag = [ W/ ] DQUOTE *etagc DQUOTE`` (RFC 9110 section 8.8.3).
_ENTITY_TAG = r'(?:W/)?"[\x21\x23-\x7e\x80-\xff]*"'
#: ``If-Match = "*" / #entity-tag``: a comma list, empty elements allowed (section 5.6.1).
_IF_MATCH_LIST = re.compile(rf"[ \t]*(?:{_ENTITY_TAG})?(?:[ \t]*,[ \t]*(?:{_ENTITY_TAG})?)*[ \t]*")


def parse_if_match(value: str | None) -> frozenset[str] | None:
    """The entity tags an ``If-Match`` header names: ``None`` when absent or ``*``.

    If-Match uses the strong comparison (RFC 9110 section 13.1.1): a weak tag (``W/"1"``)
    never matches, and a tag matches only when it is exactly the quoted version (``"1"``, not
    ``"01"``). A list matches when any member does; an empty value names nothing, so the
    request fails with 412.

    Raises
    ------
    ValidationFailedError
        The value is neither ``*`` nor a list of quoted entity tags (``1`` instead of ``"1"``):
        422, since no version could ever match it (RFC 9110 sections 13.1.1 and 8.8.3).
    """
    if value is None or value.strip(" \t") == "*":
        return None
    if _IF_MATCH_LIST.fullmatch(value) is None:
        raise ValidationFailedError(
            "the request is not valid",
            [
                field_error(
                    ["header", "If-Match"],
                    'must be * or a list of quoted entity tags, such as "1" (with the quotes)',
                    "if_match_malformed",
                )
            ],
        )
    return frozenset(re.findall(_ENTITY_TAG, value))


def etag(post: Post) -> str:
    """The ``ETag`` of a post (:func:`scheduled_posts.models.api.etag_for`)."""
    return etag_for(post)


def require_version(current: str, version: int, expected: frozenset[str] | None) -> None:
    """412 unless ``expected`` (the tags :func:`parse_if_match` read; None: no ``If-Match`` or
    ``*``) names ``current``, the resource's ``ETag`` at ``version``.

    Raises
    ------
    VersionConflictError
        ``If-Match`` names another version (RFC 9110 section 13.1.1).
    """
    if expected is not None and current not in expected:
        raise VersionConflictError(f"If-Match does not match the current version ({version})")


def _late_horizon(now: datetime, settings: Settings) -> datetime:
    return now + timedelta(seconds=settings.LOOKAHEAD_SECONDS + keys.LATE_MARGIN_SECONDS)


def needs_marker(publish_at: datetime, now: datetime, settings: Settings) -> bool:
    return publish_at <= _late_horizon(now, settings)


def field_error(loc: list[Any], msg: str, kind: str) -> dict[str, Any]:
    return {"loc": loc, "msg": msg, "type": kind}


def publish_at_errors(publish_at: datetime, now: datetime, settings: Settings) -> list[dict]:
    """The create's ``publish_at`` problems (past; beyond ``MAX_SCHEDULE_AHEAD_DAYS``)."""
    loc = ["body", "publish_at"]
    if publish_at < now:
        return [field_error(loc, "must not be in the past", "publish_at_past")]
    horizon = now + timedelta(days=settings.MAX_SCHEDULE_AHEAD_DAYS)
    if publish_at > horizon:
        return [
            field_error(
                loc,
                f"must be at most {settings.MAX_SCHEDULE_AHEAD_DAYS} days ahead "
                "(MAX_SCHEDULE_AHEAD_DAYS)",
                "publish_at_too_far",
            )
        ]
    return []


def raise_if(errors: list[dict]) -> None:
    if errors:
        raise ValidationFailedError("the request is not valid", errors)


def kept_changing() -> StateConflictError:
    """409 for a write without ``If-Match`` that lost :data:`WRITE_ATTEMPTS` races: 412 would
    claim a precondition the client never sent failed (RFC 9110 section 15.5.13)."""
    return StateConflictError("the post kept changing during this request; try again")
