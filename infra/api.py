"""The HTTP API: one Lambda (payload v2), a JWT authorizer on every route, throttling, access logs.

Tokens come from a Cognito user pool and app client created here, or from an external issuer
and audience given in the stage config. API Gateway itself answers 401 (missing or invalid
token) and 429 (stage throttling) with ``{"message": "..."}``; every other error comes from the
API Lambda as problem+json.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import jsii
from aws_cdk import Acknowledgment, Aws, Duration, RemovalPolicy, Stack, Validations
from aws_cdk import aws_apigateway as apigw_v1
from aws_cdk import aws_apigatewayv2 as apigw
from aws_cdk import aws_apigatewayv2_authorizers as authorizers
from aws_cdk import aws_apigatewayv2_integrations as integrations
from aws_cdk import aws_cognito as cognito
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.config import StageConfig
from infra.dispatch import dispatch_queue_environment
from infra.function import ServiceFunctionConstruct, retained_log_group
from scheduled_posts.api.routes import ROUTES

#: Access-log fields ($context variables of HTTP APIs, API Gateway Developer Guide,
#: "Customizing HTTP API access logs").
_ACCESS_LOG_FORMAT = {
    "requestId": "$context.requestId",
    "requestTime": "$context.requestTime",
    "httpMethod": "$context.httpMethod",
    "routeKey": "$context.routeKey",
    "status": "$context.status",
    "responseLength": "$context.responseLength",
    "responseLatency": "$context.responseLatency",
    "integrationLatency": "$context.integrationLatency",
    "integrationError": "$context.integrationErrorMessage",
    "authorizerError": "$context.authorizer.error",
    "sub": "$context.authorizer.claims.sub",
    "sourceIp": "$context.identity.sourceIp",
}


class ApiConstruct(Construct):
    """HTTP API + API Lambda + JWT authorizer (+ Cognito) + cursor secret.

    Attributes
    ----------
    http_api : aws_apigatewayv2.HttpApi
    stage : aws_apigatewayv2.HttpStage
        ``$default``, auto-deployed, throttled, access-logged.
    function : aws_lambda.Function
    user_pool, user_pool_client : Cognito resources, or None with an external issuer.
    user_pool_domain : The Cognito hosted UI's domain when there is a user pool and a site.
    cursor_secret : aws_secretsmanager.Secret
        HMAC key for pagination cursors, read by the API through Powertools parameters.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StageConfig,
        posts: dynamodb.ITable,
        due_index: dynamodb.ITable,
        idempotency: dynamodb.ITable,
        credentials_key: kms.IKey,
        dispatch_queues: Sequence[sqs.IQueue],
        layer: lambda_.ILayerVersion,
        runtime: lambda_.Runtime,
        functions_root: Path,
        site_origin: str | None = None,
    ) -> None:
        """``site_origin`` (``https://<host>``): the content calendar's origin; when given, CORS
        allows it alone, and the Cognito app client gets the authorization-code flow with PKCE
        and the site as its callback and sign-out URL, on a hosted UI domain."""
        super().__init__(scope, construct_id)
        self._config = config
        self._site_origin = site_origin
        removal = RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY
        self.cursor_secret = secretsmanager.Secret(
            self,
            "CursorSecret",
            description="HMAC key of the API's pagination cursors",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                password_length=64, exclude_punctuation=True
            ),
            removal_policy=removal,
        )
        self.function = ServiceFunctionConstruct(
            self,
            "Handler",
            name="api",
            functions_root=functions_root,
            layer=layer,
            runtime=runtime,
            config=config,
            timeout_seconds=config.api_timeout_seconds,
            environment={
                "POSTS_TABLE_NAME": posts.table_name,
                "DUE_INDEX_TABLE_NAME": due_index.table_name,
                "IDEMPOTENCY_TABLE_NAME": idempotency.table_name,
                "CURSOR_SECRET_ARN": self.cursor_secret.secret_arn,
                "CREDENTIALS_KEY_ID": credentials_key.key_arn,
                **dispatch_queue_environment(dispatch_queues),
            },
            description="Scheduling API (HTTP API payload v2)",
        ).function
        for table in (posts, due_index, idempotency):
            table.grant_read_write_data(self.function)
        for queue in dispatch_queues:
            queue.grant_send_messages(self.function)
        self.cursor_secret.grant_read(self.function)
        # Seals credentials on create/edit and opens them for the check of a Bluesky session.
        credentials_key.grant(self.function, "kms:Decrypt", "kms:GenerateDataKey")

        self.user_pool: cognito.UserPool | None = None
        self.user_pool_client: cognito.UserPoolClient | None = None
        self.user_pool_domain: cognito.UserPoolDomain | None = None
        authorizer = self._build_authorizer(removal)
        self.http_api = apigw.HttpApi(
            self,
            "HttpApi",
            description="scheduled-posts API",
            create_default_stage=False,
            default_authorizer=authorizer,
            cors_preflight=self._cors(),
        )
        self.stage = self._build_stage()
        self._build_routes()

    def _build_authorizer(self, removal: RemovalPolicy) -> authorizers.HttpJwtAuthorizer:
        if self._config.jwt_issuer is not None:
            issuer, audience = self._config.jwt_issuer, list(self._config.jwt_audience)
        else:
            self.user_pool = cognito.UserPool(
                self,
                "UserPool",
                self_sign_up_enabled=False,
                sign_in_aliases=cognito.SignInAliases(username=True, email=True),
                password_policy=cognito.PasswordPolicy(
                    min_length=12,
                    require_lowercase=True,
                    require_uppercase=True,
                    require_digits=True,
                    require_symbols=True,
                ),
                mfa=cognito.Mfa.OPTIONAL,
                mfa_second_factor=cognito.MfaSecondFactor(otp=True, sms=False),
                account_recovery=cognito.AccountRecovery.EMAIL_ONLY,
                deletion_protection=self._config.retain_data,
                removal_policy=removal,
            )
            self.user_pool_client = self.user_pool.add_client(
                "AppClient",
                auth_flows=cognito.AuthFlow(user_password=True, user_srp=True),
                generate_secret=False,
                prevent_user_existence_errors=True,
                id_token_validity=Duration.hours(1),
                access_token_validity=Duration.hours(1),
                o_auth=self._o_auth_settings(),
                supported_identity_providers=(
                    None
                    if self._site_origin is None
                    else [cognito.UserPoolClientIdentityProvider.COGNITO]
                ),
            )
            if self._site_origin is not None:
                # Prefixes are global across AWS accounts: the account id keeps ours unique.
                self.user_pool_domain = self.user_pool.add_domain(
                    "HostedUi",
                    cognito_domain=cognito.CognitoDomainOptions(
                        domain_prefix=f"{self._config.service_name}-{self._config.stage}-"
                        f"{Aws.ACCOUNT_ID}"
                    ),
                )
            region = Stack.of(self).region
            issuer = f"https://cognito-idp.{region}.amazonaws.com/{self.user_pool.user_pool_id}"
            audience = [self.user_pool_client.user_pool_client_id]
        return authorizers.HttpJwtAuthorizer(
            "JwtAuthorizer",
            issuer,
            jwt_audience=audience,
            identity_source=["$request.header.Authorization"],
        )

    def _o_auth_settings(self) -> cognito.OAuthSettings | None:
        """OAuth settings of the app client for the content calendar: the authorization-code
        flow only (no implicit flow; the page sends a PKCE ``code_challenge``, RFC 7636), the
        site as callback and sign-out URL. None without a site (CDK's defaults, as before)."""
        if self._site_origin is None:
            return None
        home = f"{self._site_origin}/"
        return cognito.OAuthSettings(
            flows=cognito.OAuthFlows(authorization_code_grant=True),
            scopes=[
                cognito.OAuthScope.OPENID,
                cognito.OAuthScope.EMAIL,
                cognito.OAuthScope.PROFILE,
            ],
            callback_urls=[home],
            logout_urls=[home],
        )

    def _cors(self) -> apigw.CorsPreflightOptions | None:
        """CORS for the content calendar's origin only (API Gateway answers the preflight
        before the authorizer: "Configuring CORS for an HTTP API")."""
        if self._site_origin is None:
            return None
        return apigw.CorsPreflightOptions(
            allow_origins=[self._site_origin],
            allow_methods=[
                apigw.CorsHttpMethod.GET,
                apigw.CorsHttpMethod.POST,
                apigw.CorsHttpMethod.PATCH,
                apigw.CorsHttpMethod.DELETE,
            ],
            allow_headers=["authorization", "content-type", "if-match", "idempotency-key"],
            expose_headers=["etag"],
            max_age=Duration.hours(1),
        )

    def _build_stage(self) -> apigw.HttpStage:
        log_group = retained_log_group(self, "AccessLogs", config=self._config)
        return apigw.HttpStage(
            self,
            "DefaultStage",
            http_api=self.http_api,
            stage_name="$default",
            auto_deploy=True,
            throttle=apigw.ThrottleSettings(
                rate_limit=self._config.api_throttle_rate_limit,
                burst_limit=self._config.api_throttle_burst_limit,
            ),
            access_log_settings=_AccessLogSettings(
                destination=apigw.LogGroupLogDestination(log_group),
                format=apigw_v1.AccessLogFormat.custom(json.dumps(_ACCESS_LOG_FORMAT)),
            ),
        )

    def _build_routes(self) -> None:
        integration = integrations.HttpLambdaIntegration(
            "ApiIntegration",
            self.function,
            payload_format_version=apigw.PayloadFormatVersion.VERSION_2_0,
        )
        # One CDK route per line of the route table (``scheduled_posts/api/routes.py``); a
        # public route (the health check, the OpenAPI document and its page) has no authorizer.
        for route in ROUTES:
            added = self.http_api.add_routes(
                path=route.path,
                methods=[apigw.HttpMethod(route.method)],
                integration=integration,
                authorizer=None if route.auth else apigw.HttpNoneAuthorizer(),
            )
            if not route.auth:
                for public in added:
                    Validations.of(public).acknowledge(
                        Acknowledgment(
                            id="AwsSolutions::AwsSolutions-APIG4",
                            reason=f"{route.key} answers without a token on purpose (load "
                            "balancers, the API's own contract and its page); it reads no "
                            "user data.",
                        )
                    )

    @property
    def url(self) -> str:
        """The API's base URL (``https://<id>.execute-api.<region>.amazonaws.com/``)."""
        return self.stage.url


@jsii.implements(apigw.IAccessLogSettings)
class _AccessLogSettings:
    """Plain implementation of ``IAccessLogSettings`` (the HTTP stage's access-log props)."""

    def __init__(
        self, *, destination: apigw.IAccessLogDestination, format: apigw_v1.AccessLogFormat
    ) -> None:
        self._destination = destination
        self._format = format

    @property
    def destination(self) -> apigw.IAccessLogDestination:
        return self._destination

    @property
    def format(self) -> apigw_v1.AccessLogFormat:
        return self._format
