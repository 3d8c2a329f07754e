"""Notification endpoints: ``POST/GET /v1/notification-endpoints``,
``DELETE /v1/notification-endpoints/{endpoint_id}``, ``POST .../{endpoint_id}/rotate-secret``
(logic: ``logic/notifications.py``; the events they receive: ``docs/events.md``)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from scheduled_posts.api.docs import COMMON, responses
from scheduled_posts.api.params import JSON, Deps, EndpointId, Owner
from scheduled_posts.logic import notifications as notification_logic
from scheduled_posts.models.channel_api import SecretRotation
from scheduled_posts.models.notifications import (
    NotificationEndpointCreate,
    NotificationEndpointCreated,
    NotificationEndpointList,
    NotificationEndpointOut,
)

router = APIGatewayHttpRouter()


@router.post(
    "/v1/notification-endpoints",
    summary="Register a URL that receives your outcome events, signed (docs/events.md)",
    responses=responses(
        NotificationEndpointCreated,
        201,
        "Created: the signing secret is shown only here",
        errors=(*COMMON, 429),
        overrides={429: "MAX_NOTIFICATION_ENDPOINTS_PER_USER reached"},
    ),
)
def create_notification_endpoint(
    body: NotificationEndpointCreate, owner: Owner, deps: Deps
) -> Response[NotificationEndpointCreated]:
    endpoint = notification_logic.create_endpoint(
        body,
        owner=owner,
        endpoints=deps.notification_endpoints,
        settings=deps.settings,
        clock=deps.clock,
        resolver=deps.resolver,
    )
    return Response(
        status_code=201, content_type=JSON, body=NotificationEndpointCreated.of_new(endpoint)
    )


@router.get(
    "/v1/notification-endpoints",
    summary="List your notification endpoints (never their secrets)",
    responses=responses(NotificationEndpointList),
)
def list_notification_endpoints(owner: Owner, deps: Deps) -> NotificationEndpointList:
    found = notification_logic.list_endpoints(owner, endpoints=deps.notification_endpoints)
    return NotificationEndpointList(items=[NotificationEndpointOut.of(e) for e in found])


@router.delete(
    "/v1/notification-endpoints/<endpoint_id>",
    summary="Delete a notification endpoint (queued notifications to it are dropped)",
    responses=responses(None, 204, "Deleted"),
)
def delete_notification_endpoint(
    endpoint_id: EndpointId, owner: Owner, deps: Deps
) -> Response[None]:
    notification_logic.delete_endpoint(owner, endpoint_id, endpoints=deps.notification_endpoints)
    return Response(status_code=204)


@router.post(
    "/v1/notification-endpoints/<endpoint_id>/rotate-secret",
    summary="Rotate the signing secret (the old one stays valid for SECRET_OVERLAP_SECONDS)",
    responses=responses(
        NotificationEndpointCreated,
        200,
        "Rotated: the new secret is shown only here",
        errors=(*COMMON, 409),
        overrides={409: "A concurrent rotation won, or too many secrets are still valid"},
    ),
)
def rotate_notification_endpoint_secret(
    endpoint_id: EndpointId, owner: Owner, deps: Deps, body: SecretRotation | None = None
) -> Response[NotificationEndpointCreated]:
    endpoint = notification_logic.rotate_endpoint_secret(
        owner,
        endpoint_id,
        endpoints=deps.notification_endpoints,
        settings=deps.settings,
        clock=deps.clock,
        revoke_previous=body.revoke_previous if body is not None else False,
    )
    return Response(
        status_code=200, content_type=JSON, body=NotificationEndpointCreated.of_new(endpoint)
    )
