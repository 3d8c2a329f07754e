"""``make events``: print the outcome events the local stack's relay has stored (the feed items
of ``PostsTable``, ``docs/events.md``), oldest first, one JSON line each."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

import boto3

from local.embedded_aws import apply_client_environment, is_listening
from scheduled_posts.data.event_feed import FEED_PREFIX
from scheduled_posts.settings import Settings


def stored_events(table: Any) -> list[dict[str, Any]]:
    """Every owner-feed item of ``table`` (a boto3 ``Table``), ordered by feed position. A
    Scan: a local tool on a small emulated table; the service reads the feed by Query."""
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {}
    while True:
        page = table.scan(**kwargs)
        items += [i for i in page.get("Items", []) if str(i.get("pk", "")).startswith(FEED_PREFIX)]
        if "LastEvaluatedKey" not in page:
            break
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    return sorted(items, key=lambda i: int(i["position"]))


def print_events(port: int, out: TextIO = sys.stdout) -> int:
    """Print the events of the stack on ``port``; 1 when none is running there."""
    if not is_listening(port):
        print(f"no local stack on AWS_PORT={port} (start it with make run)", file=sys.stderr)
        return 1
    apply_client_environment(port)
    table = boto3.resource("dynamodb").Table(Settings.from_env().POSTS_TABLE_NAME)
    for item in stored_events(table):
        event = json.loads(item["event"])
        print(json.dumps({**event, "trace_id": item.get("trace_id")}, sort_keys=False), file=out)
    return 0
