"""The service's tables, queues and media bucket, created in an emulated AWS (moto) from one
definition each.

Both the local stack (``local/embedded_aws.py``, against the moto server) and the tests
(``tests/support/fixtures.py``, against in-process moto) create their resources here, from
:mod:`scheduled_posts.tables` (the definitions the CDK app uses) and with the dispatch queue's
visibility timeout from :mod:`scheduled_posts.sizing` (6 x the worker's timeout, as deployed).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from scheduled_posts.buckets import MEDIA_BUCKET
from scheduled_posts.sizing import visibility_timeout_seconds
from scheduled_posts.tables import (
    ALL_QUEUES,
    ALL_TABLES,
    IMPORT_QUEUES,
    NOTIFY_QUEUES,
    QueueDef,
    create_table_request,
)

log = logging.getLogger("local.aws")


def ensure_resources(
    dynamodb: Any,
    sqs: Any,
    *,
    table_names: Mapping[str, str],
    queue_names: Mapping[str, str],
    max_receive_count: int,
    worker_timeout_seconds: int,
) -> dict[str, str]:
    """Create the tables and queues that are missing; never touch existing ones.

    Parameters
    ----------
    dynamodb, sqs:
        boto3 clients pointed at the emulated AWS.
    table_names:
        Each table's settings name (``POSTS_TABLE_NAME`` ...) to its physical name.
    queue_names:
        Each queue's logical id (``DispatchQueue``, ``DispatchDLQ``) to its physical name.
    max_receive_count:
        ``MAX_RECEIVE_COUNT``: receives before the dispatch queue redrives a message to the DLQ.
    worker_timeout_seconds:
        The worker's (emulated) timeout; the dispatch queue hides a received message for
        :func:`scheduled_posts.sizing.visibility_timeout_seconds` of it.

    Returns
    -------
    dict[str, str]
        The resource settings: every table's settings name to its name, and
        ``DISPATCH_QUEUE_URL``/``DISPATCH_DLQ_URL`` to the queue URLs.
    """
    existing: set[str] = set()
    for page in dynamodb.get_paginator("list_tables").paginate():
        existing.update(page["TableNames"])
    settings: dict[str, str] = {}
    for table in ALL_TABLES:
        name = table_names[table.settings_name]
        settings[table.settings_name] = name
        if name in existing:
            continue
        dynamodb.create_table(**create_table_request(table, name))
        if table.ttl_attribute:
            dynamodb.update_time_to_live(
                TableName=name,
                TimeToLiveSpecification={"Enabled": True, "AttributeName": table.ttl_attribute},
            )
        log.info("created table %s", name)
    settings.update(
        _ensure_queues(
            sqs,
            ALL_QUEUES,
            queue_names=queue_names,
            max_receive_count=max_receive_count,
            consumer_timeout_seconds=worker_timeout_seconds,
        )
    )
    return settings


#: The alias of the emulated credentials key (the stack's ``CredentialsKey``).
CREDENTIALS_KEY_ALIAS = "alias/scheduled-posts-credentials"


def ensure_credentials_key(kms: Any) -> str:
    """The ARN of the KMS key that seals channel credentials (``CREDENTIALS_KEY_ID``), created
    with its alias when missing, so a restarted ``make run`` on a kept embedded AWS opens what
    it sealed before. ``kms`` is a boto3 KMS client pointed at the emulated AWS."""
    for alias in kms.list_aliases()["Aliases"]:
        if alias["AliasName"] == CREDENTIALS_KEY_ALIAS and alias.get("TargetKeyId"):
            return str(kms.describe_key(KeyId=alias["TargetKeyId"])["KeyMetadata"]["Arn"])
    key = kms.create_key(Description="scheduled-posts channel credentials")["KeyMetadata"]
    kms.create_alias(AliasName=CREDENTIALS_KEY_ALIAS, TargetKeyId=key["KeyId"])
    log.info("created KMS key %s", CREDENTIALS_KEY_ALIAS)
    return str(key["Arn"])


def ensure_event_bus(events: Any, name: str) -> str:
    """Create the EventBridge custom bus ``name`` if missing; its ARN."""
    try:
        return str(events.describe_event_bus(Name=name)["Arn"])
    except events.exceptions.ResourceNotFoundException:
        arn = str(events.create_event_bus(Name=name)["EventBusArn"])
        log.info("created event bus %s", name)
        return arn


def ensure_notify_queues(
    sqs: Any,
    *,
    queue_names: Mapping[str, str],
    max_attempts: int,
    notifier_timeout_seconds: int,
) -> dict[str, str]:
    """Create the notify queue and its DLQ when missing; their settings.

    ``queue_names`` maps ``NotifyQueue``/``NotifyDLQ`` to physical names; the notify queue
    moves a message to the DLQ after ``max_attempts`` receives (``NOTIFY_MAX_ATTEMPTS``) and
    hides a received one for 6 x ``notifier_timeout_seconds``, as deployed (``infra/notify.py``).
    Returns ``NOTIFY_QUEUE_URL`` and ``NOTIFY_DLQ_URL``.
    """
    return _ensure_queues(
        sqs,
        NOTIFY_QUEUES,
        queue_names=queue_names,
        max_receive_count=max_attempts,
        consumer_timeout_seconds=notifier_timeout_seconds,
    )


def ensure_import_queues(
    sqs: Any,
    *,
    queue_names: Mapping[str, str],
    max_receives: int,
    importer_timeout_seconds: int,
) -> dict[str, str]:
    """Create the import queue and its DLQ when missing (decision "Bulk import"); their
    settings. ``queue_names`` maps ``ImportQueue``/``ImportDLQ`` to physical names; a chunk
    moves to the DLQ after ``max_receives`` receives (``IMPORT_MAX_RECEIVES``) and a received
    one hides for 6 x ``importer_timeout_seconds``, as deployed (``infra/imports.py``).
    Returns ``IMPORT_QUEUE_URL`` and ``IMPORT_DLQ_URL``.
    """
    return _ensure_queues(
        sqs,
        IMPORT_QUEUES,
        queue_names=queue_names,
        max_receive_count=max_receives,
        consumer_timeout_seconds=importer_timeout_seconds,
    )


def _ensure_queues(
    sqs: Any,
    queues: Iterable[QueueDef],
    *,
    queue_names: Mapping[str, str],
    max_receive_count: int,
    consumer_timeout_seconds: int,
) -> dict[str, str]:
    """Create each of ``queues`` (dead-letter queues first) when missing; ``settings_name ->
    URL``. A queue with a dead letter moves a message there after ``max_receive_count``
    receives and hides a received one for 6 x ``consumer_timeout_seconds``, as deployed."""
    settings: dict[str, str] = {}
    urls: dict[str, str] = {}
    for queue in queues:
        name = queue_names[queue.logical_id]
        try:
            url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
        except sqs.exceptions.QueueDoesNotExist:
            attributes = {"MessageRetentionPeriod": str(queue.retention_days * 86400)}
            if queue.dead_letter:
                dlq_arn = sqs.get_queue_attributes(
                    QueueUrl=urls[queue.dead_letter], AttributeNames=["QueueArn"]
                )["Attributes"]["QueueArn"]
                attributes["RedrivePolicy"] = json.dumps(
                    {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(max_receive_count)}
                )
                attributes["VisibilityTimeout"] = str(
                    visibility_timeout_seconds(consumer_timeout_seconds)
                )
            url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
            log.info("created queue %s", name)
        urls[queue.logical_id] = url
        settings[queue.settings_name] = url
    return settings


def ensure_media_bucket(s3: Any, *, name: str, origins: Iterable[str]) -> dict[str, str]:
    """Create the media bucket ``name`` when missing and (re)apply its CORS for the page's
    ``origins`` and its lifecycle rules, from :data:`scheduled_posts.buckets.MEDIA_BUCKET` (the
    definition ``infra/media.py`` deploys). ``s3`` is a boto3 S3 client pointed at the emulated
    AWS; returns ``{"MEDIA_BUCKET_NAME": name}``.

    moto stores the lifecycle rules but never runs them (no clock-driven expiry): a pending
    upload stays until the embedded AWS restarts.
    """
    try:
        s3.head_bucket(Bucket=name)
    except s3.exceptions.ClientError:
        s3.create_bucket(Bucket=name)
        s3.put_public_access_block(
            Bucket=name,
            PublicAccessBlockConfiguration={
                "BlockPublicAcls": True,
                "IgnorePublicAcls": True,
                "BlockPublicPolicy": True,
                "RestrictPublicBuckets": True,
            },
        )
        log.info("created bucket %s", name)
    s3.put_bucket_cors(
        Bucket=name, CORSConfiguration={"CORSRules": MEDIA_BUCKET.cors_rules(tuple(origins))}
    )
    s3.put_bucket_lifecycle_configuration(
        Bucket=name, LifecycleConfiguration={"Rules": MEDIA_BUCKET.lifecycle_rules()}
    )
    return {MEDIA_BUCKET.settings_name: name}
