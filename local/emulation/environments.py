"""Lambda execution environments as worker processes: one process per environment.

Lambda runs each invocation alone in an execution environment and keeps the environment warm
for later ones; concurrent invocations run in separate environments, each a process with its own
imported handler (Lambda developer guide, "Understanding the Lambda execution environment
lifecycle" and "Understanding Lambda function scaling"). The handlers rely on it: Powertools'
Logger keys and Metrics buffer are module-level state, so two invocations in one process would
share them. :class:`ProcessFunction` keeps that true locally: ``environments`` spawned
processes, each of which imports ``functions.<name>.handler`` itself (through a
:class:`~local.emulation.lambda_runtime.LambdaFunction` of its own) and runs one invocation at a
time; a caller blocks until an environment is free.

The children inherit the parent's environment variables when spawned (``start``), so the
parent must have set the service settings and the embedded AWS's endpoint first; they reach
the same embedded AWS over HTTP. An environment whose process dies is replaced by a fresh one
(a cold start), as Lambda replaces a crashed environment.
"""

from __future__ import annotations

import logging
import multiprocessing
import queue
import signal
import threading
import time
from multiprocessing.connection import Connection
from typing import Any

from local.emulation.lambda_runtime import LambdaContext

log = logging.getLogger("local.environments")

#: ``spawn``: a fresh interpreter per environment (``fork`` would copy the parent's threads'
#: locks and its already-imported handler state).
_CONTEXT = multiprocessing.get_context("spawn")


class InvocationError(RuntimeError):
    """The handler raised in its environment; the message is ``repr`` of what it raised."""


def _serve(
    conn: Connection, name: str, timeout_seconds: float, function_name: str, module: str | None
) -> None:
    """The environment's process: import the handler, then run one invocation per message."""
    import importlib

    from local.emulation.lambda_runtime import LambdaFunction
    from local.stack import configure_logging

    # Ctrl-C reaches the whole process group: the parent stops its environments (closes the
    # pipe, then SIGTERM), so a child ignores SIGINT instead of printing a KeyboardInterrupt.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    configure_logging()
    handler = importlib.import_module(module).lambda_handler if module else None
    function = LambdaFunction(name, timeout_seconds, handler, function_name=function_name)
    function.handler()  # the init phase: import before the first invocation
    conn.send(("ready", None))
    while True:
        try:
            event = conn.recv()
        except (EOFError, OSError):
            return
        try:
            response, _context = function.invoke(event)
        except Exception as exc:  # the parent retries the whole batch, as Lambda does
            conn.send(("error", repr(exc)))
        else:
            conn.send(("ok", response))


class _Environment:
    """One worker process and the pipe to it."""

    def __init__(
        self, name: str, timeout_seconds: float, function_name: str, module: str | None
    ) -> None:
        self.conn, child = _CONTEXT.Pipe()
        self.process = _CONTEXT.Process(
            target=_serve,
            args=(child, name, timeout_seconds, function_name, module),
            name=f"lambda-env-{name}",
            daemon=True,
        )
        self.process.start()
        child.close()
        self.ready = False

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait for the init phase (the handler's import) to end; False if not within
        ``timeout`` seconds."""
        if not self.ready:
            try:
                if timeout is not None and not self.conn.poll(timeout):
                    return False
                status, _ = self.conn.recv()
            except (EOFError, OSError):  # the process died in its init phase
                return False
            self.ready = status == "ready"
        return self.ready

    def call(self, event: dict[str, Any]) -> Any:
        self.wait_ready()
        self.conn.send(event)
        status, value = self.conn.recv()
        if status == "error":
            raise InvocationError(value)
        return value

    def terminate(self) -> None:
        self.conn.close()
        if self.process.is_alive():
            self.process.terminate()

    def stop(self, timeout: float = 2.0) -> None:
        self.terminate()
        self.process.join(timeout)


class ProcessFunction:
    """A function with ``environments`` worker processes; ``invoke`` as
    :meth:`local.emulation.lambda_runtime.LambdaFunction.invoke`.

    Parameters
    ----------
    name:
        The folder under ``functions/`` (``worker`` ...).
    timeout_seconds:
        The emulated timeout; the context ``invoke`` returns counts down from it on
        ``time.monotonic`` (system-wide, so it matches the child's own context).
    environments:
        Processes (concurrent invocations), at least 1.
    module:
        A module whose ``lambda_handler`` each process imports instead of
        ``functions.<name>.handler`` (tests).

    Raises
    ------
    ValueError
        When ``environments`` is below 1.
    """

    def __init__(
        self,
        name: str,
        timeout_seconds: float,
        environments: int,
        *,
        function_name: str | None = None,
        module: str | None = None,
    ) -> None:
        if environments < 1:
            raise ValueError("environments must be at least 1")
        self.name = name
        self.timeout_seconds = timeout_seconds
        self.environments = environments
        self.function_name = function_name or f"scheduled-posts-{name}"
        self.module = module
        self._free: queue.Queue[_Environment] = queue.Queue()
        self._all: list[_Environment] = []
        self._lock = threading.Lock()

    def start(self, ready_timeout: float = 120.0) -> None:
        """Spawn the processes and wait until each has imported its handler (their init
        phases run at once), so that the first batches do not pay for the imports.

        Raises
        ------
        RuntimeError
            When an environment is not ready within ``ready_timeout`` seconds (all stopped).
        """
        spawned = [self._spawn() for _ in range(self.environments)]
        deadline = time.monotonic() + ready_timeout
        for environment in spawned:
            if not environment.wait_ready(max(0.0, deadline - time.monotonic())):
                self.stop()
                raise RuntimeError(f"the {self.name} environments did not start in time")
            self._free.put(environment)

    def _spawn(self) -> _Environment:
        environment = _Environment(self.name, self.timeout_seconds, self.function_name, self.module)
        with self._lock:
            self._all.append(environment)
        return environment

    def context(self) -> LambdaContext:
        """A context with this function's timeout (the caller's view of the deadline)."""
        return LambdaContext(self.function_name, self.timeout_seconds)

    def invoke(self, event: dict[str, Any]) -> tuple[Any, LambdaContext]:
        """Run ``event`` in the next free environment; returns the response and a context
        started with the invocation (its remaining time tells whether it overran).

        Raises
        ------
        InvocationError
            When the handler raised, or its process died (it is replaced).
        """
        environment = self._free.get()
        context = self.context()
        try:
            return environment.call(event), context
        except (EOFError, OSError) as exc:
            log.warning("an execution environment died: replaced", extra={"error": repr(exc)})
            environment.stop()
            with self._lock:
                self._all.remove(environment)
            environment = self._spawn()
            raise InvocationError(f"environment died: {exc!r}") from exc
        finally:
            self._free.put(environment)

    def stop(self) -> None:
        """Terminate every process (an invocation in progress is cut off, as at a shutdown)."""
        with self._lock:
            environments, self._all = self._all, []
        for environment in environments:  # all at once: each exits on its own SIGTERM
            environment.terminate()
        deadline = time.monotonic() + 2.0
        for environment in environments:
            environment.process.join(max(0.0, deadline - time.monotonic()))
