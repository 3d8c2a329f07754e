"""The local stack in subprocesses: the embedded AWS and ``python -m local run``, on free ports.

Used by the end-to-end test (``tests/e2e``) and the lag benchmark (``bench/local_lag.py``):
start an embedded AWS (``python -m local aws``, or any module that serves moto the same way),
then one or more stacks against it (each reuses that AWS, so the stack can be restarted while
the AWS keeps its state), wait for the ready line, and stop each with SIGTERM. Every wait is
bounded.
"""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from local.embedded_aws import is_moto

#: The repository root (``local/emulation/`` is two levels below it).
ROOT = Path(__file__).resolve().parents[2]
#: The line ``python -m local run`` prints once it serves requests.
READY_PREFIX = "API ready at "


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stack_environment(jwt_secret: str, **extra: str) -> dict[str, str]:
    """This process's environment without ``AWS_*`` and ``POWERTOOLS_*`` variables, plus the
    repository on ``PYTHONPATH``, ``LOCAL_JWT_SECRET`` and ``extra`` (setting names to values)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "POWERTOOLS_"))}
    env.update(
        PYTHONPATH=f"{ROOT / 'layers' / 'common' / 'python'}{os.pathsep}{ROOT}",
        LOCAL_JWT_SECRET=jwt_secret,
        **extra,
    )
    return env


def stop_process(process: subprocess.Popen[str] | subprocess.Popen[bytes], timeout: float) -> None:
    """SIGTERM, wait up to ``timeout`` seconds, then SIGKILL (nothing when it has exited)."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)


class AwsProcess:
    """An embedded AWS in a child process on ``port`` (``python -m <module...> --port N``).

    Raises
    ------
    RuntimeError
        From :meth:`wait_ready`, when it exits or does not answer as moto within the timeout.
    """

    def __init__(
        self, port: int, env: dict[str, str], module: Sequence[str] = ("local", "aws")
    ) -> None:
        self.port = port
        self.process = subprocess.Popen(
            [sys.executable, "-m", *module, "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def wait_ready(self, timeout: float) -> None:
        """Return once moto answers on the port (see the class's Raises)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the embedded AWS exited with code {self.process.returncode}")
            if is_moto(self.port):
                return
            time.sleep(0.2)
        self.stop(5.0)
        raise RuntimeError(f"the embedded AWS did not start on port {self.port}")

    def stop(self, timeout: float) -> None:
        """Stop it (its in-memory state is lost)."""
        stop_process(self.process, timeout)


class StackProcess:
    """``python -m local run`` in a subprocess; its stdout and stderr lines are collected
    (``output``) by a thread."""

    def __init__(self, env: dict[str, str]) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.output: list[str] = []
        self.process = subprocess.Popen(
            [sys.executable, "-m", "local", "run"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line.rstrip())
            self.lines.put(line.rstrip())

    def wait_ready(self, timeout: float) -> str:
        """The API's base URL, once the ready line is printed.

        Raises
        ------
        RuntimeError
            When the stack exits or prints no ready line within ``timeout`` seconds (it is
            stopped; the message ends with its last 40 lines).
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.5)
            except queue.Empty:
                if self.process.poll() is not None:
                    break
                continue
            if line.startswith(READY_PREFIX):
                return line.removeprefix(READY_PREFIX)
        self.stop(10.0)
        raise RuntimeError("the local stack did not start:\n" + "\n".join(self.output[-40:]))

    def stop(self, timeout: float) -> float:
        """SIGTERM, then wait (SIGKILL after ``timeout``); returns the seconds it took."""
        started = time.monotonic()
        stop_process(self.process, timeout)
        return time.monotonic() - started
