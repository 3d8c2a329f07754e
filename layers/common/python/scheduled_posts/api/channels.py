"""Channels: ``POST/GET /v1/channels``, ``GET/PATCH/DELETE /v1/channels/{channel_id}``,
``POST /v1/channels/{channel_id}/rotate-secret`` (logic: ``logic/channels.py``,
``logic/rotation.py``)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from scheduled_posts.api.docs import COMMON, responses
from scheduled_posts.api.params import JSON, ChannelId, Cursor, Deps, Owner, PageSize
from scheduled_posts.logic import channels as channel_logic
from scheduled_posts.logic import rotation
from scheduled_posts.models.channel_api import (
    ChannelCreate,
    ChannelCreated,
    ChannelList,
    ChannelOut,
    ChannelPatch,
    SecretRotation,
)

router = APIGatewayHttpRouter()


@router.post(
    "/v1/channels",
    summary="Create a channel (webhook, mastodon, bluesky); credentials are checked, never shown",
    responses=responses(
        ChannelCreated,
        201,
        "Created (a webhook's signing secret is shown only here)",
        errors=(*COMMON, 429, 502),
        overrides={
            422: "Validation failed, or the network refused the credentials",
            429: "MAX_CHANNELS_PER_USER reached",
        },
    ),
)
def create_channel(body: ChannelCreate, owner: Owner, deps: Deps) -> Response[ChannelCreated]:
    channel = channel_logic.create_channel(
        body,
        owner=owner,
        channels=deps.channels,
        settings=deps.settings,
        clock=deps.clock,
        resolver=deps.resolver,
        checker=deps.credential_checker,
        channel_secrets=deps.channel_secrets,
    )
    return Response(status_code=201, content_type=JSON, body=ChannelCreated.of_new(channel))


@router.get(
    "/v1/channels", summary="List your channels by channel_id", responses=responses(ChannelList)
)
def list_channels(
    owner: Owner, deps: Deps, limit: PageSize = 20, cursor: Cursor = None
) -> ChannelList:
    found, next_cursor = channel_logic.list_channel_page(
        owner, limit=limit, cursor=cursor, codec=deps.cursor_codec(), channels=deps.channels
    )
    return ChannelList(items=[ChannelOut.of(c) for c in found], next_cursor=next_cursor)


@router.get(
    "/v1/channels/<channel_id>",
    summary="Get a channel",
    responses=responses(ChannelOut),
)
def get_channel(channel_id: ChannelId, owner: Owner, deps: Deps) -> ChannelOut:
    return ChannelOut.of(channel_logic.get_channel(owner, channel_id, channels=deps.channels))


@router.patch(
    "/v1/channels/<channel_id>",
    summary="Change a channel's name, rate limit, webhook URL or credentials (checked again)",
    responses=responses(
        ChannelOut,
        errors=(*COMMON, 502),
        overrides={422: "Validation failed, or the network refused the credentials"},
    ),
)
def update_channel(
    channel_id: ChannelId, body: ChannelPatch, owner: Owner, deps: Deps
) -> ChannelOut:
    channel = channel_logic.update_channel(
        owner,
        channel_id,
        body,
        channels=deps.channels,
        settings=deps.settings,
        resolver=deps.resolver,
        checker=deps.credential_checker,
        channel_secrets=deps.channel_secrets,
    )
    return ChannelOut.of(channel)


@router.delete(
    "/v1/channels/<channel_id>",
    summary="Delete a channel (its pending deliveries become skipped)",
    responses=responses(None, 204, "Deleted"),
)
def delete_channel(channel_id: ChannelId, owner: Owner, deps: Deps) -> Response[None]:
    channel_logic.delete_channel(owner, channel_id, channels=deps.channels)
    return Response(status_code=204)


@router.post(
    "/v1/channels/<channel_id>/rotate-secret",
    summary="Rotate the signing secret (the old one stays valid for SECRET_OVERLAP_SECONDS)",
    responses=responses(
        ChannelCreated,
        200,
        "Rotated: the new secret is shown only here",
        errors=(*COMMON, 409),
        overrides={
            409: "A concurrent rotation won, too many secrets are still valid, or the channel "
            "is a network channel (mastodon, bluesky: no signing secret)"
        },
    ),
)
def rotate_channel_secret(
    channel_id: ChannelId, owner: Owner, deps: Deps, body: SecretRotation | None = None
) -> Response[ChannelCreated]:
    channel = rotation.rotate_signing_secret(
        owner,
        channel_id,
        channels=deps.channels,
        settings=deps.settings,
        clock=deps.clock,
        revoke_previous=body.revoke_previous if body is not None else False,
    )
    return Response(status_code=200, content_type=JSON, body=ChannelCreated.of_new(channel))
