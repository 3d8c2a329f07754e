"""Notification endpoints: a user's URL that receives their outcome events, signed.

The domain model (:class:`NotificationEndpoint`), the API's request and answer bodies, and the
notify queue's message (:class:`NotifyMessage`). See ``docs/events.md``, "Notifications".
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictStr, field_validator

from scheduled_posts.clock import format_instant
from scheduled_posts.models.events import EventType
from scheduled_posts.models.post import PreviousSecret

#: A URL as the API takes it; the outbound URL policy checks it further (``url_policy.py``).
EndpointUrl = Annotated[StrictStr, Field(min_length=1, max_length=2048)]


class NotificationEndpoint(BaseModel):
    """A user's notification endpoint. ``signing_secret`` is shown only at create and rotate.

    ``event_types`` are the types it receives (members of :class:`EventType`, sorted);
    ``previous_secrets`` are replaced secrets, newest first, each valid until its
    ``expires_at`` (the rotation overlap, ``SECRET_OVERLAP_SECONDS``), as for channels.
    """

    model_config = ConfigDict(frozen=True)

    endpoint_id: str
    owner: str
    url: str
    event_types: tuple[str, ...]
    signing_secret: str
    previous_secrets: tuple[PreviousSecret, ...] = ()
    created_at: datetime

    def valid_previous_secrets(self, now: datetime) -> list[PreviousSecret]:
        """The replaced secrets still in their overlap at ``now``, newest first."""
        return [p for p in self.previous_secrets if now < p.expires_at]

    def signing_secrets(self, now: datetime) -> list[str]:
        """The secrets to sign with at ``now``, newest first (one ``v1=`` each)."""
        return [self.signing_secret, *(p.secret for p in self.valid_previous_secrets(now))]

    def wants(self, event_type: str) -> bool:
        """Whether this endpoint receives events of ``event_type``."""
        return event_type in self.event_types


class NotificationEndpointCreate(BaseModel):
    """``POST /v1/notification-endpoints`` body: where to send (``https``; ``http`` or a private
    address only for an origin in ``OUTBOUND_ALLOWED_ORIGINS``) and which event types (at least
    one; each a type of ``docs/events.md``)."""

    model_config = ConfigDict(extra="forbid")

    url: EndpointUrl
    event_types: Annotated[list[EventType], Field(min_length=1, max_length=len(EventType))]

    @field_validator("event_types")
    @classmethod
    def _unique(cls, value: list[EventType]) -> list[EventType]:
        if len(set(value)) != len(value):
            raise ValueError("names an event type twice")
        return value


class NotificationEndpointOut(BaseModel):
    """A notification endpoint as ``GET`` shows it (never a secret)."""

    endpoint_id: str
    url: str
    event_types: list[str]
    created_at: str

    @classmethod
    def of(cls, endpoint: NotificationEndpoint) -> NotificationEndpointOut:
        return cls(
            endpoint_id=endpoint.endpoint_id,
            url=endpoint.url,
            event_types=list(endpoint.event_types),
            created_at=format_instant(endpoint.created_at),
        )


class NotificationEndpointCreated(NotificationEndpointOut):
    """The 201 of a create and the 200 of a rotation: the only answers with ``signing_secret``
    (``whsec_`` + base64: a Standard Webhooks secret)."""

    signing_secret: str

    @classmethod
    def of_new(cls, endpoint: NotificationEndpoint) -> NotificationEndpointCreated:
        return cls(
            **NotificationEndpointOut.of(endpoint).model_dump(),
            signing_secret=endpoint.signing_secret,
        )


class NotificationEndpointList(BaseModel):
    """``GET /v1/notification-endpoints`` body: every endpoint of the caller (at most
    ``MAX_NOTIFICATION_ENDPOINTS_PER_USER``), by ``endpoint_id``."""

    items: list[NotificationEndpointOut]


class NotifyMessage(BaseModel):
    """The notify queue's message: one event for one endpoint of its owner. ``event`` is the
    event's JSON body exactly as the bus and the feed have it (``models/events.event_body``)."""

    model_config = ConfigDict(extra="ignore")

    endpoint_id: str
    owner: str
    event: dict[str, Any]

    @property
    def event_id(self) -> str:
        return str(self.event.get("event_id", ""))

    @property
    def event_type(self) -> str:
        return str(self.event.get("type", ""))
