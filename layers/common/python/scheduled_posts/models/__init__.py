"""Domain models (pydantic v2). The data layer returns these, never raw items."""

from scheduled_posts.models.post import (
    TERMINAL_POST_STATUSES,
    Attempt,
    Channel,
    Delivery,
    DeliveryStatus,
    Post,
    PostStatus,
)

__all__ = [
    "TERMINAL_POST_STATUSES",
    "Attempt",
    "Channel",
    "Delivery",
    "DeliveryStatus",
    "Post",
    "PostStatus",
]
