"""``make demo``: a scripted tour against the running local stack.

Starts a webhook receiver of its own (a free loopback port), creates a webhook channel on it,
schedules a few dozen posts over the next minute (several at the same second, one edited, one
cancelled), waits until each has finished, and prints a table of each post's status, publish
time and lag, with what the receiver saw.
"""

from __future__ import annotations

import time
import urllib.error
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from local.client import ApiClient
from local.config import LocalConfig
from local.emulation.receiver import Receiver
from local.token import make_token
from scheduled_posts.clock import format_instant

TERMINAL = {"published", "partially_published", "failed", "cancelled", "missed"}


def _at(now: datetime, seconds: float) -> str:
    return format_instant(now + timedelta(seconds=seconds))


def plan_offsets(count: int) -> list[float]:
    """Offsets (seconds from now) for ``count`` posts over ~50 s, a third at the same second."""
    same = max(2, count // 3)
    rest = count - same
    offsets = [20.0] * same
    offsets += [10.0 + (45.0 * i) / max(1, rest - 1) for i in range(rest)]
    return sorted(offsets)


def run_demo(config: LocalConfig, *, posts: int = 30, out: Any = print) -> int:
    """Run the tour; returns 0 when every post ended as expected, 1 otherwise."""
    client = ApiClient(
        f"http://127.0.0.1:{config.api_port}",
        make_token(f"demo-{uuid.uuid4().hex[:8]}", config),
    )
    receiver = Receiver(printer=lambda line: out(f"  receiver: {line}")).start()
    try:
        try:
            channel = client.request(
                "POST",
                "/v1/channels",
                {"platform": "webhook", "name": "demo receiver", "url": receiver.url},
            )
        except urllib.error.URLError:
            out(f"No stack at {client.base_url}: start it with `make run` first.")
            return 1
        if channel.status != 201:
            out(f"Creating the channel failed: {channel.status} {channel.body}")
            return 1
        receiver.secret = channel.body["signing_secret"]
        channel_id = channel.body["channel_id"]
        out(f"Channel {channel_id} -> {receiver.url} (signatures verified)")

        now = datetime.now(UTC)
        created: list[dict[str, Any]] = []
        for n, offset in enumerate(plan_offsets(posts)):
            reply = client.request(
                "POST",
                "/v1/scheduled-posts",
                {
                    "content": f"demo post {n + 1}",
                    "media_ids": [],
                    "publish_at": _at(now, offset),
                    "channel_ids": [channel_id],
                },
            )
            if reply.status != 201:
                out(f"Scheduling failed: {reply.status} {reply.body}")
                return 1
            created.append(reply.body)
        out(f"Scheduled {len(created)} posts between +10 s and +55 s")

        edited, cancelled = created[-1], created[-2]
        patch = client.request(
            "PATCH",
            f"/v1/scheduled-posts/{edited['schedule_id']}",
            {"content": "demo post (edited)", "publish_at": _at(now, 58)},
            headers={"if-match": f'"{edited["version"]}"'},
        )
        out(f"Edited {edited['schedule_id']}: {patch.status}, now due at +58 s")
        cancel = client.request("DELETE", f"/v1/scheduled-posts/{cancelled['schedule_id']}")
        out(f"Cancelled {cancelled['schedule_id']}: {cancel.status}")

        deadline = time.monotonic() + 58 + 60
        final: dict[str, dict[str, Any]] = {}
        while time.monotonic() < deadline:
            for post in created:
                sid = post["schedule_id"]
                if sid in final:
                    continue
                reply = client.request("GET", f"/v1/scheduled-posts/{sid}")
                if reply.status == 200 and reply.body["status"] in TERMINAL:
                    final[sid] = reply.body
            if len(final) == len(created):
                break
            time.sleep(1.0)

        by_post: dict[str, int] = {}
        for delivery in receiver.snapshot():
            by_post[delivery.schedule_id] = by_post.get(delivery.schedule_id, 0) + 1
        out("")
        out(
            f"{'schedule_id':38} {'status':20} {'publish_at':25} {'published_at':25} "
            f"{'lag s':>7} {'recv':>4}"
        )
        ok = True
        for post in created:
            sid = post["schedule_id"]
            body = final.get(sid)
            if body is None:
                body = client.request("GET", f"/v1/scheduled-posts/{sid}").body or {}
            lag = body.get("publish_lag_seconds")
            out(
                f"{sid:38} {body.get('status', '?'):20} {body.get('publish_at', '?'):25} "
                f"{body.get('published_at') or '-':25} "
                f"{(f'{lag:.3f}' if isinstance(lag, int | float) else '-'):>7} "
                f"{by_post.get(sid, 0):>4}"
            )
            expected = "cancelled" if sid == cancelled["schedule_id"] else "published"
            ok &= body.get("status") == expected
            ok &= by_post.get(sid, 0) == (0 if expected == "cancelled" else 1)
        early = [d for d in receiver.snapshot() if d.lag_seconds < 0]
        out("")
        out(
            f"{len(receiver.snapshot())} deliveries, {receiver.resends} re-sends, "
            f"{len(early)} early, {receiver.rejected} bad signatures: "
            + ("all as expected" if ok and not early else "NOT as expected")
        )
        return 0 if ok and not early else 1
    finally:
        receiver.stop()
