"""`make run` logs: each handler line once, at POWERTOOLS_LOG_LEVEL, labelled by its function."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aws_lambda_powertools.logging import correlation_paths

from local.emulation.lambda_runtime import LambdaFunction
from scheduled_posts.observability import logger

ROOT = Path(__file__).resolve().parents[2]

# The handlers' Logger exists before `make run` applies its defaults (any import creates it).
RUN_LOGGING = """
import scheduled_posts.observability as o
from local.__main__ import prepare_run
from local.config import LocalConfig
prepare_run(LocalConfig.from_env())
o.logger.info("handler-info-line")
o.logger.warning("handler-warning-line")
"""


def _run_logging(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "POWERTOOLS_"))}
    clean.update(PYTHONPATH=f"{ROOT / 'layers' / 'common' / 'python'}{os.pathsep}{ROOT}", **env)
    done = subprocess.run(
        [sys.executable, "-c", RUN_LOGGING],
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def default_output() -> str:
    return _run_logging()


def test_run_logging_prints_a_handler_warning_once(default_output: str) -> None:
    assert default_output.count("handler-warning-line") == 1


def test_run_logging_hides_handler_info_at_the_default_warning_level(default_output: str) -> None:
    assert "handler-info-line" not in default_output


def test_run_logging_honours_powertools_log_level() -> None:
    output = _run_logging(POWERTOOLS_LOG_LEVEL="INFO")

    assert output.count("handler-info-line") == 1


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    """The handlers' JSON log lines (the Powertools formatter), at INFO, for this test."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logger.registered_formatter)
    std = logging.getLogger(logger.service)
    level = std.level
    std.addHandler(handler)
    std.setLevel(logging.INFO)
    yield stream
    std.removeHandler(handler)
    std.setLevel(level)


def test_concurrent_functions_label_their_own_log_lines(json_lines: io.StringIO) -> None:
    sweeper_entered = threading.Event()
    api_done = threading.Event()

    @logger.inject_lambda_context(clear_state=True)  # as the scheduled handlers do
    def sweeper(event: dict[str, Any], context: Any) -> None:
        sweeper_entered.set()
        api_done.wait(timeout=10)  # the API's invocation runs in between
        logger.info("swept")

    @logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
    def api(event: dict[str, Any], context: Any) -> None:
        logger.info("answered")
        api_done.set()

    thread = threading.Thread(
        target=LambdaFunction("sweeper", 60, handler=sweeper).invoke, args=({},)
    )
    thread.start()
    sweeper_entered.wait(timeout=10)
    threading.Thread(
        target=LambdaFunction("api", 29, handler=api).invoke,
        args=({"requestContext": {"requestId": "req-1"}},),
    ).start()
    thread.join(timeout=10)

    lines = {line["message"]: line for line in map(json.loads, json_lines.getvalue().splitlines())}
    assert lines["swept"]["function_name"] == "scheduled-posts-sweeper"
    assert "correlation_id" not in lines["swept"]
    assert lines["answered"]["function_name"] == "scheduled-posts-api"
    assert lines["answered"]["correlation_id"] == "req-1"


# `make run`'s handlers add metrics for hours; with metrics disabled, Powertools keeps every value
# and prints the whole set as one JSON line when a metric reaches 100 values.
RUN_METRICS = """
import scheduled_posts.observability as o
from local.__main__ import prepare_run
from local.config import LocalConfig
from local import metrics_sink
prepare_run(LocalConfig.from_env())

@o.metrics.log_metrics
def handler(event, context):
    for _ in range(150):
        o.metrics.add_metric(name="Published", unit="Count", value=1)

for _ in range(3):
    handler({}, None)
print(metrics_sink.summary(o.metrics))
"""


def test_run_metrics_print_no_emf_line_only_a_summary() -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "POWERTOOLS_"))}
    clean.update(PYTHONPATH=f"{ROOT / 'layers' / 'common' / 'python'}{os.pathsep}{ROOT}")

    done = subprocess.run(
        [sys.executable, "-c", RUN_METRICS],
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )

    assert "_aws" not in done.stdout + done.stderr
    assert done.stdout.strip() == (
        "metrics not published locally: 450 values of 1 metric (values per metric: Published 450)"
    )


def test_counting_metrics_provider_still_refuses_a_wrong_unit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from aws_lambda_powertools import Metrics
    from aws_lambda_powertools.metrics.exceptions import MetricUnitError

    from local import metrics_sink

    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    metrics = Metrics(namespace="Test", service="test")
    metrics_sink.install(metrics)

    with pytest.raises(MetricUnitError):
        metrics.add_metric(name="Published", unit="Parsecs", value=1)


def test_metrics_sink_leaves_enabled_metrics_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    from aws_lambda_powertools import Metrics

    from local import metrics_sink

    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    metrics = Metrics(namespace="Test", service="test")

    assert (metrics_sink.install(metrics), metrics_sink.summary(metrics)) == (None, None)
