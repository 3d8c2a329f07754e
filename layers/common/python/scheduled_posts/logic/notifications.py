"""Notification endpoints: create, list, delete, rotate the signing secret.

An endpoint receives the owner's outcome events of the types it names, each POSTed signed like
a webhook channel's delivery (``logic/notifier.py``). The URL passes the same outbound URL
policy as a webhook channel's (:func:`scheduled_posts.platforms.url_policy.check_destination`
with ``OUTBOUND_ALLOWED_ORIGINS`` and the webhook port lists), checked again at every send. The
signing secret (``whsec_`` + base64, :func:`logic.channels.new_signing_secret`) is
shown once, at create and at rotate, and never logged.
"""

from __future__ import annotations

import uuid
from functools import partial

from scheduled_posts.clock import Clock
from scheduled_posts.data.notification_endpoints import NotificationEndpointRepository
from scheduled_posts.errors import NotificationEndpointNotFoundError
from scheduled_posts.logic.channels import check_outbound_url, new_signing_secret
from scheduled_posts.logic.rotation import rotate_held_secret
from scheduled_posts.models.notifications import NotificationEndpoint, NotificationEndpointCreate
from scheduled_posts.observability import logger
from scheduled_posts.platforms.url_policy import Resolver
from scheduled_posts.settings import Settings


def create_endpoint(
    request: NotificationEndpointCreate,
    *,
    owner: str,
    endpoints: NotificationEndpointRepository,
    settings: Settings,
    clock: Clock,
    resolver: Resolver,
) -> NotificationEndpoint:
    """Create an endpoint of ``owner``; the result carries its new signing secret.

    Raises
    ------
    ValidationFailedError
        (422) The URL breaks the outbound URL policy.
    LimitExceededError
        (429) The owner has ``MAX_NOTIFICATION_ENDPOINTS_PER_USER`` endpoints.
    """
    check_outbound_url(
        request.url, settings=settings, resolver=resolver, subject="notification endpoint"
    )
    endpoint = NotificationEndpoint(
        endpoint_id=str(uuid.uuid4()),
        owner=owner,
        url=request.url,
        event_types=tuple(sorted(str(t) for t in request.event_types)),
        signing_secret=new_signing_secret(),
        created_at=clock.now(),
    )
    endpoints.put_new(endpoint, max_endpoints=settings.MAX_NOTIFICATION_ENDPOINTS_PER_USER)
    logger.info("notification endpoint created", endpoint_id=endpoint.endpoint_id)
    return endpoint


def list_endpoints(
    owner: str, *, endpoints: NotificationEndpointRepository
) -> list[NotificationEndpoint]:
    """Every endpoint of ``owner`` by endpoint id."""
    return endpoints.list(owner)


def delete_endpoint(
    owner: str, endpoint_id: str, *, endpoints: NotificationEndpointRepository
) -> None:
    """Delete the owner's endpoint; notifications already queued for it are dropped when sent.

    Raises
    ------
    NotificationEndpointNotFoundError
        Missing or another user's endpoint (404).
    """
    endpoints.delete(owner, endpoint_id)
    logger.info("notification endpoint deleted", endpoint_id=endpoint_id)


def rotate_endpoint_secret(
    owner: str,
    endpoint_id: str,
    *,
    endpoints: NotificationEndpointRepository,
    settings: Settings,
    clock: Clock,
    revoke_previous: bool = False,
) -> NotificationEndpoint:
    """Give the owner's endpoint a new signing secret (returned, shown only here), with the
    channels' overlap: the replaced secret signs too for ``SECRET_OVERLAP_SECONDS``
    (``X-Signature: t=..,v1=<new>,v1=<old>``), unless ``revoke_previous``
    (``logic/rotation.py``).

    Raises
    ------
    NotificationEndpointNotFoundError
        Missing or another user's endpoint (404).
    StateConflictError
        A concurrent rotation won, or too many secrets would be valid at once (409).
    """
    endpoint = endpoints.get(owner, endpoint_id)
    if endpoint is None:
        raise NotificationEndpointNotFoundError("endpoint not found")
    rotated = rotate_held_secret(
        endpoint,
        partial(endpoints.rotate_secret, owner, endpoint_id),
        settings=settings,
        clock=clock,
        revoke_previous=revoke_previous,
    )
    logger.info("notification endpoint secret rotated", endpoint_id=endpoint_id)
    return rotated
