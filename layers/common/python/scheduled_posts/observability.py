"""Logger, Tracer and Metrics, created once for every handler (Powertools).

``POWERTOOLS_SERVICE_NAME`` and ``POWERTOOLS_METRICS_NAMESPACE`` come from the environment (the
CDK app sets them); the defaults below serve tests and the local stack.

``tracer`` is Powertools' Tracer only when tracing is on: ``POWERTOOLS_TRACE_DISABLED`` unset
or false (Powertools' own switch, read with its own truth rule; the CDK app sets it per stage
from ``tracing_enabled``, beside the function's X-Ray tracing mode). Otherwise it is
:class:`NoTracer`, whose decorators return the function unchanged, so a cold start with tracing
off never imports the X-Ray SDK (creating a Powertools Tracer imports it even when disabled:
about 105 ms, ``bench/cold_start.py``). See "Tracing off unless a stage turns it on" in
docs/decisions.md.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.shared.functions import strtobool

SERVICE = os.environ.get("POWERTOOLS_SERVICE_NAME", "scheduled-posts")
NAMESPACE = os.environ.get("POWERTOOLS_METRICS_NAMESPACE", "ScheduledPosts")


def tracing_enabled(environ: Mapping[str, str] = os.environ) -> bool:
    """False when ``POWERTOOLS_TRACE_DISABLED`` is a true value (``1``, ``true``, ``yes``,
    ``on``, any case: Powertools' ``strtobool``); True when it is unset or false.

    Raises
    ------
    ValueError
        When the value is neither true nor false (as Powertools' Tracer would).
    """
    return not strtobool(environ.get("POWERTOOLS_TRACE_DISABLED", "false"))


class NoTracer:
    """The Tracer's decorators with tracing off: each returns what it decorates, unchanged.

    Accepts the same call forms as Powertools' ``Tracer.capture_method`` and
    ``capture_lambda_handler`` (bare, or called with ``capture_response``/``capture_error``).
    """

    def capture_method(self, method: Callable[..., Any] | None = None, **_options: Any) -> Any:
        """``method`` itself (or a decorator returning its argument, when called with options)."""
        return method if method is not None else (lambda function: function)

    def capture_lambda_handler(
        self, lambda_handler: Callable[..., Any] | None = None, **_options: Any
    ) -> Any:
        """``lambda_handler`` itself (or a decorator returning its argument)."""
        return lambda_handler if lambda_handler is not None else (lambda function: function)

    def put_annotation(self, key: str, value: Any) -> None:
        """Nothing (no segment to annotate)."""

    def put_metadata(self, key: str, value: Any, namespace: str | None = None) -> None:
        """Nothing (no segment to attach metadata to)."""


logger = Logger(service=SERVICE)
tracer: Tracer | NoTracer = Tracer(service=SERVICE) if tracing_enabled() else NoTracer()
metrics = Metrics(namespace=NAMESPACE, service=SERVICE)
