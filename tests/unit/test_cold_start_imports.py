"""What a cold start imports: with POWERTOOLS_TRACE_DISABLED no Tracer and no X-Ray SDK; heavy
modules only where they are used."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scheduled_posts.observability import NoTracer, tracing_enabled

_PROBE = (
    "import sys, scheduled_posts.observability as o; "
    "print(type(o.tracer).__name__, any(m.startswith('aws_xray_sdk') for m in sys.modules))"
)


def _probe(trace_disabled: str | None, code: str = _PROBE) -> str:
    env = {k: v for k, v in os.environ.items() if k != "POWERTOOLS_TRACE_DISABLED"}
    if trace_disabled is not None:
        env["POWERTOOLS_TRACE_DISABLED"] = trace_disabled
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # pytest's pythonpath
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip()


def test_tracing_off_builds_no_tracer_and_never_imports_the_xray_sdk() -> None:
    assert _probe("true") == "NoTracer False"


def test_tracing_on_by_default_is_powertools_tracer() -> None:
    assert _probe(None) == "Tracer True"


@pytest.mark.parametrize(
    ("value", "enabled"), [("true", False), ("1", False), ("FALSE", True), ("0", True)]
)
def test_tracing_enabled_reads_powertools_truth_rule(value: str, enabled: bool) -> None:
    assert tracing_enabled({"POWERTOOLS_TRACE_DISABLED": value}) is enabled
    assert tracing_enabled({}) is True


def test_no_tracer_decorators_return_the_function_in_every_call_form() -> None:
    tracer = NoTracer()

    def step(x: int) -> int:
        return x + 1

    assert tracer.capture_method(step) is step
    assert tracer.capture_method(capture_response=False)(step) is step
    assert tracer.capture_lambda_handler(step) is step
    assert tracer.capture_lambda_handler(capture_error=False)(step) is step


def test_credentials_module_loads_cryptography_only_when_it_seals_or_opens() -> None:
    code = (
        "import sys, scheduled_posts.data.credentials; "
        "print(any(m.startswith('cryptography') for m in sys.modules))"
    )
    assert _probe("true", code) == "False"


_HANDLERS = sorted(p.parent.name for p in Path(__file__).parents[2].glob("functions/*/handler.py"))


@pytest.mark.parametrize("name", _HANDLERS)
def test_handler_import_with_tracing_off_never_imports_the_xray_sdk(name: str) -> None:
    code = (
        f"import sys, functions.{name}.handler; "
        "print(any(m.startswith('aws_xray_sdk') for m in sys.modules))"
    )
    assert _probe("true", code) == "False"


@pytest.mark.parametrize("name", ["worker", "reconciler", "watchdog"])
def test_dispatch_handlers_load_network_modules_only_when_they_deliver_to_a_network(
    name: str,
) -> None:
    # record_refusal (a network's refusal) and the platform registry (a post with media) are
    # imported where they are used; the watchdog and reconciler no longer import the publisher
    heavy = ("scheduled_posts.logic.network_delivery", "scheduled_posts.platforms.registry")
    code = (
        f"import sys, functions.{name}.handler; print([m for m in {heavy!r} if m in sys.modules])"
    )
    assert _probe("true", code) == "[]"
