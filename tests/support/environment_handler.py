"""A handler for the worker-process tests: it reports its process and its module-level state."""

from __future__ import annotations

import os
from typing import Any

#: Invocations this module has served in its process (one environment's warm state).
INVOCATIONS = 0


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Answer ``{"pid", "invocations", "request_id"}``; raise ``ValueError`` when the event
    says ``{"fail": true}``, exit the process when it says ``{"exit": true}``."""
    global INVOCATIONS  # noqa: PLW0603 (module-level state is what the test observes)
    if event.get("exit"):
        os._exit(3)
    if event.get("fail"):
        raise ValueError("asked to fail")
    INVOCATIONS += 1
    return {"pid": os.getpid(), "invocations": INVOCATIONS, "request_id": context.aws_request_id}
