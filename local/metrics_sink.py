"""Metrics in the local stack: checked like CloudWatch EMF's, counted, never printed.

Metrics are off locally (``POWERTOOLS_METRICS_DISABLED``), but Powertools 3's EMF provider then
neither prints nor clears them at each flush: every value stays in memory, and when one metric
reaches 100 values (the EMF limit per metric) its ``add_metric`` prints the whole set as one
JSON line anyway, disabled or not. A long ``make run`` so wrote huge ``{"_aws": ...}`` lines
into the terminal (one often shown at Ctrl-C, when a piped stdout is flushed). Here the handlers'
``Metrics`` gets a provider that validates each value as the EMF provider does (name, unit,
number), counts it and drops it; :func:`summary` is the one line ``make run`` logs at stop.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.metrics.functions import is_metrics_disabled
from aws_lambda_powertools.metrics.provider.cloudwatch_emf.cloudwatch import (
    AmazonCloudWatchEMFProvider,
)


class CountingMetricsProvider(AmazonCloudWatchEMFProvider):
    """An EMF provider with its own sets that keeps only a count per metric name.

    ``add_metric`` raises what the EMF provider raises (``MetricUnitError``,
    ``MetricValueError``, ...), so a wrong metric still fails locally; nothing is printed.
    Thread-safe: the local stack's functions share one provider.
    """

    def __init__(self, namespace: str | None, service: str | None) -> None:
        super().__init__(
            metric_set={},
            dimension_set={},
            metadata_set={},
            default_dimensions={},
            namespace=namespace,
            service=service,
        )
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def add_metric(self, name: str, unit: Any, value: float, resolution: Any = 60) -> None:
        """Validate one value as the EMF provider does, count it, drop it."""
        with self._lock:
            super().add_metric(name=name, unit=unit, value=value, resolution=resolution)
            self.metric_set.clear()  # never 100 values: the EMF provider prints at 100
            self.counts[name.strip()] += 1

    def flush_metrics(self, raise_on_empty_metrics: bool = False) -> None:
        """End of an invocation: forget its dimensions and metadata; print nothing."""
        with self._lock:
            self.clear_metrics()


def install(metrics: Metrics) -> CountingMetricsProvider | None:
    """Give ``metrics`` a :class:`CountingMetricsProvider` when metrics are disabled (as the
    local stack sets them); returns it, or ``None`` when metrics are on (then they print EMF
    as in Lambda). Call it before the handlers are imported: ``@metrics.log_metrics`` binds
    the provider it finds when it decorates."""
    if not is_metrics_disabled():
        return None
    provider = metrics.provider
    if isinstance(provider, CountingMetricsProvider):
        return provider
    counting = CountingMetricsProvider(namespace=provider.namespace, service=provider.service)
    metrics.provider = counting
    return counting


def summary(metrics: Metrics) -> str | None:
    """``metrics not published locally: 1,234 values of 9 metrics (values per metric:
    Published 1,200, ...)``: each metric's name with how many values it got, most first (a
    value may be 0; so a run shows, e.g., that the verifier counted a ``VerificationFindings``),
    or ``None`` when nothing was counted (or metrics are on)."""
    provider = metrics.provider
    if not isinstance(provider, CountingMetricsProvider) or not provider.counts:
        return None
    values, names = sum(provider.counts.values()), len(provider.counts)
    each = ", ".join(f"{name} {count:,}" for name, count in provider.counts.most_common())
    return (
        f"metrics not published locally: {values:,} value{'s' * (values != 1)}"
        f" of {names} metric{'s' * (names != 1)} (values per metric: {each})"
    )
