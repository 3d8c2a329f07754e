"""The content calendar's hosting: a private S3 bucket served only through CloudFront over HTTPS.

* The bucket blocks all public access, enforces TLS, encrypts with S3-managed keys and is read
  only by the distribution, through origin access control (OAC: CloudFront Developer Guide,
  "Restricting access to an Amazon S3 origin"); CDK writes the bucket policy that allows
  ``s3:GetObject`` to ``cloudfront.amazonaws.com`` with ``AWS:SourceArn`` = this distribution.
* The distribution answers HTTPS only (``HTTPS_ONLY``: plain HTTP is refused, not redirected) and
  adds the security headers of ``infra/security_headers.py`` (CSP, HSTS, nosniff, no referrer,
  no framing) through a response headers policy.
* :meth:`SiteConstruct.publish` uploads ``web/`` and a ``config.json`` naming the API and the
  sign-in (OIDC authority, client id, logout URL) with a ``BucketDeployment``, then invalidates
  the distribution's cache.

The site's origin (``https://<id>.cloudfront.net``) is known before the API is built, so the API
can limit CORS to it and the Cognito app client can use it as callback URL; the API is built
afterwards and its URL reaches the page through ``config.json``, never through the CSP (that
would be a dependency cycle), which therefore allows the region's API Gateway and Cognito hosts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aws_cdk import Aws, Duration, RemovalPolicy
from aws_cdk import aws_cloudfront as cloudfront
from aws_cdk import aws_cloudfront_origins as origins
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_deployment as s3deploy
from constructs import Construct

from infra.config import StageConfig
from infra.function import retained_log_group
from infra.security_headers import HSTS_MAX_AGE_SECONDS, content_security_policy


def deployed_connect_sources(jwt_issuer: str | None) -> tuple[str, ...]:
    """``connect-src`` hosts of the deployed page: the region's HTTP APIs, S3's virtual-hosted
    bucket hosts (media uploads go to the pre-signed POST form's URL,
    ``https://<bucket>.s3.amazonaws.com/``) and Cognito (discovery at ``cognito-idp``, the token
    endpoint on the hosted UI's domain), or an external issuer's origin.

    S3 is a wildcard, not the media bucket's own host: the bucket's CORS names the
    distribution's origin and the distribution's headers policy would name the bucket, a
    CloudFormation cycle (decision "The page's media uploads")."""
    region = Aws.REGION
    sources = [f"https://*.execute-api.{region}.amazonaws.com", "https://*.s3.amazonaws.com"]
    if jwt_issuer is None:
        sources += [
            f"https://cognito-idp.{region}.amazonaws.com",
            f"https://*.auth.{region}.amazoncognito.com",
        ]
    else:
        scheme, _, rest = jwt_issuer.partition("://")
        sources.append(f"{scheme}://{rest.split('/', 1)[0]}")
    return tuple(sources)


class SiteConstruct(Construct):
    """Private bucket + CloudFront (OAC, HTTPS only, security headers) + access logs.

    Attributes
    ----------
    bucket : aws_s3.Bucket
        The site's files; private, TLS only.
    log_bucket : aws_s3.Bucket
        The bucket's server access logs and CloudFront's standard logs (ACLs enabled: CloudFront
        standard logging writes with an ACL, CloudFront Developer Guide, "Configure standard
        logging (legacy)").
    distribution : aws_cloudfront.Distribution
    origin : str
        ``https://<domain>``: the page's origin, for CORS and OAuth callback URLs.
    """

    def __init__(
        self, scope: Construct, construct_id: str, *, config: StageConfig, web_root: Path
    ) -> None:
        super().__init__(scope, construct_id)
        self._web_root = web_root
        self._config = config
        removal = RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY
        self.log_bucket = self._build_log_bucket(removal, config.log_retention_days)
        self.bucket = s3.Bucket(
            self,
            "Bucket",
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            server_access_logs_bucket=self.log_bucket,
            server_access_logs_prefix="s3/",
            removal_policy=removal,
        )
        self.headers = self._build_headers(config)
        self.distribution = cloudfront.Distribution(
            self,
            "Distribution",
            comment=f"{config.service_name} {config.stage} content calendar",
            default_root_object="index.html",
            default_behavior=cloudfront.BehaviorOptions(
                origin=origins.S3BucketOrigin.with_origin_access_control(self.bucket),
                viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
                allowed_methods=cloudfront.AllowedMethods.ALLOW_GET_HEAD,
                cache_policy=cloudfront.CachePolicy.CACHING_OPTIMIZED,
                response_headers_policy=self.headers,
                compress=True,
            ),
            http_version=cloudfront.HttpVersion.HTTP2_AND_3,
            price_class=cloudfront.PriceClass.PRICE_CLASS_100,
            enable_logging=True,
            log_bucket=self.log_bucket,
            log_file_prefix="cloudfront/",
        )
        self.origin = f"https://{self.distribution.distribution_domain_name}"

    def _build_log_bucket(self, removal: RemovalPolicy, retention_days: int) -> s3.Bucket:
        return s3.Bucket(
            self,
            "AccessLogs",
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.OBJECT_WRITER,
            lifecycle_rules=[s3.LifecycleRule(expiration=Duration.days(retention_days))],
            removal_policy=removal,
        )

    def _build_headers(self, config: StageConfig) -> cloudfront.ResponseHeadersPolicy:
        return cloudfront.ResponseHeadersPolicy(
            self,
            "SecurityHeaders",
            comment="Content calendar: CSP, HSTS, nosniff, no referrer, no framing",
            security_headers_behavior=cloudfront.ResponseSecurityHeadersBehavior(
                content_security_policy=cloudfront.ResponseHeadersContentSecurityPolicy(
                    content_security_policy=content_security_policy(
                        *deployed_connect_sources(config.jwt_issuer)
                    ),
                    override=True,
                ),
                content_type_options=cloudfront.ResponseHeadersContentTypeOptions(override=True),
                frame_options=cloudfront.ResponseHeadersFrameOptions(
                    frame_option=cloudfront.HeadersFrameOption.DENY, override=True
                ),
                referrer_policy=cloudfront.ResponseHeadersReferrerPolicy(
                    referrer_policy=cloudfront.HeadersReferrerPolicy.NO_REFERRER, override=True
                ),
                strict_transport_security=cloudfront.ResponseHeadersStrictTransportSecurity(
                    access_control_max_age=Duration.seconds(HSTS_MAX_AGE_SECONDS),
                    include_subdomains=True,
                    override=True,
                ),
            ),
        )

    def publish(self, *, runtime_config: dict[str, Any]) -> s3deploy.BucketDeployment:
        """Upload ``web/`` plus ``config.json`` (``runtime_config``; deploy-time values such as
        the API URL are resolved by CloudFormation) and invalidate the distribution."""
        return s3deploy.BucketDeployment(
            self,
            "Content",
            sources=[
                # The page's Node tests stay out of the bucket.
                s3deploy.Source.asset(str(self._web_root), exclude=["tests"]),
                s3deploy.Source.json_data("config.json", runtime_config),
            ],
            destination_bucket=self.bucket,
            distribution=self.distribution,
            distribution_paths=["/*"],
            prune=True,
            memory_limit=256,
            log_group=retained_log_group(self, "ContentLogs", config=self._config),
        )
