"""Test-wide safety: fake AWS credentials, no real endpoint, Powertools quiet, TZ irrelevant."""

from __future__ import annotations

import os

# Set before any boto3 client exists. Tests never reach real AWS.
for _name, _value in {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SECURITY_TOKEN": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "POWERTOOLS_TRACE_DISABLED": "true",
    "POWERTOOLS_METRICS_NAMESPACE": "ScheduledPostsTest",
    "POWERTOOLS_LOG_LEVEL": "WARNING",
    "POWERTOOLS_DEV": "false",
}.items():
    os.environ[_name] = _value
os.environ.pop("AWS_ENDPOINT_URL", None)
os.environ.pop("AWS_PROFILE", None)

pytest_plugins = ["tests.support.fixtures"]
