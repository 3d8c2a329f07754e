"""The media bucket: private uploads of images and videos, reached only with pre-signed URLs.

* Blocks all public access, encrypts with S3-managed keys (as the site's bucket: a pre-signed
  ``GET`` handed to a webhook then needs no KMS grant), refuses plain HTTP (``enforce_ssl``),
  bucket-owner-enforced ownership (no ACLs), server access logs into the site's log bucket
  (cdk-nag ``AwsSolutions-S1``, as the site's bucket).
* Versioning off: an object is written once under ``media/<media_id>`` and erasure must remove
  its bytes for good; with versions, a delete would only add a delete marker.
* CORS for the content calendar's origin: ``POST`` (the pre-signed POST policy upload) and
  ``GET`` (a preview through a pre-signed link).
* Lifecycle (``scheduled_posts/buckets.py``): objects under ``media/`` still tagged
  ``state=pending`` (never attached to a post or recurring schedule) expire a day after
  creation, at the next midnight UTC; incomplete multipart uploads abort after a day.

Grants are least privilege on ``media/*`` only: the API signs the upload (``s3:PutObject``,
``s3:PutObjectTagging`` for the policy's ``tagging`` field), probes, links and deletes
(``s3:GetObject``, ``s3:DeleteObject``, ``s3:DeleteObjectTagging`` when a post first names
an upload); the publish worker reads (``s3:GetObject``).
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from constructs import Construct

from scheduled_posts.buckets import MEDIA_BUCKET

#: What the API may do on ``media/*`` (see the module docstring).
API_MEDIA_ACTIONS = (
    "s3:PutObject",
    "s3:PutObjectTagging",
    "s3:GetObject",
    "s3:DeleteObject",
    "s3:DeleteObjectTagging",
)
#: What the publish worker may do on ``media/*``: read the bytes it uploads to a network.
WORKER_MEDIA_ACTIONS = ("s3:GetObject",)
_METHODS = {"POST": s3.HttpMethods.POST, "GET": s3.HttpMethods.GET}


class MediaConstruct(Construct):
    """The private media bucket (``MEDIA_BUCKET``) and its grants.

    Attributes
    ----------
    bucket : aws_s3.Bucket
        Logical id pinned to ``MediaBucket``: replacing it would lose every upload.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        retain: bool,
        site_origin: str,
        log_bucket: s3.IBucket,
    ) -> None:
        """``site_origin`` (``https://<host>``): the only origin CORS allows; ``log_bucket``:
        where the server access logs go (prefix ``media-s3/``); ``retain``: RETAIN the bucket
        on stack deletion (else DESTROY, emptied first)."""
        super().__init__(scope, construct_id)
        definition = MEDIA_BUCKET
        self.bucket = s3.Bucket(
            self,
            definition.logical_id,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            versioned=False,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            server_access_logs_bucket=log_bucket,
            server_access_logs_prefix="media-s3/",
            cors=[self._cors_rule(site_origin)],
            lifecycle_rules=self._lifecycle_rules(),
            removal_policy=RemovalPolicy.RETAIN if retain else RemovalPolicy.DESTROY,
            auto_delete_objects=False,
        )
        cfn = self.bucket.node.default_child
        assert isinstance(cfn, s3.CfnBucket)
        cfn.override_logical_id(definition.logical_id)

    @staticmethod
    def _cors_rule(origin: str) -> s3.CorsRule:
        definition = MEDIA_BUCKET
        return s3.CorsRule(
            allowed_origins=[origin],
            allowed_methods=[_METHODS[m] for m in definition.cors_methods],
            allowed_headers=list(definition.cors_headers),
            exposed_headers=["ETag"],
            max_age=definition.cors_max_age_seconds,
        )

    @staticmethod
    def _lifecycle_rules() -> list[s3.LifecycleRule]:
        definition = MEDIA_BUCKET
        key, value = definition.pending_tag
        return [
            s3.LifecycleRule(
                id="expire-pending-uploads",
                prefix=definition.object_prefix,
                tag_filters={key: value},
                expiration=Duration.days(definition.pending_expiration_days),
            ),
            *(
                s3.LifecycleRule(
                    id=f"expire-{prefix.strip('/')}",
                    prefix=prefix,
                    expiration=Duration.days(days),
                )
                for prefix, days in definition.expiring_prefixes
            ),
            s3.LifecycleRule(
                id="abort-incomplete-multipart-uploads",
                abort_incomplete_multipart_upload_after=Duration.days(
                    definition.abort_multipart_days
                ),
            ),
        ]

    def grant_api(self, function: lambda_.Function) -> None:
        """``MEDIA_BUCKET_NAME`` and :data:`API_MEDIA_ACTIONS` on ``media/*`` for the API."""
        self._grant(function, API_MEDIA_ACTIONS)

    def grant_worker(self, function: lambda_.Function) -> None:
        """``MEDIA_BUCKET_NAME`` and :data:`WORKER_MEDIA_ACTIONS` on ``media/*`` for the
        publish worker."""
        self._grant(function, WORKER_MEDIA_ACTIONS)

    def _grant(self, function: lambda_.Function, actions: tuple[str, ...]) -> None:
        function.add_environment(MEDIA_BUCKET.settings_name, self.bucket.bucket_name)
        function.add_to_role_policy(
            iam.PolicyStatement(
                actions=list(actions),
                resources=[self.bucket.arn_for_objects(MEDIA_BUCKET.objects_pattern)],
            )
        )
