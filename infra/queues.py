"""The SQS queue every construct builds: encrypted at rest with SQS-managed keys (SSE-SQS) and
refusing requests not sent over TLS (``enforceSSL``, cdk-nag ``AwsSolutions-SQS3``/``SQS4``).

One function, so that a queue of the dispatch path, the notifications, the outbox relay or a
schedule's dead letters cannot be built without either.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_sqs as sqs
from constructs import Construct


def secure_queue(
    scope: Construct,
    construct_id: str,
    *,
    retention_period: Duration,
    removal_policy: RemovalPolicy,
    visibility_timeout: Duration | None = None,
    dead_letter_queue: sqs.DeadLetterQueue | None = None,
) -> sqs.Queue:
    """An SSE-SQS, TLS-only queue ``construct_id`` in ``scope``.

    ``retention_period``: 60 s to 14 days (SQS ``MessageRetentionPeriod``);
    ``visibility_timeout``: SQS's 30 s default when None (0 s to 12 h);
    ``dead_letter_queue``: the redrive policy, none when None.
    """
    return sqs.Queue(
        scope,
        construct_id,
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        retention_period=retention_period,
        visibility_timeout=visibility_timeout,
        dead_letter_queue=dead_letter_queue,
        removal_policy=removal_policy,
    )
