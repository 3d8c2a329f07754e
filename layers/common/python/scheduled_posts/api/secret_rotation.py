"""What the two ``POST .../rotate-secret`` routes share (channels, notification endpoints): the
route's summary and responses, and the route body around the resource's rotation (logic:
``logic/rotation.py``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from aws_lambda_powertools.event_handler import Response

from scheduled_posts.api.docs import COMMON, responses
from scheduled_posts.api.params import JSON
from scheduled_posts.models.channel_api import SecretRotation
from scheduled_posts.settings import Settings

Held = TypeVar("Held")
Shown = TypeVar("Shown")

SUMMARY = "Rotate the signing secret (the old one stays valid for SECRET_OVERLAP_SECONDS)"


def rotation_responses(shown: type[Any], conflict: str) -> dict[int, Any]:
    """The OpenAPI responses of a rotate-secret route: 200 with ``shown`` (the new secret,
    shown only here), the common errors, and 409 described by ``conflict``."""
    return responses(
        shown,
        200,
        "Rotated: the new secret is shown only here",
        errors=(*COMMON, 409),
        overrides={409: conflict},
    )


def rotated(
    rotate: Callable[..., Held],
    shown: Callable[[Held], Shown],
    *,
    settings: Settings,
    clock: Any,
    body: SecretRotation | None,
) -> Response[Shown]:
    """Call ``rotate(settings=, clock=, revoke_previous=)`` (the resource's rotation, owner and
    id bound; ``revoke_previous`` from ``body``, false without one) and answer 200 with
    ``shown(rotated item)``. Raises what ``rotate`` raises (mapped by ``problems.py``)."""
    item = rotate(
        settings=settings,
        clock=clock,
        revoke_previous=body.revoke_previous if body is not None else False,
    )
    return Response(status_code=200, content_type=JSON, body=shown(item))
