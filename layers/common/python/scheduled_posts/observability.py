"""Logger, Tracer and Metrics, created once for every handler (Powertools).

``POWERTOOLS_SERVICE_NAME`` and ``POWERTOOLS_METRICS_NAMESPACE`` come from the environment (the
CDK app sets them); the defaults below serve tests and the local stack. Tracer disables itself
outside Lambda.
"""

from __future__ import annotations

import os

from aws_lambda_powertools import Logger, Metrics, Tracer

SERVICE = os.environ.get("POWERTOOLS_SERVICE_NAME", "scheduled-posts")
NAMESPACE = os.environ.get("POWERTOOLS_METRICS_NAMESPACE", "ScheduledPosts")

logger = Logger(service=SERVICE)
tracer = Tracer(service=SERVICE)
metrics = Metrics(namespace=NAMESPACE, service=SERVICE)
