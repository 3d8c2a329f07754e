"""The worker's own CPU per batch, measured inside ``bench/cost.py``'s in-process run.

moto answers every AWS call in the calling thread (its ``BotocoreStubber`` on botocore's
``before-send``) and the fake webhook receiver answers in the caller's thread too, so the
process's CPU around a worker invocation holds three parts: our code (botocore serialising,
signing and parsing, pydantic, Powertools, the webhook's signing), moto's emulation of AWS, and
the receiver playing the destination. :class:`WorkerCpu` charges the worker only the first:
``time.process_time()`` (every thread of the process: the batch's records run on threads)
around the handler, minus the ``time.thread_time()`` spent inside moto's stubber and inside
the receiver, summed over threads.

Measured with this machine's CPython (x86_64), not Lambda's arm64 runtime: the model in
``bench/cost.py`` assumes one arm64 vCPU does the same work in the same time, and gives a
function of ``M`` MB the share ``M / 1,769`` of one vCPU (Lambda Developer Guide, "Configure
Lambda function memory").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


class WorkerCpu:
    """Sums the worker's own CPU seconds (``seconds``) over the invocations it wraps."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.invocations = 0
        self._excluded = 0.0
        self._lock = threading.Lock()

    def excluding(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` wrapped so that its thread CPU is not charged to the worker."""

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            started = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent = time.thread_time() - started
                with self._lock:
                    self._excluded += spent

        return wrapped

    @contextmanager
    def moto_excluded(self) -> Iterator[None]:
        """moto's request handling is not charged while this is open."""
        from moto.core.botocore_stubber import BotocoreStubber

        original = BotocoreStubber.process_request
        BotocoreStubber.process_request = self.excluding(original)  # type: ignore[method-assign]
        try:
            yield
        finally:
            BotocoreStubber.process_request = original  # type: ignore[method-assign]

    def measure(self, fn: Callable[[], Any]) -> Any:
        """Call ``fn`` (one worker invocation) and charge its own CPU."""
        with self._lock:
            excluded_before = self._excluded
        started = time.process_time()
        try:
            return fn()
        finally:
            spent = time.process_time() - started
            with self._lock:
                self.seconds += max(0.0, spent - (self._excluded - excluded_before))
                self.invocations += 1
