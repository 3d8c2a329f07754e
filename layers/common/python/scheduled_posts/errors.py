"""Typed errors of the domain. The API maps each to one problem+json status in one place
(``scheduled_posts/problems.py``); the data layer raises them ``from`` the botocore error."""

from __future__ import annotations


class ServiceError(Exception):
    """Base class. ``detail`` is safe to show to the caller (never a secret)."""

    status: int = 500
    title: str = "Internal error"

    def __init__(self, detail: str = "") -> None:
        super().__init__(detail or self.title)
        self.detail = detail or self.title


class NotFoundError(ServiceError):
    """The resource does not exist or belongs to another user (indistinguishable by design)."""

    status = 404
    title = "Not found"


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


class StateConflictError(ServiceError):
    """The post's state does not allow the request (e.g. PATCH on a published post)."""

    status = 409
    title = "Conflict"


class VersionConflictError(ServiceError):
    """``If-Match`` named a version that is not the current one (RFC 9110 section 13.1.1)."""

    status = 412
    title = "Precondition failed"


class InvalidCursorError(ServiceError):
    """The pagination cursor was forged, corrupted or issued to another user."""

    status = 400
    title = "Invalid cursor"


class ValidationFailedError(ServiceError):
    """Input failed validation; ``errors`` lists ``{"loc": [...], "msg": str}`` per field."""

    status = 422
    title = "Validation failed"

    def __init__(self, detail: str, errors: list[dict[str, object]] | None = None) -> None:
        super().__init__(detail)
        self.errors = errors or []


class LimitExceededError(ServiceError):
    """A per-user limit (``MAX_PENDING_POSTS``) would be exceeded."""

    status = 429
    title = "Limit exceeded"


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


class NetworkUnavailableError(ServiceError):
    """A network (Mastodon instance, Bluesky PDS) could not check credentials now: unreachable,
    timed out, rate-limited or 5xx. Nothing was stored."""

    status = 502
    title = "Bad gateway"
