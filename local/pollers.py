"""The local stack's event source mappings other than the worker's: the notifier on the notify
queue and the importer on the import queue and on its DLQ (decision "Bulk import"), each an
:class:`SqsPoller` sized as deployed (``scheduled_posts.sizing``). A function whose
``functions/<name>/handler.py`` is missing gets no mapping."""

from __future__ import annotations

import threading

import boto3

from local.config import LocalConfig
from local.emulation.lambda_runtime import LambdaFunction, is_available
from local.emulation.sqs import SqsPoller
from scheduled_posts import sizing
from scheduled_posts.settings import Settings


def queue_poller(
    name: str,
    url: str,
    *,
    timeout_seconds: int,
    batch_size: int,
    config: LocalConfig,
    stop_event: threading.Event,
) -> SqsPoller:
    """Function ``name``'s event source mapping on the queue at ``url``."""
    sqs = boto3.client("sqs")
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    return SqsPoller(
        sqs,
        queue_url=url,
        queue_arn=arn,
        function=LambdaFunction(name, timeout_seconds),
        batch_size=batch_size,
        wait_seconds=config.poll_wait_seconds,
        poll_interval_seconds=config.poll_interval_seconds or None,
        stop_event=stop_event,
    )


def queue_pollers(
    settings: Settings, config: LocalConfig, stop_event: threading.Event
) -> list[SqsPoller]:
    """The notifier's mapping (notify queue) and the importer's two (import queue, import DLQ:
    one function, as deployed, that marks a dead-lettered chunk's import failed)."""
    mappings: list[tuple[str, str, int, int]] = []
    if is_available("notifier"):
        mappings.append(
            (
                "notifier",
                settings.NOTIFY_QUEUE_URL,
                sizing.DEFAULT_NOTIFIER_TIMEOUT_SECONDS,
                sizing.DEFAULT_NOTIFIER_BATCH_SIZE,
            )
        )
    if is_available("importer"):
        for url in (settings.IMPORT_QUEUE_URL, settings.IMPORT_DLQ_URL):
            mappings.append(
                (
                    "importer",
                    url,
                    sizing.DEFAULT_IMPORTER_TIMEOUT_SECONDS,
                    sizing.DEFAULT_IMPORTER_BATCH_SIZE,
                )
            )
    return [
        queue_poller(
            name,
            url,
            timeout_seconds=timeout,
            batch_size=batch,
            config=config,
            stop_event=stop_event,
        )
        for name, url, timeout, batch in mappings
    ]
