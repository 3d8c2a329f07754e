"""The one definition of the media bucket: its setting, key layout, CORS and lifecycle.

The CDK construct (``infra/media.py``), the local stack (``local/emulation/resources.py``) and
the tests build the bucket from :data:`MEDIA_BUCKET`, and the data layer uses the same key
layout and pending tag, so the four cannot drift. Importable without ``aws_cdk`` or boto3.

Lifecycle (decisions "The media bucket, its limits per network, erasure" and "Uploads never
attached expire after a day"): the pre-signed POST policy tags each upload ``state=pending``
(the ``tagging`` form field, S3 API Reference, "POST Object"); the first post or recurring
schedule that names the upload removes the tag (``logic/media_attach.py``). A rule expires
objects under ``media/`` still tagged ``pending`` one day after their creation (S3 rounds the
expiry up to the next midnight UTC: an object lives 24 to 48 hours), so an upload never
completed, rejected or never attached disappears without a sweeper; a second rule aborts
incomplete multipart uploads after a day (S3 refuses ``AbortIncompleteMultipartUpload`` in a
rule filtered by tags: S3 User Guide, "Lifecycle configuration elements").
"""

from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import escape


@dataclass(frozen=True)
class BucketDef:
    """An S3 bucket: CDK logical id, the setting naming it, and its media layout.

    ``object_prefix``: where uploads live (``media/``); ``pending_tag``: the (key, value) tag
    the upload policy sets and the first attach removes; ``pending_expiration_days``: days after
    creation an object still tagged pending is removed; ``abort_multipart_days``: days after
    which an incomplete multipart upload is aborted; ``cors_methods``: what the page may send
    (the POST policy upload, GET of a preview); ``cors_max_age_seconds``: preflight caching;
    ``expiring_prefixes``: other prefixes of the bucket whose objects expire (import files).
    """

    logical_id: str
    settings_name: str
    object_prefix: str
    pending_tag: tuple[str, str]
    pending_expiration_days: int = 1
    abort_multipart_days: int = 1
    cors_methods: tuple[str, ...] = ("POST", "GET")
    cors_headers: tuple[str, ...] = ("content-type",)
    cors_max_age_seconds: int = 3600
    #: ``(prefix, days)``: every object under ``prefix`` is deleted ``days`` after creation.
    expiring_prefixes: tuple[tuple[str, int], ...] = ()

    def object_key(self, media_id: str) -> str:
        """The S3 key of one upload: ``media/<media_id>``."""
        return f"{self.object_prefix}{media_id}"

    @property
    def objects_pattern(self) -> str:
        """The IAM resource suffix of every upload (``media/*``)."""
        return f"{self.object_prefix}*"

    def pending_tagging(self) -> str:
        """The POST policy's ``tagging`` field value: the pending tag as S3's ``Tagging`` XML
        (S3 API Reference, "POST Object": ``tagging`` is an XML tag set)."""
        key, value = (escape(part) for part in self.pending_tag)
        return (
            f"<Tagging><TagSet><Tag><Key>{key}</Key><Value>{value}</Value></Tag></TagSet></Tagging>"
        )

    def upload_policy(self, content_type: str, size: int) -> tuple[dict[str, str], list[object]]:
        """The ``Fields`` and ``Conditions`` of boto3's ``generate_presigned_post`` for one
        upload: exactly ``content_type`` and ``size`` bytes (``content-length-range``), tagged
        pending (the lifecycle's tag; a condition, so a client cannot drop it). S3 refuses any
        other file (S3 API Reference, "Creating a POST policy")."""
        tagging = self.pending_tagging()
        fields = {"Content-Type": content_type, "tagging": tagging}
        conditions: list[object] = [
            {"Content-Type": content_type},
            {"tagging": tagging},
            ["content-length-range", size, size],
        ]
        return fields, conditions

    def lifecycle_rules(self) -> list[dict[str, object]]:
        """The lifecycle rules as S3's ``PutBucketLifecycleConfiguration`` ``Rules`` (for moto
        and the local stack; ``infra/media.py`` writes the same ones with CDK)."""
        key, value = self.pending_tag
        expiring: list[dict[str, object]] = [
            {
                "ID": f"expire-{prefix.strip('/')}",
                "Status": "Enabled",
                "Filter": {"Prefix": prefix},
                "Expiration": {"Days": days},
            }
            for prefix, days in self.expiring_prefixes
        ]
        return [
            {
                "ID": "expire-pending-uploads",
                "Status": "Enabled",
                "Filter": {
                    "And": {"Prefix": self.object_prefix, "Tags": [{"Key": key, "Value": value}]}
                },
                "Expiration": {"Days": self.pending_expiration_days},
            },
            *expiring,
            {
                "ID": "abort-incomplete-multipart-uploads",
                "Status": "Enabled",
                "Filter": {"Prefix": ""},
                "AbortIncompleteMultipartUpload": {
                    "DaysAfterInitiation": self.abort_multipart_days
                },
            },
        ]

    def cors_rules(self, origins: tuple[str, ...]) -> list[dict[str, object]]:
        """S3 ``PutBucketCors`` ``CORSRules`` for the page's ``origins`` (``https://<host>``)."""
        return [
            {
                "AllowedOrigins": list(origins),
                "AllowedMethods": list(self.cors_methods),
                "AllowedHeaders": list(self.cors_headers),
                "ExposeHeaders": ["ETag"],
                "MaxAgeSeconds": self.cors_max_age_seconds,
            }
        ]


#: Where a committed import's file waits for the importer in the media bucket
#: (``imports/<owner>/<import_id>``; decision "Bulk import").
IMPORT_PREFIX = "imports/"
#: The IAM resource suffix of every import file.
IMPORT_OBJECTS_PATTERN = f"{IMPORT_PREFIX}*"
#: Days after which the media bucket's lifecycle rule deletes an import file (the committed
#: file and an uploaded one never imported): longer than the import DLQ's 14-day retention, so
#: a dead-lettered chunk's report still finds its file (``logic/import_runs.fail_import``); an
#: import runs in minutes. The account erasure deletes an owner's import files at once.
IMPORT_FILE_EXPIRATION_DAYS = 15

#: The private bucket of uploaded images and videos (``MEDIA_BUCKET_NAME``).
MEDIA_BUCKET = BucketDef(
    logical_id="MediaBucket",
    settings_name="MEDIA_BUCKET_NAME",
    object_prefix="media/",
    pending_tag=("state", "pending"),
    expiring_prefixes=((IMPORT_PREFIX, IMPORT_FILE_EXPIRATION_DAYS),),
)
