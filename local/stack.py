"""``make run``: the whole service on the embedded AWS, until Ctrl-C or SIGTERM.

Order of start: the embedded AWS (reused when already listening), the missing tables and
queues, the environment the handlers read (the same names as the deployed Lambdas'), the
schedules (`local.schedulers.scheduled_functions`), the SQS pollers (worker, notifier,
importer), the relay on the posts table's stream, and last the HTTP front; then one line,
``API ready at http://127.0.0.1:<port>``. Stop runs in reverse, each thread bounded, so the
whole stack is down within a few seconds.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import signal
import socket
import threading
import time
import warnings
from collections import OrderedDict
from typing import Any

import boto3

from local import metrics_sink
from local.config import LocalConfig, apply_service_defaults, page_origins
from local.embedded_aws import (
    EmbeddedAws,
    apply_client_environment,
    ensure_import_queues,
    ensure_media_bucket,
    ensure_notify_queues,
    ensure_resources,
    ensure_server,
    quiet_request_logs,
)
from local.emulation.environments import ProcessFunction
from local.emulation.lambda_runtime import LambdaFunction, is_available
from local.emulation.resources import ensure_event_bus
from local.emulation.sqs import BatchOutcome, SqsPoller
from local.emulation.streams import StreamLoop, StreamPoller, stream_arn, streams_client
from local.http_front import ApiFront, JwtChecker
from local.pollers import queue_pollers
from local.schedulers import Schedule, scheduled_functions
from scheduled_posts import sizing
from scheduled_posts.clock import format_instant
from scheduled_posts.data.posts import PostRepository
from scheduled_posts.settings import Settings

log = logging.getLogger("local.stack")

#: Post statuses after which a publish is logged (the worker has finished the post).
_FINISHED = {"published", "partially_published", "failed", "missed"}


class PublishLog:
    """Logs each finished post once, with its lag, after the worker batch that finished it.

    Reads each post of the batch through the data layer (:class:`PostRepository`); remembers
    the last 10,000 logged ids so a post is logged once, also when batches settle on several
    threads at once.
    """

    def __init__(self, posts: PostRepository) -> None:
        self.posts = posts
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, records: list[dict[str, Any]], outcome: BatchOutcome) -> None:
        ids: list[str] = []
        for record in records:
            try:
                ids.append(str(json.loads(record["body"])["schedule_id"]))
            except (ValueError, KeyError, TypeError):
                continue
        for schedule_id in dict.fromkeys(ids):
            with self._lock:
                if schedule_id in self._seen:
                    continue
            try:
                post = self.posts.get(schedule_id)
            except Exception:
                log.debug("could not read post %s", schedule_id, exc_info=True)
                continue
            if post is None or post.status.value not in _FINISHED:
                continue
            with self._lock:
                if schedule_id in self._seen:
                    continue
                self._seen[schedule_id] = None
                if len(self._seen) > 10_000:
                    self._seen.popitem(last=False)
            lag = post.publish_lag_seconds
            log.info(
                "%s schedule_id=%s publish_at=%s lag=%s channels=%s",
                post.status.value,
                schedule_id,
                format_instant(post.publish_at),
                f"{lag:.3f}s" if lag is not None else "-",
                ",".join(f"{c}:{d.status.value}" for c, d in post.deliveries.items()),
            )


class PortInUseError(RuntimeError):
    """A port the stack must bind is taken; the message names its variable (``API_PORT``)."""


def ensure_port_free(variable: str, port: int, host: str = "127.0.0.1") -> None:
    """Raise :class:`PortInUseError` naming ``variable`` when ``host:port`` cannot be bound.

    Binds with ``SO_REUSEADDR``, as the HTTP front does, so only a port someone listens on (or
    holds bound) counts as taken.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno not in (errno.EADDRINUSE, errno.EACCES):
                raise
            state = "in use" if exc.errno == errno.EADDRINUSE else "not allowed"
            raise PortInUseError(
                f"{variable}={port}: {host}:{port} is {state}; stop what holds it or choose "
                f"another, e.g. {variable}={port + 1} make run"
            ) from None


#: The relay's timeout in the local stack (the CDK app's is ``infra/outbox.py``'s, also 60 s).
RELAY_TIMEOUT_SECONDS = 60


