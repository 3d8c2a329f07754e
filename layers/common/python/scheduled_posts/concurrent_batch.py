"""A Powertools ``BatchProcessor`` that processes a batch's records concurrently (issue 17).

Records of one SQS batch are different posts, often of different users. Processed one after
another, a destination that takes ``DELIVERY_TIMEOUT_SECONDS`` to answer delays every record
after it: one tenant's slow webhook made five other users' posts due the same second arrive
11-21 s late. Here each record runs on its own thread (at most :data:`MAX_CONCURRENT_RECORDS`,
the SQS batch size limit), and keeps everything it had: its own claim and lease, its own
Powertools idempotency per channel, its own batch item failure. Only the handler's return waits
for the slowest record, which delays no delivery.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from aws_lambda_powertools.utilities.batch import BatchProcessor

#: Most records processed at once: the SQS event source's largest batch without a batching
#: window (Lambda developer guide, "Using Lambda with Amazon SQS": ``BatchSize`` up to 10).
MAX_CONCURRENT_RECORDS = 10


class ConcurrentBatchProcessor(BatchProcessor):
    """:class:`BatchProcessor` whose ``process`` runs the records on a thread pool.

    Success and failure bookkeeping is the parent's (list appends, safe across threads); the
    results keep the records' order. The record handler must be thread-safe.
    """

    def process(self) -> list[tuple]:
        """Call the record handler for every record, concurrently; results in record order."""
        records = list(self.records)
        if len(records) <= 1:
            return [self._process_record(record) for record in records]
        workers = min(MAX_CONCURRENT_RECORDS, len(records))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="record") as pool:
            return list(pool.map(self._process_record, records))
