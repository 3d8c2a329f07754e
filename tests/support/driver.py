"""Plays AWS's schedulers and the Lambda SQS event source mapping against in-process moto.

* ``poll()`` is one turn of the SQS event source mapping the local stack uses
  (:class:`local.emulation.sqs.EventSourceMapping`): it receives up to ``batch_size`` visible
  messages (never an empty batch), builds a real SQS event, calls the worker handler with a
  context whose remaining time counts down on the simulated clock, then deletes the records not
  listed in ``batchItemFailures``. Failed records stay in flight and reappear after the queue's
  visibility timeout; a handler that raises or overruns its timeout (or a simulated
  :class:`Crash`) leaves the whole batch to reappear. moto applies the redrive policy (the DLQ).
* ``run_for(seconds)`` advances the simulated clock step by step, running the sweeper and the
  watchdog on their intervals (EventBridge Scheduler's role) and draining the queue each step.

Faults are injected by wrapping the collaborators the service takes (``Crash`` is raised by such
wrappers), never by hooks in the service code.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from local.emulation.lambda_runtime import LambdaFunction
from local.emulation.sqs import EventSourceMapping
from tests.support.clock import SimClock
from tests.support.fixtures import AwsResources

Handler = Callable[[dict[str, Any], Any], Any]


def _parse(body: str) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return body


class Crash(BaseException):
    """A simulated Lambda crash or timeout: a ``BaseException``, so no ``except Exception`` in
    the service (nor Powertools idempotency's cleanup) sees it."""


@dataclass
class BatchReport:
    """One worker invocation: message ids received, those reported failed, whether it crashed."""

    message_ids: list[str]
    bodies: list[dict[str, Any]]
    failed_ids: list[str] = field(default_factory=list)
    crashed: bool = False
    error: BaseException | None = None


class Driver:
    """See the module docstring.

    Parameters
    ----------
    worker:
        The worker Lambda handler ``(event, context) -> {"batchItemFailures": [...]}``.
    sweeper, watchdog:
        Zero-argument callables run on their intervals (e.g. ``Sweeper(...).sweep``); None to
        never run one. Set ``sweeper_down``/``watchdog_down`` to model an outage.
    """

    def __init__(
        self,
        aws: AwsResources,
        clock: SimClock,
        *,
        worker: Handler,
        sweeper: Callable[[], Any] | None = None,
        watchdog: Callable[[], Any] | None = None,
        batch_size: int = 10,
        worker_timeout_seconds: float = 30.0,
        sweep_interval_seconds: float = 60.0,
        watchdog_interval_seconds: float = 60.0,
    ) -> None:
        self.aws = aws
        self.clock = clock
        self.worker = worker
        self.sweeper = sweeper
        self.watchdog = watchdog
        self.batch_size = batch_size
        self.worker_timeout_seconds = worker_timeout_seconds
        self.sweep_interval = timedelta(seconds=sweep_interval_seconds)
        self.watchdog_interval = timedelta(seconds=watchdog_interval_seconds)
        self.sweeper_down = False
        self.watchdog_down = False
        self.next_sweep_at = clock.now()
        self.next_watchdog_at = clock.now()
        self.reports: list[BatchReport] = []
        #: Called with each report that left messages to reappear (failed or crashed).
        self.on_failed: Callable[[BatchReport], None] | None = None
        self.queue_url = aws.settings.DISPATCH_QUEUE_URL
        self.queue_arn = aws.sqs.get_queue_attributes(
            QueueUrl=self.queue_url, AttributeNames=["QueueArn"]
        )["Attributes"]["QueueArn"]
        # Each test builds its handler for itself, so invocations may run at once (as Lambda's
        # concurrent environments do): ``poll_concurrently`` relies on it.
        self.mapping = EventSourceMapping(
            aws.sqs,
            queue_url=self.queue_url,
            queue_arn=self.queue_arn,
            function=LambdaFunction(
                "worker",
                worker_timeout_seconds,
                handler=worker,
                clock=clock.seconds,
                max_concurrency=64,
                label_logs=False,
                function_name="worker",
            ),
            batch_size=batch_size,
        )

    # -- the event source mapping ------------------------------------------------------------

    def receive(self, max_messages: int | None = None) -> list[dict[str, Any]]:
        """Receive up to ``max_messages`` (default ``batch_size``) visible messages."""
        return self.mapping.receive_messages(0, max_messages)

    def invoke(self, messages: list[dict[str, Any]]) -> BatchReport:
        """Invoke the worker with ``messages`` (non-empty) and delete what succeeded."""
        report = BatchReport(
            message_ids=[m["MessageId"] for m in messages],
            bodies=[_parse(m["Body"]) for m in messages],
        )
        try:
            outcome = self.mapping.invoke_messages(messages)
        except Crash as exc:
            report.crashed, report.error = True, exc
            report.failed_ids = list(report.message_ids)
        else:
            report.error = outcome.exception
            report.failed_ids = outcome.retried
        self.reports.append(report)
        if report.failed_ids and self.on_failed is not None:
            self.on_failed(report)
        return report

    def poll(self) -> BatchReport | None:
        """One receive + invoke; None when nothing is visible (no empty batch is sent)."""
        messages = self.receive()
        return self.invoke(messages) if messages else None

    def poll_concurrently(self, invocations: int, batch_size: int = 1) -> list[BatchReport]:
        """Receive ``invocations`` batches first, then invoke them all at once in threads."""
        batches = [b for b in (self.receive(batch_size) for _ in range(invocations)) if b]
        reports: list[BatchReport] = [None] * len(batches)  # type: ignore[list-item]

        def run(i: int) -> None:
            reports[i] = self.invoke(batches[i])

        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(batches))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return reports

    def drain(self, max_batches: int = 1000) -> list[BatchReport]:
        """Poll until nothing is visible at the current simulated time."""
        reports = []
        for _ in range(max_batches):
            report = self.poll()
            if report is None:
                return reports
            reports.append(report)
        raise AssertionError("queue did not drain")

    # -- the schedules -----------------------------------------------------------------------

    def tick(self) -> None:
        """Run what is due now: the sweeper and the watchdog on their intervals, then drain."""
        now = self.clock.now()
        if self.sweeper is not None and now >= self.next_sweep_at:
            if not self.sweeper_down:
                self.sweeper()
            self.next_sweep_at = max(self.next_sweep_at + self.sweep_interval, now)
        if self.watchdog is not None and now >= self.next_watchdog_at:
            if not self.watchdog_down:
                self.watchdog()
            self.next_watchdog_at = max(self.next_watchdog_at + self.watchdog_interval, now)
        self.drain()

    def run_for(self, seconds: float, step: float = 1.0) -> None:
        """Advance ``seconds`` of simulated time in ``step``s, ticking at each."""
        self.run_until(self.clock.now() + timedelta(seconds=seconds), step)

    def run_until(self, instant: datetime, step: float = 1.0) -> None:
        """Tick, advance ``step``, repeat, until the simulated time reaches ``instant``."""
        while True:
            self.tick()
            if self.clock.now() >= instant:
                return
            remaining = (instant - self.clock.now()).total_seconds()
            self.clock.advance(min(step, remaining))

    # -- inspection --------------------------------------------------------------------------

    def dlq_bodies(self) -> list[dict[str, Any]]:
        """Bodies of the messages now in the dead-letter queue (received, then left there)."""
        response = self.aws.sqs.receive_message(
            QueueUrl=self.aws.settings.DISPATCH_DLQ_URL,
            MaxNumberOfMessages=10,
            VisibilityTimeout=0,
        )
        return [_parse(m["Body"]) for m in response.get("Messages", [])]
