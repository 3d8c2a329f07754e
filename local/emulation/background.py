"""A loop on a daemon thread that stops when its event is set (the local stack's emulators)."""

from __future__ import annotations

import threading


class BackgroundLoop:
    """Runs :meth:`_loop` on a daemon thread named ``name``; ``stop_event`` ends it.

    Subclasses implement :meth:`_loop`, which must return soon after ``stop_event`` is set.
    """

    def __init__(self, name: str, stop_event: threading.Event | None = None) -> None:
        self.stop_event = stop_event or threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self) -> None:
        """Start the thread."""
        self._thread.start()

    def stop(self) -> None:
        """Ask the thread to stop (the step in progress finishes)."""
        self.stop_event.set()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the thread (returns at once when it was never started)."""
        if self._thread.ident is not None:
            self._thread.join(timeout)

    def _loop(self) -> None:
        raise NotImplementedError
