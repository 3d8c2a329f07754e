"""The caller's account: ``GET /v1/me/export``, ``DELETE /v1/me`` (erasure) and
``GET /v1/me/erasure`` (logic: ``logic/account.py``)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from scheduled_posts.api.docs import responses
from scheduled_posts.api.params import JSON, Deps, Owner
from scheduled_posts.logic import account
from scheduled_posts.models.api import ErasureStatus
from scheduled_posts.models.recurring import AccountExport

router = APIGatewayHttpRouter()


@router.get(
    "/v1/me/export",
    summary="Everything the service holds about you, as one JSON document",
    responses=responses(AccountExport),
)
def export_account(owner: Owner, deps: Deps) -> AccountExport:
    document = account.export_account(
        owner, store=deps.account, deps=deps.post_deps, series_deps=deps.series_deps
    )
    return AccountExport.model_validate(document)


@router.delete(
    "/v1/me",
    summary="Erase your account: end series, cancel posts, then delete every item of yours",
    responses=responses(
        ErasureStatus, 202, "Accepted: GET /v1/me/erasure tells when it is complete"
    ),
)
def erase_account(owner: Owner, deps: Deps) -> Response[ErasureStatus]:
    status = account.erase_account(
        owner, store=deps.account, deps=deps.post_deps, series_deps=deps.series_deps
    )
    return Response(status_code=202, content_type=JSON, body=ErasureStatus(status=status))


@router.get(
    "/v1/me/erasure",
    summary="Whether your erasure is complete",
    responses=responses(ErasureStatus),
)
def erasure_status(owner: Owner, deps: Deps) -> ErasureStatus:
    status = account.erasure_status(owner, store=deps.account)
    return ErasureStatus.model_validate({"status": status})
