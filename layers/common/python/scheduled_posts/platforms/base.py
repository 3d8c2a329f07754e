"""The platform-adapter interface every destination implements (``webhook`` first).

The worker calls :meth:`PlatformAdapter.deliver` inside Powertools idempotency keyed on
``(schedule_id, channel_id)``: the adapter returns only final outcomes (a 2xx, or a permanent
failure) and raises :class:`scheduled_posts.errors.RetryableDeliveryError` on anything worth
retrying, so a 503 is never stored and replayed as a result.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

from scheduled_posts.models.post import Channel


class DeliveryRequest(BaseModel):
    """What to deliver. ``idempotency_key`` is ``<schedule_id>:<channel_id>`` on every retry."""

    model_config = ConfigDict(frozen=True)

    schedule_id: str
    channel_id: str
    content: str
    media_ids: tuple[str, ...] = ()
    publish_at: datetime
    attempt: int
    idempotency_key: str
    #: When the first attempt of this delivery started (None on the first attempt): the
    #: network adapters use it to look for a post whose answer was lost.
    first_attempt_at: datetime | None = None
    #: BCP 47 language of the text, when the post gives one (Bluesky ``langs``).
    language: str | None = None


class DeliveryResult(BaseModel):
    """A final outcome: ``published`` (2xx) or ``failed`` (permanent, e.g. a 4xx other than 429).

    ``remote_id`` is the destination's id for the post when it returned one (webhook: the
    ``"id"`` of a JSON response body; Mastodon: the status id; Bluesky: the record's
    ``at://`` URI) and ``remote_url`` its public page. ``reason`` is a machine-readable cause of
    a failure (``reauthorization_required`` when the network refused the credentials: the
    channel needs new ones, retrying cannot help).
    """

    outcome: Literal["published", "failed"]
    http_status: int | None = None
    remote_id: str | None = None
    remote_url: str | None = None
    error: str | None = None
    reason: Literal["reauthorization_required", "too_long", "refused"] | None = None


class PlatformAdapter(Protocol):
    """One destination platform."""

    platform: str

    def deliver(
        self, channel: Channel, request: DeliveryRequest, *, now: datetime
    ) -> DeliveryResult:
        """Send ``request`` to ``channel`` at ``now`` (the worker's clock).

        Raises
        ------
        scheduled_posts.errors.RetryableDeliveryError
            On 5xx, 429 (with ``retry_after_seconds`` from ``Retry-After``), timeouts and
            connection errors.
        """
        ...
