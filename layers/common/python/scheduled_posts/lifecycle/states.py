"""Post and delivery states (``docs/dispatch.md``, "State machine")."""

from __future__ import annotations

from enum import StrEnum


# Where a post is in its lifecycle (the nodes of the state diagram). No docstring on purpose:
# the API's OpenAPI document shows this enum, and its description there stays as it was.
class PostStatus(StrEnum):
    DRAFT = "draft"
    SCHEDULED = "scheduled"
    PUBLISHING = "publishing"
    PUBLISHED = "published"
    PARTIALLY_PUBLISHED = "partially_published"
    FAILED = "failed"
    CANCELLED = "cancelled"
    MISSED = "missed"


TERMINAL_POST_STATUSES = frozenset(
    {
        PostStatus.PUBLISHED,
        PostStatus.PARTIALLY_PUBLISHED,
        PostStatus.FAILED,
        PostStatus.CANCELLED,
        PostStatus.MISSED,
    }
)


class DeliveryStatus(StrEnum):
    """Where one (post, channel) delivery is: ``pending -> published | failed | skipped``, or
    through ``retry_scheduled``."""

    PENDING = "pending"
    PUBLISHING = "publishing"
    PUBLISHED = "published"
    RETRY_SCHEDULED = "retry_scheduled"
    FAILED = "failed"
    SKIPPED = "skipped"


TERMINAL_DELIVERY_STATUSES = frozenset(
    {DeliveryStatus.PUBLISHED, DeliveryStatus.FAILED, DeliveryStatus.SKIPPED}
)
