"""Typed errors of the domain. The API maps each to one problem+json status in one place
(``scheduled_posts/problems.py``); the data layer raises them ``from`` the botocore error."""

from __future__ import annotations

from typing import Any


class ServiceError(Exception):
    """Base class. ``detail`` is safe to show to the caller (never a secret)."""

    status: int = 500
    title: str = "Internal error"

    def __init_subclass__(
        cls, *, status: int | None = None, title: str | None = None, **kwargs: Any
    ) -> None:
        """A subclass names its problem+json ``status`` (an HTTP status code) and ``title`` as
        class keywords (``class StateConflictError(ServiceError, status=409, title=...)``);
        without them it keeps its parent's."""
        super().__init_subclass__(**kwargs)
        if status is not None:
            cls.status = status
        if title is not None:
            cls.title = title

    def __init__(self, detail: str = "") -> None:
        super().__init__(detail or self.title)
        self.detail = detail or self.title


class NotFoundError(ServiceError, status=404, title="Not found"):
    """The resource does not exist or belongs to another user (indistinguishable by design)."""


class ImportNotFoundError(NotFoundError):
    """No import with that id for this caller."""


class PostNotFoundError(NotFoundError):
    """No post with that id for this caller."""


class ChannelNotFoundError(NotFoundError):
    """No channel with that id for this caller."""


class NotificationEndpointNotFoundError(NotFoundError):
    """No notification endpoint with that id for this caller."""


class MediaNotFoundError(NotFoundError):
    """No upload with that id for this caller."""


class StateConflictError(ServiceError, status=409, title="Conflict"):
    """The post's state does not allow the request (e.g. PATCH on a published post)."""


class VersionConflictError(ServiceError, status=412, title="Precondition failed"):
    """``If-Match`` named a version that is not the current one (RFC 9110 section 13.1.1)."""


class InvalidCursorError(ServiceError, status=400, title="Invalid cursor"):
    """The pagination cursor was forged, corrupted or issued to another user."""


class ValidationFailedError(ServiceError, status=422, title="Validation failed"):
    """Input failed validation; ``errors`` lists ``{"loc": [...], "msg": str}`` per field."""

    def __init__(self, detail: str, errors: list[dict[str, object]] | None = None) -> None:
        super().__init__(detail)
        self.errors = errors or []


class LimitExceededError(ServiceError, status=429, title="Limit exceeded"):
    """A per-user limit (``MAX_PENDING_POSTS``) would be exceeded."""


class RetryableDeliveryError(Exception):
    """A delivery failed in a way worth retrying (5xx, timeout, connection error, 429).

    ``retry_after_seconds`` is the destination's ``Retry-After`` (RFC 9110 section 10.2.3)
    when it sent one; ``rate_limited`` is True for a 429, whose waits do not use up attempts.
    """

    def __init__(
        self,
        message: str,
        *,
        http_status: int | None = None,
        retry_after_seconds: float | None = None,
        rate_limited: bool = False,
    ) -> None:
        super().__init__(message)
        self.http_status = http_status
        self.retry_after_seconds = retry_after_seconds
        self.rate_limited = rate_limited


class QueueSendError(Exception):
    """SQS did not accept a dispatch message (raised by ``scheduled_posts.data.queue``). After a
    failed batch send, earlier batches may have been sent: the caller sends again later and the
    worker's claim drops what arrives twice."""


class NetworkUnavailableError(ServiceError, status=502, title="Bad gateway"):
    """A network (Mastodon instance, Bluesky PDS) could not check credentials now: unreachable,
    timed out, rate-limited or 5xx. Nothing was stored."""
