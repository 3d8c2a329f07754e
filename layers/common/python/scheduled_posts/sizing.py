"""Sizing rules for the publish worker and its queue, in one place.

Used by the deployed stage config (``infra/config.py``), the local stack (``local/``) and the
test fixtures, so the three size the dispatch queue and the worker the same way. Pure (no
boto3), importable by the Lambdas as well.
"""

from __future__ import annotations

from scheduled_posts.settings import Settings

#: AWS guidance: queue visibility at least 6 x the function timeout for Lambda event sources
#: (AWS Lambda Developer Guide, "Using Lambda with Amazon SQS").
VISIBILITY_TIMEOUT_FACTOR = 6

#: SQS visibility-timeout ceiling, 12 hours (Amazon SQS Developer Guide, "Visibility timeout").
SQS_MAX_VISIBILITY_SECONDS = 43_200

#: Largest batch an SQS event source mapping on a standard queue receives per ``ReceiveMessage``
#: without a batching window (the SQS receive maximum, 10 messages).
SQS_MAX_BATCH_SIZE = 10

#: Worst-case seconds one post takes in the worker on top of one delivery timeout: its
#: channels are delivered concurrently, each with ``DELIVERY_TIMEOUT_SECONDS``; this is the
#: overhead added for the claim, the per-channel writes and the final write.
POST_OVERHEAD_SECONDS = 2.0

#: The worker's default batch size and timeout (seconds), deployed and local alike. With the
#: default ``DELIVERY_TIMEOUT_SECONDS`` (10 s, so 12 s per post) they pass
#: :func:`worker_sizing_errors` with a margin: 2 x 5 x 12 = 120 <= 150.
DEFAULT_WORKER_BATCH_SIZE = 5
DEFAULT_WORKER_TIMEOUT_SECONDS = 150


def post_seconds(delivery_timeout_seconds: float) -> float:
    """Worst-case seconds for one post: one delivery timeout plus :data:`POST_OVERHEAD_SECONDS`
    (the channels of a post are delivered concurrently)."""
    return delivery_timeout_seconds + POST_OVERHEAD_SECONDS


def visibility_timeout_seconds(worker_timeout_seconds: int) -> int:
    """The dispatch queue's visibility timeout: :data:`VISIBILITY_TIMEOUT_FACTOR` x the
    worker's timeout (seconds)."""
    return VISIBILITY_TIMEOUT_FACTOR * worker_timeout_seconds


def worker_sizing_errors(
    worker_timeout_seconds: int, worker_batch_size: int, settings: Settings
) -> list[str]:
    """Every way the worker's sizing is wrong, as messages (empty when it fits).

    ``settings`` gives ``DELIVERY_TIMEOUT_SECONDS`` and ``LEASE_SECONDS``.

    The rules: a post's lease outlives one post's processing (otherwise the watchdog could
    take a post back while it is still being delivered); the worker's timeout covers twice a
    whole batch processed one post after another (so a slow batch still ends before Lambda
    stops it); the visibility timeout (6 x the worker's timeout) stays within the SQS maximum;
    the batch size is 1..10.
    """
    errors: list[str] = []
    lease_seconds = settings.LEASE_SECONDS
    one_post = post_seconds(settings.DELIVERY_TIMEOUT_SECONDS)
    if not 1 <= worker_batch_size <= SQS_MAX_BATCH_SIZE:
        errors.append(f"worker_batch_size ({worker_batch_size}) must be 1..{SQS_MAX_BATCH_SIZE}")
    if one_post >= lease_seconds:
        errors.append(f"LEASE_SECONDS must exceed one post's processing ({one_post} s)")
    if worker_timeout_seconds < 2 * worker_batch_size * one_post:
        errors.append(
            f"worker_timeout_seconds ({worker_timeout_seconds}) must be >= 2 x"
            f" worker_batch_size ({worker_batch_size}) x one post's processing ({one_post} s)"
        )
    if visibility_timeout_seconds(worker_timeout_seconds) > SQS_MAX_VISIBILITY_SECONDS:
        errors.append(
            f"worker_timeout_seconds x {VISIBILITY_TIMEOUT_FACTOR} exceeds the SQS visibility"
            f" maximum ({SQS_MAX_VISIBILITY_SECONDS} s)"
        )
    return errors


#: The notifier (decision "No per-tenant queue"): a batch's records are sent concurrently, each
#: bounded by ``NOTIFY_TIMEOUT_SECONDS`` (5 s by default, at most 30 s), so one invocation takes
#: about one request's time plus the endpoint reads; 60 s covers the largest
#: ``NOTIFY_TIMEOUT_SECONDS`` twice. The notify queue's visibility is 6 x this, like the dispatch
#: queue's.
DEFAULT_NOTIFIER_BATCH_SIZE = 10
DEFAULT_NOTIFIER_TIMEOUT_SECONDS = 60

#: The importer (decision "Bulk import"): one record is one chunk of 100 rows, each a few
#: reads and one conditional create (about 10 ms each on DynamoDB, so about 2 s a chunk); a
#: batch of 2 chunks in 120 s leaves a wide margin for throttled writes. The import queue's
#: visibility is 6 x this, like the other queues'.
DEFAULT_IMPORTER_BATCH_SIZE = 2
DEFAULT_IMPORTER_TIMEOUT_SECONDS = 120
