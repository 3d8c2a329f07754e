"""Sweeper CPU per message: what one due entry costs the sweeper's own process, for the model.

The capacity model (``bench/capacity_sim.py``) charges the sweeper's network calls by their
latency; this measures the CPU the real code spends around them, which threads cannot overlap
(one Python process, one GIL). A loopback HTTP server on 127.0.0.1 (its own thread, its CPU not
counted) answers as SQS and DynamoDB would, with valid bodies (SQS's MD5 of each message body);
the sweeper's real collaborators call it through botocore (serialising, signing, sending over
HTTP, parsing):

* ``send_message_cpu_s``: ``DispatchQueue.send_batch`` of 10 ``DispatchMessage`` s (pydantic
  JSON, ``SendMessageBatch``), per message.
* ``read_entry_cpu_s``: ``DueIndex.query_bucket`` reading pages of 500 due entries (boto3's
  type deserialiser, ``DueEntry`` models), per entry.

CPU is ``time.thread_time()`` of the calling thread, over ``--calls`` calls after 20 warm-up
calls. Measured with this machine's CPython (x86_64), not Lambda's arm64 runtime; a Lambda
function gets one vCPU at 1,769 MB and a proportional share below (Lambda Developer Guide,
"Configure Lambda function memory"), which the model applies. Not part of ``make test``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import threading
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from bench.report import table, write_result

PAGE = 500


def _due_items(count: int) -> list[dict[str, Any]]:
    start = datetime(2026, 12, 1, 13, 0, tzinfo=UTC)
    items = []
    for n in range(count):
        at = (start + timedelta(milliseconds=n)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        sid = f"{n:08d}-0000-4000-8000-000000000000"
        items.append(
            {
                "bucket": {"S": "2026-12-01T13#3"},
                "due": {"S": f"{at}#{sid}"},
                "schedule_id": {"S": sid},
                "publish_at": {"S": at},
                "version": {"N": "1"},
                "shard": {"N": "3"},
                "expires_at": {"N": "1796223600"},
            }
        )
    return items


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    page = json.dumps({"Items": _due_items(PAGE), "Count": PAGE, "ScannedCount": PAGE}).encode()

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        target = self.headers.get("X-Amz-Target", "")
        if target.endswith("SendMessageBatch"):
            entries = json.loads(body)["Entries"]
            answer = json.dumps(
                {
                    "Successful": [
                        {
                            "Id": e["Id"],
                            "MessageId": f"m-{e['Id']}",
                            "MD5OfMessageBody": hashlib.md5(e["MessageBody"].encode()).hexdigest(),
                        }
                        for e in entries
                    ]
                }
            ).encode()
            kind = "application/x-amz-json-1.0"
        else:  # DynamoDB Query
            answer = self.page
            kind = "application/x-amz-json-1.0"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


def _cpu_per_call(call: Any, calls: int) -> float:
    for _ in range(20):
        call()
    started = time.thread_time()
    for _ in range(calls):
        call()
    return (time.thread_time() - started) / calls


def measure(calls: int) -> dict[str, float]:
    """CPU seconds per message sent and per due entry read, over ``calls`` calls each."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    os.environ.update(
        {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": endpoint,
        }
    )
    try:
        import boto3

        from scheduled_posts.data.aws import BOTO_CONFIG
        from scheduled_posts.data.due_index import DueIndex
        from scheduled_posts.data.queue import DispatchQueue, Outgoing
        from scheduled_posts.models.messages import DispatchMessage, DispatchReason

        at = datetime(2026, 12, 1, 13, 0, tzinfo=UTC)
        queue = DispatchQueue(
            f"{endpoint}/123456789012/dispatch", sqs=boto3.client("sqs", config=BOTO_CONFIG)
        )
        batch = [
            Outgoing(
                DispatchMessage(
                    schedule_id=f"{n:08d}-0000-4000-8000-000000000000", version=1,
                    publish_at=at, attempt=1, reason=DispatchReason.SWEEP,
                ),
                delay_seconds=600,
            )
            for n in range(10)
        ]  # fmt: skip
        table_resource = boto3.resource("dynamodb", config=BOTO_CONFIG).Table("due")
        index = DueIndex("due", table=table_resource, page_size=PAGE)

        def read_page() -> None:
            page = next(iter(index.query_bucket("2026-12-01T13#3", "a", "z")))
            assert len(page.entries) == PAGE

        send = _cpu_per_call(lambda: queue.send_batch(batch), calls) / len(batch)
        read = _cpu_per_call(read_page, max(1, calls // 10)) / PAGE
    finally:
        server.shutdown()
        os.environ.pop("AWS_ENDPOINT_URL", None)
    return {"send_message_cpu_s": send, "read_entry_cpu_s": read}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    figures = measure(args.calls)
    payload = {
        **figures,
        "cpu_s_per_message": figures["send_message_cpu_s"] + figures["read_entry_cpu_s"],
        "calls": args.calls,
        "page_entries": PAGE,
        "wall_seconds": round(time.perf_counter() - started, 1),
    }
    path = write_result("sweeper_cpu", payload)
    print(table(
        ["what", "CPU µs per message"],
        [["send (SendMessageBatch of 10)", round(figures["send_message_cpu_s"] * 1e6, 1)],
         ["read (Query page of 500)", round(figures["read_entry_cpu_s"] * 1e6, 1)]],
    ))  # fmt: skip
    print(f"\nwrote {path} ({payload['wall_seconds']} s)")
    return payload


if __name__ == "__main__":
    main()
