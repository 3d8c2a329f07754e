"""An API handler for the concurrency test of the local HTTP front: each request leaves a mark
in the folder its ``x-rendezvous`` header names and waits (at most 20 s) for ``x-expect`` marks.
Requests served one at a time never all meet; concurrent ones do."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """``{"met": <marks seen>}`` once ``x-expect`` marks are there, or after 20 s."""
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    folder = Path(headers["x-rendezvous"])
    expect = int(headers["x-expect"])
    (folder / f"{os.getpid()}-{context.aws_request_id}").touch()
    deadline = time.monotonic() + 20
    while len(list(folder.iterdir())) < expect and time.monotonic() < deadline:
        time.sleep(0.05)
    met = len(list(folder.iterdir()))
    return {"statusCode": 200, "headers": {}, "body": json.dumps({"met": met})}
