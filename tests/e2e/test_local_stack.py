"""End to end: the local stack in a subprocess, real HTTP in, real webhooks out on loopback.

The embedded AWS runs in its own process (``python -m local aws``) for the whole module, so a
test can restart the service processes while it keeps its state. Settings are shrunk through
the environment (1 s sweeps, a 4 s lookahead) so that both the API's promotion and the
sweeper's path are exercised within seconds. Every wait is bounded.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from local.client import ApiClient
from local.emulation.receiver import Receiver
from local.emulation.runner import AwsProcess, StackProcess, free_port, stack_environment
from scheduled_posts.clock import format_instant, parse_instant
from tests.support.e2e import SHRUNK_SETTINGS, api_client, webhook_channel

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]

JWT_SECRET = "e2e-secret-long-enough-for-hs256-signing"
TERMINAL = {"published", "partially_published", "failed", "cancelled", "missed"}
START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
#: Shrunk settings (:data:`SHRUNK_SETTINGS`) with short retries.
SETTINGS = {**SHRUNK_SETTINGS, "RETRY_BASE_SECONDS": "1", "RETRY_CAP_SECONDS": "2"}


def _stack(aws_port: int, api_port: int) -> StackProcess:
    return StackProcess(
        stack_environment(JWT_SECRET, AWS_PORT=str(aws_port), API_PORT=str(api_port), **SETTINGS)
    )


@pytest.fixture(scope="module")
def aws_port() -> Iterator[int]:
    """An embedded AWS in its own process for the module (outlives stack restarts)."""
    aws = AwsProcess(free_port(), stack_environment(JWT_SECRET, **SETTINGS))
    aws.wait_ready(START_TIMEOUT)
    yield aws.port
    aws.stop(STOP_TIMEOUT)


@pytest.fixture
def stack(aws_port: int) -> Iterator[tuple[StackProcess, int]]:
    api_port = free_port()
    process = _stack(aws_port, api_port)
    process.wait_ready(START_TIMEOUT)
    yield process, api_port
    process.stop(STOP_TIMEOUT)


def _client(port: int, user: str) -> ApiClient:
    return api_client(port, user, JWT_SECRET)


def _channel(client: ApiClient, receiver: Receiver) -> str:
    return str(webhook_channel(client, receiver)["channel_id"])


def _schedule(client: ApiClient, channel_id: str, publish_at: datetime, content: str) -> dict:
    reply = client.request(
        "POST",
        "/v1/scheduled-posts",
        {
            "content": content,
            "media_ids": [],
            "publish_at": format_instant(publish_at),
            "channel_ids": [channel_id],
        },
    )
    assert reply.status == 201, reply.body
    return dict(reply.body)


def _wait_terminal(client: ApiClient, ids: list[str], timeout: float) -> dict[str, dict]:
    """GET each post until all are terminal or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    final: dict[str, dict[str, Any]] = {}
    while time.monotonic() < deadline and len(final) < len(ids):
        for sid in ids:
            if sid not in final:
                reply = client.request("GET", f"/v1/scheduled-posts/{sid}")
                if reply.status == 200 and reply.body["status"] in TERMINAL:
                    final[sid] = reply.body
        time.sleep(0.5)
    return final


def _whole_second(seconds: float) -> datetime:
    now = datetime.now(UTC)
    return now.replace(microsecond=0) + timedelta(seconds=seconds + 1)


