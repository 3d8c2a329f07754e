"""HTTP API: routes, the JWT authorizer on every route, throttling, access logs, Cognito."""

from __future__ import annotations

import json

from aws_cdk.assertions import Match

from scheduled_posts.api.routes import ROUTES
from tests.infrastructure.conftest import Synthesized

#: The routes that answer without a token (no authorizer).
PUBLIC_ROUTE_KEYS = {
    "GET /openapi.json",
    "GET /v1/health",
    "GET /docs",
    "GET /v1/calendar-feeds/{token}",  # the URL's secret token is the credential
}
EXPECTED_ROUTE_KEYS = {
    "GET /openapi.json",
    "GET /v1/health",
    "GET /docs",
    "GET /v1/channels",
    "POST /v1/channels",
    "GET /v1/channels/{channel_id}",
    "PATCH /v1/channels/{channel_id}",
    "DELETE /v1/channels/{channel_id}",
    "POST /v1/channels/{channel_id}/rotate-secret",
    "GET /v1/scheduled-posts/export.csv",
    "POST /v1/me/calendar-feed",
    "DELETE /v1/me/calendar-feed",
    "GET /v1/calendar-feeds/{token}",
    "POST /v1/imports",
    "POST /v1/imports/uploads",
    "GET /v1/imports/{import_id}",
    "GET /v1/channels/{channel_id}/posting-schedule",
    "PUT /v1/channels/{channel_id}/posting-schedule",
    "DELETE /v1/channels/{channel_id}/posting-schedule",
    "GET /v1/channels/{channel_id}/queue",
    "GET /v1/scheduled-posts",
    "POST /v1/scheduled-posts",
    "GET /v1/scheduled-posts/{schedule_id}",
    "PATCH /v1/scheduled-posts/{schedule_id}",
    "DELETE /v1/scheduled-posts/{schedule_id}",
    "GET /v1/scheduled-posts/{schedule_id}/attempts",
    "GET /v1/scheduled-posts/{schedule_id}/events",
    "GET /v1/events",
    "POST /v1/scheduled-posts/{schedule_id}/retry",
    "POST /v1/scheduled-posts/{schedule_id}/verify",
    "DELETE /v1/me",
    "GET /v1/me/export",
    "GET /v1/me/erasure",
    "GET /v1/recurring-schedules",
    "POST /v1/recurring-schedules",
    "POST /v1/recurring-schedules/preview",
    "GET /v1/recurring-schedules/{series_id}",
    "PATCH /v1/recurring-schedules/{series_id}",
    "DELETE /v1/recurring-schedules/{series_id}",
    "GET /v1/recurring-schedules/{series_id}/occurrences",
    "POST /v1/recurring-schedules/{series_id}/pause",
    "POST /v1/recurring-schedules/{series_id}/resume",
    "GET /v1/notification-endpoints",
    "POST /v1/notification-endpoints",
    "DELETE /v1/notification-endpoints/{endpoint_id}",
    "POST /v1/notification-endpoints/{endpoint_id}/rotate-secret",
    "GET /v1/media",
    "POST /v1/media",
    "GET /v1/media/{media_id}",
    "PATCH /v1/media/{media_id}",
    "DELETE /v1/media/{media_id}",
    "POST /v1/media/{media_id}/complete",
}


def test_api_routes_are_the_service_surface(dev: Synthesized) -> None:
    routes = dev.of_type("AWS::ApiGatewayV2::Route").values()
    assert {r["Properties"]["RouteKey"] for r in routes} == EXPECTED_ROUTE_KEYS
    assert {route.key for route in ROUTES} == EXPECTED_ROUTE_KEYS


def test_api_every_route_but_the_public_ones_has_the_jwt_authorizer(dev: Synthesized) -> None:
    (authorizer_id,) = dev.of_type("AWS::ApiGatewayV2::Authorizer")
    routes = dev.of_type("AWS::ApiGatewayV2::Route").values()
    for route in routes:
        props = route["Properties"]
        if props["RouteKey"] in PUBLIC_ROUTE_KEYS:
            assert props["AuthorizationType"] == "NONE", props["RouteKey"]
            assert "AuthorizerId" not in props, props["RouteKey"]
            continue
        assert props["AuthorizationType"] == "JWT", props["RouteKey"]
        assert props["AuthorizerId"] == {"Ref": authorizer_id}, props["RouteKey"]


def test_api_public_routes_are_the_route_tables_public_routes() -> None:
    assert {route.key for route in ROUTES if not route.auth} == PUBLIC_ROUTE_KEYS


def test_api_authorizer_trusts_the_stack_user_pool_client(dev: Synthesized) -> None:
    (authorizer,) = dev.of_type("AWS::ApiGatewayV2::Authorizer").values()
    props = authorizer["Properties"]
    assert props["AuthorizerType"] == "JWT"
    assert props["IdentitySource"] == ["$request.header.Authorization"]
    jwt = props["JwtConfiguration"]
    assert jwt["Audience"] == [{"Ref": dev.logical_id(dev.stack.api.user_pool_client)}]
    issuer = json.dumps(jwt["Issuer"])
    assert "https://cognito-idp." in issuer
    assert json.dumps({"Ref": dev.logical_id(dev.stack.api.user_pool)}) in issuer


def test_api_integration_is_lambda_proxy_payload_v2(dev: Synthesized) -> None:
    integrations = dev.of_type("AWS::ApiGatewayV2::Integration").values()
    assert integrations
    for integration in integrations:
        props = integration["Properties"]
        assert props["IntegrationType"] == "AWS_PROXY"
        assert props["PayloadFormatVersion"] == "2.0"


def test_api_stage_throttled_and_access_logged(dev: Synthesized) -> None:
    (stage,) = dev.of_type("AWS::ApiGatewayV2::Stage").values()
    props = stage["Properties"]
    assert props["DefaultRouteSettings"] == {
        "ThrottlingBurstLimit": dev.config.api_throttle_burst_limit,
        "ThrottlingRateLimit": dev.config.api_throttle_rate_limit,
    }
    log_group = dev.resources[props["AccessLogSettings"]["DestinationArn"]["Fn::GetAtt"][0]]
    assert log_group["Type"] == "AWS::Logs::LogGroup"
    assert "$context.requestId" in props["AccessLogSettings"]["Format"]


def test_user_pool_admin_only_with_password_auth_client(dev: Synthesized) -> None:
    dev.template.has_resource_properties(
        "AWS::Cognito::UserPool",
        {"AdminCreateUserConfig": {"AllowAdminCreateUserOnly": True}},
    )
    dev.template.has_resource_properties(
        "AWS::Cognito::UserPoolClient",
        {
            "ExplicitAuthFlows": Match.array_with(["ALLOW_USER_PASSWORD_AUTH"]),
            "GenerateSecret": False,
        },
    )


def test_outputs_give_url_pool_client_and_dashboard(dev: Synthesized) -> None:
    outputs = dev.template.to_json()["Outputs"]
    assert {"ApiUrl", "UserPoolId", "UserPoolClientId", "DashboardName"} <= set(outputs)


def test_api_external_issuer_replaces_the_user_pool(external: Synthesized) -> None:
    assert not external.of_type("AWS::Cognito::UserPool")
    (authorizer,) = external.of_type("AWS::ApiGatewayV2::Authorizer").values()
    assert authorizer["Properties"]["JwtConfiguration"] == {
        "Issuer": "https://issuer.example.com/",
        "Audience": ["scheduled-posts-api"],
    }
    assert "UserPoolId" not in external.template.to_json()["Outputs"]
