"""AWS list prices (us-east-1) used by the cost model, each with its source and the date taken.

Copied from the shared ``AWS-FACTS.md`` (gathered late 2026). Lines marked "secondary" there
came from a third-party summary of the AWS price page: check them before publishing a figure.
Free tiers are ignored (a cost per million posts at scale).
"""

from __future__ import annotations

from dataclasses import dataclass

#: When the prices were taken (the date of the shared ``AWS-FACTS.md``'s survey).
PRICES_TAKEN = "late 2026 (from the shared AWS-FACTS.md, read 2026-11-29)"


@dataclass(frozen=True)
class Price:
    """US dollars per ``per`` units of ``unit``."""

    usd: float
    per: float
    unit: str
    source: str

    def cost(self, quantity: float) -> float:
        """Dollars for ``quantity`` units."""
        return self.usd * quantity / self.per


PRICES: dict[str, Price] = {
    "lambda_request": Price(0.20, 1e6, "invocations", "AWS Lambda pricing (secondary)"),
    "lambda_gb_s_arm64": Price(
        0.0000133334, 1, "GB-seconds (arm64)", "AWS Lambda pricing (secondary)"
    ),
    "dynamodb_write_unit": Price(
        0.625, 1e6, "on-demand write request units", "DynamoDB pricing, Nov 2024 cut (secondary)"
    ),
    "dynamodb_read_unit": Price(
        0.125, 1e6, "on-demand read request units", "DynamoDB pricing, Nov 2024 cut (secondary)"
    ),
    "sqs_request": Price(
        0.40,
        1e6,
        "standard-queue requests (a batch of <= 10 is one)",
        "Amazon SQS pricing (secondary)",
    ),
    "scheduler_invocation": Price(
        1.00,
        1e6,
        "EventBridge Scheduler invocations (creating schedules is free)",
        "EventBridge Scheduler pricing (secondary)",
    ),
    "http_api_request": Price(1.00, 1e6, "HTTP API requests", "Amazon API Gateway pricing"),
    # Not in AWS-FACTS.md: the EventBridge pricing page's custom-event rate (each 64 KB chunk of
    # a PutEvents entry is one event). Stream reads by a Lambda trigger are free (DynamoDB
    # pricing, "DynamoDB Streams": GetRecords by Lambda triggers is not charged).
    "eventbridge_custom_event": Price(
        1.00, 1e6, "custom events put on an event bus", "Amazon EventBridge pricing (secondary)"
    ),
}

# Not in AWS-FACTS.md (it has no S3 line): the Amazon S3 pricing page, us-east-1, S3 Standard,
# as given to this benchmark (secondary until checked against the page). A browser's POST-form
# upload (``PostObject``) is billed as a PUT request; "DELETE and CANCEL requests are free"; every
# other request (GET, HEAD, the tagging calls) is in the GET tier.
S3_PRICES: dict[str, Price] = {
    "s3_put_request": Price(
        0.005, 1000, "S3 PUT, COPY, POST, LIST requests", "Amazon S3 pricing, Standard (secondary)"
    ),
    "s3_get_request": Price(
        0.0004, 1000, "S3 GET and all other requests", "Amazon S3 pricing, Standard (secondary)"
    ),
    "s3_storage_gb_month": Price(
        0.023, 1, "S3 Standard GB-months (first 50 TB)", "Amazon S3 pricing, Standard (secondary)"
    ),
}
PRICES.update(S3_PRICES)

#: S3 operations in the PUT tier (the rest are in the GET tier but those in ``S3_FREE``).
S3_PUT_TIER = frozenset(
    {"PutObject", "PostObject", "CopyObject", "CreateMultipartUpload", "UploadPart",
     "CompleteMultipartUpload", "ListObjects", "ListObjectsV2", "ListBuckets"}
)  # fmt: skip
#: S3 operations not charged (the pricing page: "DELETE and CANCEL requests are free"). The
#: tagging delete (``DeleteObjectTagging``) is priced in the GET tier: the page names only DELETE.
S3_FREE = frozenset({"DeleteObject", "DeleteObjects", "AbortMultipartUpload"})


def s3_request_cost(operation: str, requests: float) -> float:
    """Dollars for ``requests`` S3 requests of ``operation`` (a botocore operation name)."""
    if operation in S3_FREE:
        return 0.0
    tier = "s3_put_request" if operation in S3_PUT_TIER else "s3_get_request"
    return PRICES[tier].cost(requests)
