"""The local stack's start and stop: a busy port is one clear line; stop after a failed start."""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Iterator

import pytest

from local.config import LocalConfig
from local.emulation.lambda_runtime import LambdaFunction
from local.emulation.runner import free_port
from local.emulation.sqs import SqsPoller
from local.http_front import ApiFront, JwtChecker
from local.schedulers import Schedule
from local.stack import LocalStack, PortInUseError


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def test_start_with_api_port_busy_names_api_port_before_starting_aws(busy_port: int) -> None:
    stack = LocalStack(LocalConfig(api_port=busy_port, aws_port=free_port()))

    with pytest.raises(PortInUseError, match=f"API_PORT={busy_port}"):
        stack.start()

    assert stack.aws is None


def test_start_with_worker_sizing_breaking_deployed_rules_refused_before_starting_aws(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The old local defaults: 60 s is shorter than 2 x 10 posts x 12 s.
    monkeypatch.setattr(os, "environ", {**os.environ})
    stack = LocalStack(
        LocalConfig(api_port=free_port(), worker_timeout_seconds=60, worker_batch_size=10)
    )

    with pytest.raises(ValueError, match="WORKER_TIMEOUT_SECONDS"):
        stack.start()

    assert stack.aws is None


def test_run_with_api_port_busy_logs_one_line_without_traceback(
    busy_port: int, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("signal.signal", lambda *_: None)
    stack = LocalStack(LocalConfig(api_port=busy_port, aws_port=free_port()))

    with caplog.at_level(logging.INFO):
        code = stack.run()

    assert code == 1
    errors = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(errors) == 1
    assert "API_PORT" in errors[0].getMessage()
    assert errors[0].exc_info is None


def test_stop_when_nothing_was_started_returns() -> None:
    stack = LocalStack(LocalConfig(aws_port=free_port()))
    function = LambdaFunction("idle", 1, handler=lambda event, context: None)
    stack.schedules.append(Schedule(function, 60, stop_event=stack.stop_event))
    stack.pollers.append(
        SqsPoller(
            object(),
            queue_url="http://127.0.0.1/q",
            queue_arn="arn:aws:sqs:us-east-1:123456789012:q",
            function=function,
            stop_event=stack.stop_event,
        )
    )
    stack.front = ApiFront(function, JwtChecker("secret"), host="127.0.0.1", port=0)
    outcome: list[BaseException | None] = []

    def stop() -> None:
        try:
            stack.stop()
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    stopper = threading.Thread(target=stop, daemon=True)  # a hang must not hang the suite
    stopper.start()
    stopper.join(timeout=10)

    assert outcome == [None]


def test_receiver_with_receiver_port_busy_prints_one_line(
    busy_port: int, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from local.__main__ import main

    monkeypatch.setattr("signal.signal", lambda *_: None)
    monkeypatch.setenv("RECEIVER_PORT", str(busy_port))

    code = main(["receiver"])

    assert code == 1
    assert capsys.readouterr().err.splitlines() == [
        f"RECEIVER_PORT={busy_port}: 127.0.0.1:{busy_port} is in use"
    ]
