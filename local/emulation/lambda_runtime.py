"""An in-process stand-in for one Lambda function: its context object and its environments.

Lambda runs one invocation at a time per execution environment, and the handlers rely on it
(module-level Powertools resolvers and batch processors keep per-invocation state). The local
stack calls handlers from several threads, so each function serialises its invocations: one
warm environment per function (``max_concurrency=1``). Tests that build their handlers per
invocation may allow more, to run invocations at once as Lambda's concurrency does.

The context's clock is ``time.monotonic`` unless one is given: tests pass a simulated clock,
so a handler's remaining time counts down on simulated time.

In Lambda each function has its own process; here all share one Powertools Logger, whose
``inject_lambda_context`` keys are process-wide (and ``clear_state=True`` also clears its
thread-local keys), so each invocation labels its thread's records itself: :class:`LogLabels`.
"""

from __future__ import annotations

import importlib
import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

#: Seconds on some monotonic scale (``time.monotonic`` or a simulated clock's seconds).
Seconds = Callable[[], float]

REGION = "us-east-1"
ACCOUNT = "123456789012"

Handler = Callable[[dict[str, Any], Any], Any]


class LogLabels(logging.Filter):
    """Sets each record's Lambda keys from the invocation running on its thread.

    The keys are those of Powertools' ``inject_lambda_context`` (``function_name``,
    ``function_arn``, ``function_request_id``, ``function_memory_size``, ``cold_start``) and
    ``correlation_id`` (the API Gateway request id, or none). Record attributes are written last
    by the Powertools formatter, so they win over its process-wide keys. Records logged outside
    an invocation pass unchanged.
    """

    _current = threading.local()

    @classmethod
    def set(cls, labels: dict[str, Any] | None) -> None:
        """Label this thread's records with ``labels`` (``None``: stop labelling)."""
        cls._current.labels = labels

    def filter(self, record: logging.LogRecord) -> bool:
        """Add the labels of this thread's invocation to ``record``; never drops it."""
        for name, value in (getattr(self._current, "labels", None) or {}).items():
            setattr(record, name, value)
        return True


_labels_installed = threading.Lock()


def install_log_labels() -> None:
    """Put one :class:`LogLabels` on the handlers' Powertools logger (idempotent)."""
    from scheduled_posts.observability import logger

    with _labels_installed:
        target = logging.getLogger(logger.service)
        if not any(isinstance(f, LogLabels) for f in target.filters):
            target.addFilter(LogLabels())


class LambdaContext:
    """The attributes and method of Lambda's Python context object that handlers use.

    ``get_remaining_time_in_millis()`` counts down from ``timeout_seconds`` since creation on
    ``clock`` (seconds, default ``time.monotonic``) (Lambda developer guide, "Using the Lambda
    context object to retrieve Python function information").
    """

    def __init__(
        self,
        function_name: str,
        timeout_seconds: float,
        memory_mb: int = 512,
        *,
        clock: Seconds = time.monotonic,
    ) -> None:
        self.function_name = function_name
        self.function_version = "$LATEST"
        self.invoked_function_arn = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{function_name}"
        self.memory_limit_in_mb = memory_mb
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{function_name}"
        self.log_stream_name = f"local/{self.aws_request_id}"
        self.identity = None
        self.client_context = None
        self._clock = clock
        self._deadline = clock() + timeout_seconds

    def get_remaining_time_in_millis(self) -> int:
        """Milliseconds left before the emulated timeout (never negative)."""
        return max(0, int((self._deadline - self._clock()) * 1000))


class LambdaFunction:
    """One function: ``functions.<name>.handler.lambda_handler``, imported on first use.

    Parameters
    ----------
    name:
        The folder under ``functions/`` (``api``, ``sweeper``, ``worker`` ...).
    timeout_seconds:
        The emulated timeout the context counts down from.
    handler:
        A handler to call instead of importing one (tests).
    clock:
        Seconds the context counts down on (default ``time.monotonic``).
    max_concurrency:
        Invocations that may run at once (1: one warm environment, what the local stack needs).
    label_logs:
        Label the handlers' log records with this invocation's Lambda keys (:class:`LogLabels`).
    function_name:
        The context's ``function_name`` (default ``scheduled-posts-<name>``).
    """

    def __init__(
        self,
        name: str,
        timeout_seconds: float,
        handler: Handler | None = None,
        *,
        clock: Seconds = time.monotonic,
        max_concurrency: int = 1,
        label_logs: bool = True,
        function_name: str | None = None,
    ) -> None:
        self.name = name
        self.timeout_seconds = timeout_seconds
        self.clock = clock
        self.label_logs = label_logs
        self.function_name = function_name or f"scheduled-posts-{name}"
        self._handler = handler
        self._slots = threading.BoundedSemaphore(max_concurrency)
        self._warm = False

    def handler(self) -> Handler:
        """The handler, imported on first use.

        Raises
        ------
        ImportError
            When ``functions/<name>/handler.py`` does not exist yet.
        """
        if self._handler is None:
            module = importlib.import_module(f"functions.{self.name}.handler")
            self._handler = module.lambda_handler
        return self._handler

    def context(self) -> LambdaContext:
        """A fresh context for one invocation of this function (its timeout, its clock)."""
        return LambdaContext(self.function_name, self.timeout_seconds, clock=self.clock)

    def invoke(self, event: dict[str, Any]) -> tuple[Any, LambdaContext]:
        """Call the handler with ``event`` and a fresh context; at most ``max_concurrency`` at
        a time.

        Returns the handler's result and the context (whose remaining time tells whether the
        invocation overran its timeout). Exceptions from the handler propagate.
        """
        handler = self.handler()
        if not self.label_logs:
            with self._slots:
                context = self.context()
                return handler(event, context), context
        install_log_labels()
        with self._slots:
            context = self.context()
            request = event.get("requestContext") if isinstance(event, dict) else None
            LogLabels.set(
                {
                    "function_name": context.function_name,
                    "function_memory_size": context.memory_limit_in_mb,
                    "function_arn": context.invoked_function_arn,
                    "function_request_id": context.aws_request_id,
                    "cold_start": not self._warm,
                    "correlation_id": (
                        request.get("requestId") if isinstance(request, dict) else None
                    ),
                }
            )
            self._warm = True
            try:
                return handler(event, context), context
            finally:
                LogLabels.set(None)


def is_available(name: str) -> bool:
    """True when ``functions/<name>/handler.py`` can be imported."""
    try:
        importlib.import_module(f"functions.{name}.handler")
    except ModuleNotFoundError as exc:
        if exc.name in {f"functions.{name}.handler", f"functions.{name}"}:
            return False
        raise
    return True
