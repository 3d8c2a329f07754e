"""Browser tests of the content calendar (``web/``): Debian's Chromium driven by Playwright.

One local stack (``python -m local run``, its own embedded AWS) runs in a subprocess on free
ports for the whole session (``local/emulation/runner.py``), with the e2e test's shrunk timings
so a post publishes within seconds. Chromium is ``/usr/bin/chromium`` (``make chromium``
installs it with apt-get); ``playwright install`` downloads browsers from a CDN and is never
used. Each page records its console errors and uncaught exceptions; a test fails when there is
any.

Screenshots go to ``SCREENSHOT_DIR`` (``make screenshots`` sets ``docs/screenshots``), else to
the test's temporary folder, so the same steps run either way.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from local.client import ApiClient
from local.config import LocalConfig
from local.emulation.runner import StackProcess, free_port, stack_environment
from local.token import make_token

CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
JWT_SECRET = "browser-tests-secret-long-enough-for-hs256"
#: Seconds for the stack to print its ready line: about 10 s alone, over 60 s on a loaded
#: 2-core machine shared with other test runs.
START_TIMEOUT = 150.0
STOP_TIMEOUT = 15.0


#: The e2e test's shrunk timings: 1 s sweeps, a 4 s lookahead, a 5 s delivery timeout so the
#: 10 s lease outlives one post's processing (the deployed sizing rule).
SETTINGS = {
    "SWEEP_INTERVAL_SECONDS": "1",
    "LOOKAHEAD_SECONDS": "4",
    "WATCHDOG_INTERVAL_SECONDS": "2",
    "RECONCILE_INTERVAL_SECONDS": "5",
    "LEASE_SECONDS": "10",
    "DELIVERY_TIMEOUT_SECONDS": "5",
    "POLL_WAIT_SECONDS": "1",
    "LOCAL_LOG_LEVEL": "WARNING",
}


@dataclass
class Stack:
    """The running local stack: its base URL and API clients per user."""

    url: str

    def client(self, user: str) -> ApiClient:
        """An API client with a local token for ``user``."""
        return ApiClient(self.url, make_token(user, LocalConfig(jwt_secret=JWT_SECRET)))


@pytest.fixture(scope="session")
def stack() -> Iterator[Stack]:
    """``python -m local run`` (with its own embedded AWS) on free ports for the session."""
    process = StackProcess(
        stack_environment(
            JWT_SECRET, AWS_PORT=str(free_port()), API_PORT=str(free_port()), **SETTINGS
        )
    )
    url = process.wait_ready(START_TIMEOUT)
    yield Stack(url)
    process.stop(STOP_TIMEOUT)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """pytest-playwright's launch arguments with Debian's Chromium as the executable."""
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} is missing: run `make chromium` (apt-get install chromium)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return {**browser_type_launch_args, "executable_path": str(CHROMIUM)}


@pytest.fixture
def screenshot_dir(tmp_path: Path) -> Path:
    """Where screenshots go: ``SCREENSHOT_DIR`` (``make screenshots``) or the test's tmp."""
    target = Path(os.environ.get("SCREENSHOT_DIR") or tmp_path)
    target.mkdir(parents=True, exist_ok=True)
    return target


@dataclass
class Console:
    """Console errors and uncaught page errors seen by the pages of one test."""

    errors: list[str] = field(default_factory=list)
    #: HTTP statuses a test provokes on purpose: Chromium logs every non-2xx fetch as a console
    #: error ("Failed to load resource: ... status of 412"), which the page itself handles.
    expected_statuses: tuple[int, ...] = ()

    def watch(self, page: Any) -> Any:
        page.on("console", self._console)
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        return page

    def _console(self, message: Any) -> None:
        if message.type != "error":
            return
        for status in self.expected_statuses:
            if f"the server responded with a status of {status} " in message.text:
                return
        self.errors.append(f"console.error: {message.text}")


@pytest.fixture
def open_page(browser: Any, stack: Stack) -> Iterator[Callable[..., Any]]:
    """``open_page(timezone_id, poll_ms, expected_statuses, navigate)``: a new context and page
    on the calendar (``navigate=False``: not loaded yet, for routes), console watched.

    The test fails at teardown when any page logged a console error or threw, except the
    browser's own report of an HTTP status listed in ``expected_statuses``.
    """
    console = Console()
    contexts: list[Any] = []

    def opener(
        timezone_id: str = "America/New_York",
        poll_ms: int = 500,
        expected_statuses: tuple[int, ...] = (),
        navigate: bool = True,
    ) -> Any:
        console.expected_statuses += expected_statuses
        context = browser.new_context(
            timezone_id=timezone_id, locale="en-GB", viewport={"width": 1280, "height": 860}
        )
        contexts.append(context)
        page = console.watch(context.new_page())
        page.set_default_timeout(10_000)
        if navigate:
            page.goto(f"{stack.url}/?poll_ms={poll_ms}")
        return page

    yield opener
    for context in contexts:
        context.close()
    assert console.errors == []
