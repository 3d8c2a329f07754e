"""API steps shared by the local-stack tests (``tests/e2e/``): a caller, a webhook channel."""

from __future__ import annotations

from typing import Any

from local.client import ApiClient
from local.config import LocalConfig
from local.emulation.receiver import Receiver
from local.token import make_token

#: The stack's schedules shrunk for a test run: 1 s sweeps and a 4 s lookahead; a 5 s delivery
#: timeout so the 10 s lease still outlives one post's processing (the deployed sizing rule).
SHRUNK_SETTINGS = {
    "SWEEP_INTERVAL_SECONDS": "1",
    "LOOKAHEAD_SECONDS": "4",
    "WATCHDOG_INTERVAL_SECONDS": "2",
    "RECONCILE_INTERVAL_SECONDS": "5",
    "LEASE_SECONDS": "10",
    "DELIVERY_TIMEOUT_SECONDS": "5",
    "POLL_WAIT_SECONDS": "1",
}


def api_client(port: int, user: str, jwt_secret: str) -> ApiClient:
    """A client of the local API on 127.0.0.1:``port`` signed in as ``user`` (an HS256 token
    made with the stack's ``jwt_secret``)."""
    return ApiClient(
        f"http://127.0.0.1:{port}", make_token(user, LocalConfig(jwt_secret=jwt_secret))
    )


def webhook_channel(client: ApiClient, receiver: Receiver) -> dict[str, Any]:
    """Create a webhook channel delivering to ``receiver`` (which learns its signing secret);
    the 201 body."""
    reply = client.request(
        "POST", "/v1/channels", {"platform": "webhook", "name": "e2e", "url": receiver.url}
    )
    assert reply.status == 201, reply.body
    receiver.secret = reply.body["signing_secret"]
    body: dict[str, Any] = reply.body
    return body
