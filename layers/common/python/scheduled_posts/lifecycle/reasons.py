"""Every fixed ``status_reason`` (and delivery ``last_error``) text, as enum members.

Code compares and writes members, never copied literals: the worker writes
:attr:`StatusReason.DEAD_LETTERED` and DLQ redrive matches the same member, so changing its text
changes both.
"""

from __future__ import annotations

from enum import StrEnum


class StatusReason(StrEnum):
    """A post's ``status_reason`` (stored as the member's value)."""

    #: The worker failed the post because its dispatch message was about to be dead-lettered.
    DEAD_LETTERED = "dead-lettered: the dispatch message kept failing"
    SOME_CHANNELS_FAILED = "some channels failed or were deleted"
    EVERY_CHANNEL_DELETED = "every channel was deleted"
    NO_CHANNEL_ACCEPTED = "no channel accepted the post"
    RETRY_REQUESTED = "retry requested by its owner"
    REOPENED_BY_REDRIVE = "reopened by DLQ redrive"


class OccurrenceCancelReason(StrEnum):
    """Why the series itself cancelled a not-yet-claimed occurrence (its ``status_reason``)."""

    SERIES_EDITED = "the recurring schedule's rule changed"
    SERIES_PAUSED = "the recurring schedule was paused"
    SERIES_DELETED = "the recurring schedule was deleted"


class DeliveryError(StrEnum):
    """Fixed ``last_error`` texts of a delivery (prefixes where the text goes on)."""

    CHANNEL_DELETED = "channel was deleted"
    IN_PROGRESS = "delivery already in progress in another invocation"
    #: A post with media for a Mastodon or Bluesky channel (stored before the API refused
    #: them): never published as text alone (decision "Media refused for network channels
    #: until they can be published").
    MEDIA_UNSUPPORTED = (
        "media_unsupported: this network channel cannot publish media yet;"
        " the post was not sent without them"
    )
    #: A post whose media are no longer the owner's ready uploads at publish time (deleted,
    #: pending or rejected): never published without them (decision "Media are checked again
    #: before publishing"); the id and its state follow in parentheses.
    MEDIA_MISSING = (
        "media_missing: a media item of the post is not a ready upload;"
        " the post was not sent without it"
    )
    #: A delivery deferred, without an attempt, while its channel's breaker is open (decision
    #: "A breaker per destination").
    BREAKER_OPEN = (
        "destination_unavailable: the channel's last deliveries timed out or failed;"
        " deferred without an attempt until its breaker lets one through"
    )
    #: Prefix of the ``last_error`` of deliveries failed by the dead-letter path.
    DEAD_LETTERED_PREFIX = "dispatch message dead-lettered"


def missed_reason(misfire_grace_seconds: int, lag_seconds: float) -> str:
    """The ``status_reason`` of a ``missed`` post: it was overdue by ``lag_seconds`` (> the grace)
    when a worker received it."""
    return (
        f"not dispatched within MISFIRE_GRACE_SECONDS={misfire_grace_seconds}"
        f" of publish_at (overdue by {lag_seconds:.0f} s when a worker received it)"
    )


def dead_lettered_error(exc: BaseException) -> str:
    """The ``last_error`` of a delivery failed by the dead-letter path (at most 500 characters)."""
    return f"{DeliveryError.DEAD_LETTERED_PREFIX} after repeated failures: {exc!r}"[:500]
