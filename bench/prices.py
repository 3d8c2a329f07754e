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