def test_local_stack_posts_published_exactly_once_never_early_with_edit_and_cancel(
    stack: tuple[StackProcess, int], receiver: Receiver
) -> None:
    process, api_port = stack
    client = _client(api_port, "e2e-alice")
    channel_id = _channel(client, receiver)
    same_second = _whole_second(6)
    burst = [_schedule(client, channel_id, same_second, f"burst {n}") for n in range(5)]
    swept = [_schedule(client, channel_id, _whole_second(9 + n), f"swept {n}") for n in range(3)]
    edited = _schedule(client, channel_id, _whole_second(20), "before the edit")
    cancelled = _schedule(client, channel_id, _whole_second(20), "never delivered")
    new_time = _whole_second(10)  # moved earlier, past the sweeper's lookahead
    patch = client.request(
        "PATCH",
        f"/v1/scheduled-posts/{edited['schedule_id']}",
        {"content": "after the edit", "publish_at": format_instant(new_time)},
        headers={"if-match": f'"{edited["version"]}"'},
    )
    assert patch.status == 200, patch.body
    assert client.request("DELETE", f"/v1/scheduled-posts/{cancelled['schedule_id']}").status == 200

    delivered_ids = [p["schedule_id"] for p in [*burst, *swept, edited]]
    final = _wait_terminal(client, [*delivered_ids, cancelled["schedule_id"]], timeout=45)
    time.sleep(2.0)  # a short window for any duplicate to arrive

    deliveries = receiver.snapshot()
    counts = Counter(d.schedule_id for d in deliveries)
    assert {sid: counts[sid] for sid in delivered_ids} == dict.fromkeys(delivered_ids, 1)
    assert receiver.resends == 0 and receiver.rejected == 0
    assert counts[cancelled["schedule_id"]] == 0
    assert [
        d for d in deliveries if parse_instant(d.received_at) < parse_instant(d.publish_at)
    ] == []
    edit = next(d for d in deliveries if d.schedule_id == edited["schedule_id"])
    assert (edit.content, parse_instant(edit.publish_at)) == ("after the edit", new_time)
    assert {sid: final.get(sid, {}).get("status") for sid in delivered_ids} == dict.fromkeys(
        delivered_ids, "published"
    )
    assert final[cancelled["schedule_id"]]["status"] == "cancelled"
    logged = "\n".join(process.output)
    assert [sid for sid in delivered_ids if f"published schedule_id={sid}" not in logged] == []


def test_local_stack_restart_while_aws_keeps_running_loses_and_duplicates_nothing(
    aws_port: int, receiver: Receiver
) -> None:
    api_port = free_port()
    first = _stack(aws_port, api_port)
    first.wait_ready(START_TIMEOUT)
    client = _client(api_port, "e2e-bob")
    channel_id = _channel(client, receiver)
    posts = [_schedule(client, channel_id, _whole_second(3), "promoted")]
    posts += [_schedule(client, channel_id, _whole_second(8 + n), f"swept {n}") for n in range(3)]
    assert first.stop(STOP_TIMEOUT) < STOP_TIMEOUT

    second = _stack(aws_port, api_port)
    try:
        second.wait_ready(START_TIMEOUT)
        ids = [p["schedule_id"] for p in posts]
        final = _wait_terminal(client, ids, timeout=45)
        time.sleep(2.0)
    finally:
        second.stop(STOP_TIMEOUT)
    counts = Counter(d.schedule_id for d in receiver.snapshot())
    assert {sid: counts[sid] for sid in ids} == dict.fromkeys(ids, 1)
    assert {sid: final.get(sid, {}).get("status") for sid in ids} == dict.fromkeys(ids, "published")


def _readme_api_block() -> str:
    """The first ``bash`` block after the README's "## API guide" heading."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    guide = text[text.index("## API guide") :]
    start = guide.index("```bash\n") + len("```bash\n")
    return guide[start : guide.index("```\n", start)]


def test_readme_api_guide_block_runs_and_checks_its_answers(
    stack: tuple[StackProcess, int],
) -> None:
    # Given the README's curl tour, run as `bash -e` so that any `call` whose status differs
    # from the one it expects (or any `field` that finds no such field) stops it.
    _, api_port = stack
    env = stack_environment(
        JWT_SECRET,
        API=f"http://127.0.0.1:{api_port}",
        RECEIVER_PORT=str(free_port()),
        PATH=os.environ.get("PATH", ""),
    )
    # When it runs against the local stack
    done = subprocess.run(
        ["bash", "-e", "-c", _readme_api_block()],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    # Then every step answered as the README says, down to the erasure's status
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.rstrip().endswith('200 {"status":"done"}')
    # And the erasure was its own user's: alice's post from the guide is still hers
    export = _client(api_port, "alice").request("GET", "/v1/me/export")
    assert export.status == 200 and export.body["posts"], export.body
