"""The content calendar's hosting (infra/site.py): private bucket, CloudFront only, HTTPS, CSP."""

from __future__ import annotations

import json
from typing import Any

from aws_cdk.assertions import Match

from infra.security_headers import CSP_DIRECTIVES
from tests.infrastructure.conftest import Synthesized


def _one(stage: Synthesized, resource_type: str) -> tuple[str, dict[str, Any]]:
    found = stage.of_type(resource_type)
    assert len(found) == 1, found.keys()
    return next(iter(found.items()))


def _site_bucket_id(stage: Synthesized) -> str:
    return stage.logical_id(stage.stack.site.bucket)


def _distribution_id(stage: Synthesized) -> str:
    return stage.logical_id(stage.stack.site.distribution)


def test_site_bucket_blocks_all_public_access_and_refuses_plain_http(dev: Synthesized) -> None:
    bucket = dev.resources[_site_bucket_id(dev)]["Properties"]
    assert bucket["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }
    assert "WebsiteConfiguration" not in bucket
    policies = [
        p["Properties"]["PolicyDocument"]["Statement"]
        for p in dev.of_type("AWS::S3::BucketPolicy").values()
        if p["Properties"]["Bucket"] == {"Ref": _site_bucket_id(dev)}
    ]
    assert len(policies) == 1
    deny_http = [s for s in policies[0] if s["Effect"] == "Deny"]
    assert deny_http[0]["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_site_bucket_is_read_only_by_this_distribution_through_oac(dev: Synthesized) -> None:
    statements = next(
        p["Properties"]["PolicyDocument"]["Statement"]
        for p in dev.of_type("AWS::S3::BucketPolicy").values()
        if p["Properties"]["Bucket"] == {"Ref": _site_bucket_id(dev)}
    )
    allows = [s for s in statements if s["Effect"] == "Allow"]
    assert [s["Principal"] for s in allows] == [{"Service": "cloudfront.amazonaws.com"}]
    assert allows[0]["Action"] == "s3:GetObject"
    source = json.dumps(allows[0]["Condition"]["StringEquals"]["AWS:SourceArn"])
    assert _distribution_id(dev) in source
    _, oac = _one(dev, "AWS::CloudFront::OriginAccessControl")
    config = oac["Properties"]["OriginAccessControlConfig"]
    assert (config["OriginAccessControlOriginType"], config["SigningBehavior"]) == ("s3", "always")
    assert not dev.of_type("AWS::CloudFront::CloudFrontOriginAccessIdentity")


def test_site_distribution_serves_https_only_with_the_security_headers(dev: Synthesized) -> None:
    distribution = dev.resources[_distribution_id(dev)]["Properties"]["DistributionConfig"]
    behavior = distribution["DefaultCacheBehavior"]
    assert behavior["ViewerProtocolPolicy"] == "https-only"
    assert distribution["DefaultRootObject"] == "index.html"
    assert "OriginAccessControlId" in distribution["Origins"][0]
    policy_id, policy = _one(dev, "AWS::CloudFront::ResponseHeadersPolicy")
    assert behavior["ResponseHeadersPolicyId"] == {"Ref": policy_id}
    security = policy["Properties"]["ResponseHeadersPolicyConfig"]["SecurityHeadersConfig"]
    csp = json.dumps(security["ContentSecurityPolicy"]["ContentSecurityPolicy"])
    for directive in CSP_DIRECTIVES:
        assert directive in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert security["ContentSecurityPolicy"]["Override"] is True
    assert security["StrictTransportSecurity"]["AccessControlMaxAgeSec"] >= 31_536_000
    assert security["FrameOptions"]["FrameOption"] == "DENY"
    assert security["ContentTypeOptions"] == {"Override": True}


def test_site_csp_connects_only_to_the_regions_api_s3_and_cognito(dev: Synthesized) -> None:
    _, policy = _one(dev, "AWS::CloudFront::ResponseHeadersPolicy")
    csp = policy["Properties"]["ResponseHeadersPolicyConfig"]["SecurityHeadersConfig"][
        "ContentSecurityPolicy"
    ]["ContentSecurityPolicy"]
    parts = "".join(p if isinstance(p, str) else "<region>" for p in csp["Fn::Join"][1])
    connect = next(d for d in parts.split("; ") if d.startswith("connect-src"))
    assert connect.split() == [
        "connect-src",
        "'self'",
        "https://*.execute-api.<region>.amazonaws.com",
        "https://*.s3.amazonaws.com",
        "https://cognito-idp.<region>.amazonaws.com",
        "https://*.auth.<region>.amazoncognito.com",
    ]


def test_site_csp_with_external_issuer_connects_to_that_issuer(external: Synthesized) -> None:
    _, policy = _one(external, "AWS::CloudFront::ResponseHeadersPolicy")
    csp = json.dumps(policy["Properties"]["ResponseHeadersPolicyConfig"])
    assert "https://issuer.example.com" in csp and "amazoncognito" not in csp


def test_api_cors_allows_only_the_site_origin(dev: Synthesized) -> None:
    _, api = _one(dev, "AWS::ApiGatewayV2::Api")
    cors = api["Properties"]["CorsConfiguration"]
    assert cors["AllowOrigins"] == [
        {"Fn::Join": ["", ["https://", {"Fn::GetAtt": [_distribution_id(dev), "DomainName"]}]]}
    ]
    assert {"authorization", "if-match", "idempotency-key"} <= set(cors["AllowHeaders"])


def test_cognito_client_uses_code_flow_with_the_site_as_callback(dev: Synthesized) -> None:
    site = {
        "Fn::Join": ["", ["https://", {"Fn::GetAtt": [_distribution_id(dev), "DomainName"]}, "/"]]
    }
    dev.template.has_resource_properties(
        "AWS::Cognito::UserPoolClient",
        {
            "AllowedOAuthFlows": ["code"],
            "CallbackURLs": [site],
            "LogoutURLs": [site],
            "GenerateSecret": False,
            "SupportedIdentityProviders": ["COGNITO"],
        },
    )
    dev.template.resource_count_is("AWS::Cognito::UserPoolDomain", 1)


def test_site_content_uploads_web_and_a_config_naming_the_api(dev: Synthesized) -> None:
    _, deployment = _one(dev, "Custom::CDKBucketDeployment")
    props = deployment["Properties"]
    assert props["DestinationBucketName"] == {"Ref": _site_bucket_id(dev)}
    assert props["DistributionPaths"] == ["/*"]
    markers = json.dumps(props["SourceMarkers"])
    assert dev.logical_id(dev.stack.api.http_api) in markers
    assert dev.logical_id(dev.stack.api.user_pool_client) in markers
    dev.template.has_output("SiteUrl", {"Value": Match.any_value()})
