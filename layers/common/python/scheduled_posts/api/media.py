"""Media uploads: ``POST/GET /v1/media``, ``GET/PATCH/DELETE /v1/media/{media_id}`` and
``POST /v1/media/{media_id}/complete`` (logic: ``logic/media.py``; the probe:
``logic/media_probe.py``)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Depends, Response
from aws_lambda_powertools.event_handler.openapi.params import Path
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from scheduled_posts.api.docs import COMMON, responses
from scheduled_posts.api.params import JSON, Cursor, Deps, Owner, PageSize
from scheduled_posts.api_app import ApiDependencies, get_dependencies
from scheduled_posts.logic import media as media_logic
from scheduled_posts.logic.media import MediaDeps
from scheduled_posts.models.api import ID_PATTERN
from scheduled_posts.models.media import (
    MediaCreate,
    MediaCreated,
    MediaList,
    MediaOut,
    MediaPatch,
)

router = APIGatewayHttpRouter()

MediaId = Annotated[str, Path(pattern=ID_PATTERN, description="A media id")]


def media_deps(deps: Annotated[ApiDependencies, Depends(get_dependencies)]) -> MediaDeps:
    """The media logic's collaborators."""
    return deps.media_deps


MediaDepsArg = Annotated[MediaDeps, Depends(media_deps)]


@router.post(
    "/v1/media",
    summary="Start an upload: a pending media and a pre-signed S3 form for its bytes",
    responses=responses(
        MediaCreated,
        201,
        "Created: post the file to upload.url with upload.fields, then complete",
        errors=(*COMMON, 409),
        overrides={409: "MAX_PENDING_MEDIA_PER_USER uploads are waiting for their bytes"},
    ),
)
def create_media(body: MediaCreate, owner: Owner, deps: MediaDepsArg) -> Response[MediaCreated]:
    media, upload = media_logic.create_media(body, owner=owner, deps=deps)
    created = MediaCreated(**MediaOut.of(media).model_dump(), upload=upload)
    return Response(status_code=201, content_type=JSON, body=created)


@router.post(
    "/v1/media/<media_id>/complete",
    summary="Probe the uploaded bytes: ready, or rejected with a reason (repeatable)",
    responses=responses(
        MediaOut,
        errors=(*COMMON, 409),
        overrides={409: "Nothing was uploaded for this media yet"},
    ),
)
def complete_media(media_id: MediaId, owner: Owner, deps: MediaDepsArg) -> MediaOut:
    return MediaOut.of(media_logic.complete_media(owner, media_id, deps=deps))


@router.get("/v1/media", summary="List your uploads, newest first", responses=responses(MediaList))
def list_media(owner: Owner, deps: Deps, limit: PageSize = 20, cursor: Cursor = None) -> MediaList:
    found, next_cursor = media_logic.list_media(
        owner, limit=limit, cursor=cursor, codec=deps.cursor_codec(), deps=deps.media_deps
    )
    return MediaList(items=[MediaOut.of(m) for m in found], next_cursor=next_cursor)


@router.get("/v1/media/<media_id>", summary="Get an upload", responses=responses(MediaOut))
def get_media(media_id: MediaId, owner: Owner, deps: MediaDepsArg) -> MediaOut:
    return MediaOut.of(media_logic.get_media(owner, media_id, deps=deps))


@router.patch(
    "/v1/media/<media_id>",
    summary="Set or clear (null) an upload's alt text",
    responses=responses(MediaOut, errors=(*COMMON, 409)),
)
def update_media(media_id: MediaId, body: MediaPatch, owner: Owner, deps: MediaDepsArg) -> MediaOut:
    return MediaOut.of(media_logic.update_alt_text(owner, media_id, body.alt_text, deps=deps))


@router.delete(
    "/v1/media/<media_id>",
    summary="Delete an upload and its bytes (not while a scheduled post uses it)",
    responses=responses(
        None,
        204,
        "Deleted",
        errors=(*COMMON, 409),
        overrides={409: "A scheduled or publishing post lists it in media_ids"},
    ),
)
def delete_media(media_id: MediaId, owner: Owner, deps: MediaDepsArg) -> Response[None]:
    media_logic.delete_media(owner, media_id, deps=deps)
    return Response(status_code=204)