class LocalStack:
    """The running stack; :meth:`start` then :meth:`stop` (or :meth:`run` for both)."""

    def __init__(self, config: LocalConfig) -> None:
        self.config = config
        self.stop_event = threading.Event()
        self.aws: EmbeddedAws | None = None
        self.front: ApiFront | None = None
        self.schedules: list[Schedule] = []
        self.pollers: list[SqsPoller] = []
        #: The worker's execution environments (processes), stopped last.
        self.environments: list[ProcessFunction] = []
        self.stream_loops: list[StreamLoop] = []
        self.settings: Settings | None = None

    def start(self) -> str:
        """Start everything; returns the API's base URL.

        Raises
        ------
        PortInUseError
            When ``API_PORT`` is taken (checked before anything starts).
        RuntimeError
            When the embedded AWS cannot be started or reused.
        pydantic.ValidationError
            When a service setting in the environment is out of range.
        ValueError
            When the worker's timeout, batch size, ``DELIVERY_TIMEOUT_SECONDS`` and
            ``LEASE_SECONDS`` break the deployed sizing rules (:mod:`scheduled_posts.sizing`).
        """
        config = self.config
        ensure_port_free("API_PORT", config.api_port)
        apply_service_defaults(os.environ, config)
        early = Settings.from_env()  # fail early on a bad value, before starting anything
        errors = sizing.worker_sizing_errors(
            config.worker_timeout_seconds, config.worker_batch_size, early
        )
        if errors:
            raise ValueError(
                "the worker's sizing breaks the deployed rules (WORKER_TIMEOUT_SECONDS,"
                " WORKER_BATCH_SIZE, DELIVERY_TIMEOUT_SECONDS, LEASE_SECONDS): " + "; ".join(errors)
            )
        self.aws = ensure_server(config.aws_port)
        apply_client_environment(config.aws_port)
        base = Settings.from_env()
        queues = ensure_resources(
            config.aws_port,
            {
                "POSTS_TABLE_NAME": base.POSTS_TABLE_NAME,
                "DUE_INDEX_TABLE_NAME": base.DUE_INDEX_TABLE_NAME,
                "IDEMPOTENCY_TABLE_NAME": base.IDEMPOTENCY_TABLE_NAME,
            },
            max_receive_count=base.MAX_RECEIVE_COUNT,
            worker_timeout_seconds=config.worker_timeout_seconds,
        )
        os.environ.update(queues)
        os.environ.update(
            ensure_notify_queues(
                config.aws_port,
                max_attempts=base.NOTIFY_MAX_ATTEMPTS,
                notifier_timeout_seconds=sizing.DEFAULT_NOTIFIER_TIMEOUT_SECONDS,
            )
        )
        os.environ.update(
            ensure_import_queues(
                config.aws_port, importer_timeout_seconds=sizing.DEFAULT_IMPORTER_TIMEOUT_SECONDS
            )
        )
        os.environ["POSTS_TABLE_NAME"] = base.POSTS_TABLE_NAME
        os.environ["DUE_INDEX_TABLE_NAME"] = base.DUE_INDEX_TABLE_NAME
        os.environ["IDEMPOTENCY_TABLE_NAME"] = base.IDEMPOTENCY_TABLE_NAME
        # The page is served on the API's origin (local/static_site.py): CORS allows it alone.
        os.environ.update(
            ensure_media_bucket(
                config.aws_port, base.MEDIA_BUCKET_NAME, origins=page_origins(config)
            )
        )
        self.settings = settings = Settings.from_env()

        for name, interval in scheduled_functions(settings):
            if not is_available(name):
                log.warning("functions/%s/handler.py not found: its schedule is off", name)
                continue
            function = LambdaFunction(name, config.scheduled_timeout_seconds)
            self.schedules.append(Schedule(function, interval, stop_event=self.stop_event))

        if is_available("worker"):
            sqs = boto3.client("sqs")
            # One event source mapping per dispatch queue, as deployed (one unless
            # DISPATCH_QUEUE_URLS names several).
            for queue_url in settings.dispatch_queue_urls:
                self.pollers.append(self._worker_poller(sqs, queue_url, settings))
        else:
            log.warning("functions/worker/handler.py not found: nothing will be published")

        if is_available("relay"):
            self.stream_loops.append(self._relay_loop(settings))
        self.pollers.extend(queue_pollers(settings, config, self.stop_event))

        api = self._api_function()
        self.front = ApiFront(
            api,
            JwtChecker(config.jwt_secret, config.jwt_issuer, config.jwt_audience),
            host="127.0.0.1",
            port=config.api_port,
            # The page posts media uploads to the embedded AWS (the pre-signed form's URL).
            connect_sources=(f"http://127.0.0.1:{config.aws_port}",),
        )
        for schedule in self.schedules:
            log.info("%s every %s s", schedule.function.name, schedule.interval_seconds)
            schedule.start()
        for poller in self.pollers:
            poller.start()
        for loop in self.stream_loops:
            loop.start()
        self.front.start()
        return f"http://127.0.0.1:{self.front.port}"

    def _relay_loop(self, settings: Settings) -> StreamLoop:
        """The outbox relay on the posts table's stream (moto has no stream trigger: polled
        every second, like the event source mapping), after creating the event bus."""
        ensure_event_bus(boto3.client("events"), settings.EVENT_BUS_NAME)
        function = LambdaFunction("relay", RELAY_TIMEOUT_SECONDS)
        poller = StreamPoller(
            streams_client(),
            stream_arn(boto3.client("dynamodb"), settings.POSTS_TABLE_NAME),
            lambda event, _context: function.invoke(event)[0],
            function.context,
        )
        return StreamLoop(poller, interval_seconds=1.0, stop_event=self.stop_event)

    def _api_function(self) -> LambdaFunction | ProcessFunction:
        """The API: ``API_CONCURRENCY`` processes (concurrent requests, each in an environment
        of its own, see "Concurrent API requests in their own processes" in docs/decisions.md),
        or the stack's own process when it is 1; the handler is imported before the first
        request."""
        config = self.config
        if not is_available("api"):
            log.warning("functions/api/handler.py not found: every request will fail")
            return LambdaFunction("api", config.api_timeout_seconds)
        if config.api_concurrency == 1:
            api = LambdaFunction("api", config.api_timeout_seconds)
            api.handler()  # import now: the first request should not pay for it
            return api
        function = ProcessFunction("api", config.api_timeout_seconds, config.api_concurrency)
        function.start()
        self.environments.append(function)
        return function

    def _worker_function(self) -> LambdaFunction | ProcessFunction:
        """The worker for one mapping: ``MAPPING_CONCURRENCY`` processes (each its own execution
        environment, see "Concurrent worker batches in their own processes" in
        docs/decisions.md), or the stack's own process when it is 1."""
        config = self.config
        if config.mapping_concurrency == 1:
            return LambdaFunction("worker", config.worker_timeout_seconds)
        function = ProcessFunction(
            "worker", config.worker_timeout_seconds, config.mapping_concurrency
        )
        function.start()
        self.environments.append(function)
        return function

    def _worker_poller(self, sqs: Any, queue_url: str, settings: Settings) -> SqsPoller:
        """The worker's event source mapping on one dispatch queue (``MAPPING_CONCURRENCY``
        batches in flight at once)."""
        config = self.config
        arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
        return SqsPoller(
            sqs,
            queue_url=queue_url,
            queue_arn=arn,
            function=self._worker_function(),
            concurrency=config.mapping_concurrency,
            batch_size=config.worker_batch_size,
            wait_seconds=config.poll_wait_seconds,
            poll_interval_seconds=config.poll_interval_seconds or None,
            stop_event=self.stop_event,
            on_batch=PublishLog(
                PostRepository(
                    posts_table_name=settings.POSTS_TABLE_NAME,
                    due_table_name=settings.DUE_INDEX_TABLE_NAME,
                )
            ),
        )

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the HTTP front, the schedules and the poller, then the embedded AWS if ours.

        Safe after a start that failed halfway (threads never started are skipped)."""
        self.stop_event.set()
        if self.front is not None:
            self.front.stop()
        deadline = time.monotonic() + timeout
        for poller in self.pollers:
            poller.join(max(0.0, deadline - time.monotonic()))
        for loop in self.stream_loops:
            loop.join(max(0.0, deadline - time.monotonic()))
        for schedule in self.schedules:
            schedule.join(max(0.0, deadline - time.monotonic()))
        for environments in self.environments:
            environments.stop()
        if self.aws is not None:
            self.aws.stop()

    def run(self) -> int:
        """Start, print the ready line, wait for SIGINT/SIGTERM, stop. Returns the exit code."""
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_: self.stop_event.set())
        try:
            url = self.start()
        except Exception as exc:
            log.error("the local stack did not start: %s", exc)
            self.stop()
            return 1
        print(f"API ready at {url}", flush=True)
        self.stop_event.wait()
        log.info("stopping")
        self.stop()
        from scheduled_posts.observability import metrics

        counted = metrics_sink.summary(metrics)  # one line, never the values themselves
        log.info("stopped" + (f" ({counted})" if counted else ""))
        return 0


def configure_logging() -> None:
    """Plain one-line logs on stderr for the local stack (``LOCAL_LOG_LEVEL``, INFO); werkzeug
    and moto at ERROR; the handlers' JSON logs once each, at ``POWERTOOLS_LOG_LEVEL``; the
    handlers' metrics counted, not printed (:mod:`local.metrics_sink`), while they are disabled.

    The handlers' Powertools Logger keeps a root handler from printing its records a second
    time only for root handlers that existed when it was created, and it reads its level when
    created: both are set again here, after ``apply_service_defaults``.
    """
    from scheduled_posts.observability import logger as handler_logger

    logging.basicConfig(
        level=os.environ.get("LOCAL_LOG_LEVEL", "INFO").upper(),
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
    )
    quiet_request_logs()
    handler_logger.setLevel(os.environ.get("POWERTOOLS_LOG_LEVEL") or "WARNING")
    logging.getLogger(handler_logger.service).propagate = False
    # Metrics are off locally (POWERTOOLS_METRICS_DISABLED); Powertools still warns per flush.
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    # ... and would still print every metric's values at its 100th: count them instead.
    from scheduled_posts.observability import metrics

    metrics_sink.install(metrics)
