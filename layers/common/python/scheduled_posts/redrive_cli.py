"""``make redrive``: move dispatch DLQ messages back (``scheduled_posts.logic.redrive``).

Usage::

    DISPATCH_QUEUE_URL=... DISPATCH_DLQ_URL=... POSTS_TABLE_NAME=... IDEMPOTENCY_TABLE_NAME=... \\
        python -m scheduled_posts.redrive_cli [--dry-run] [--max N]

With ``--notify`` it moves the notify DLQ's notifications back instead (``NOTIFY_QUEUE_URL``,
``NOTIFY_DLQ_URL``; ``logic/notify_redrive.py``).

Works on AWS with real credentials, and against the local stack's embedded AWS with
``AWS_ENDPOINT_URL`` (``python -m local env`` prints the variables). Prints one block per
message: what was done, why the message was in the DLQ, and the decision; then a summary.
Exit status 0, or 2 when a setting is missing.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence

from scheduled_posts.data.dlq import DeadLetterQueue
from scheduled_posts.data.notify_queue import NotifyQueue
from scheduled_posts.logic.notify_redrive import redrive_notifications
from scheduled_posts.logic.recovery import RecoveryDeps
from scheduled_posts.logic.redrive import RedriveLine, Redriver
from scheduled_posts.observability import logger
from scheduled_posts.settings import Settings


def main(argv: Sequence[str] | None = None) -> int:
    """Run one redrive; see the module docstring."""
    parser = argparse.ArgumentParser(
        prog="redrive", description="Move dispatch DLQ messages back, reopening what may publish."
    )
    parser.add_argument("--dry-run", action="store_true", help="decide and print; change nothing")
    parser.add_argument("--max", type=int, default=1000, help="at most this many messages")
    parser.add_argument(
        "--notify",
        action="store_true",
        help="the notify DLQ instead (NOTIFY_QUEUE_URL, NOTIFY_DLQ_URL): send notifications again",
    )
    args = parser.parse_args(argv)
    logger.setLevel("WARNING")  # the printed report is the output; keep the JSON logs quiet
    settings = Settings.from_env()
    if args.notify:
        return _notify(settings, dry_run=args.dry_run, max_messages=args.max)
    missing = [n for n in ("DISPATCH_QUEUE_URL", "DISPATCH_DLQ_URL") if not getattr(settings, n)]
    if missing:
        print(f"redrive: set {' and '.join(missing)}", file=sys.stderr)
        return 2

    def report(line: RedriveLine) -> None:
        print(line.render(), flush=True)

    lines = Redriver(RecoveryDeps(settings), dry_run=args.dry_run).run(
        max_messages=args.max, report=report
    )
    counts = Counter(line.action for line in lines)
    summary = ", ".join(f"{n} {a}" for a, n in sorted(counts.items())) or "the DLQ is empty"
    print(f"redrive: {len(lines)} message(s): {summary}")
    return 0


def _notify(settings: Settings, *, dry_run: bool, max_messages: int) -> int:
    """``--notify``: move notify DLQ messages back (``logic/notify_redrive.py``)."""
    missing = [n for n in ("NOTIFY_QUEUE_URL", "NOTIFY_DLQ_URL") if not getattr(settings, n)]
    if missing:
        print(f"redrive: set {' and '.join(missing)}", file=sys.stderr)
        return 2
    lines = redrive_notifications(
        DeadLetterQueue(settings.NOTIFY_DLQ_URL),
        NotifyQueue(settings.NOTIFY_QUEUE_URL, settings.NOTIFY_DLQ_URL),
        dry_run=dry_run,
        max_messages=max_messages,
        report=lambda line: print(line.render(), flush=True),
    )
    counts = Counter(line.action for line in lines)
    summary = ", ".join(f"{n} {a}" for a, n in sorted(counts.items())) or "the DLQ is empty"
    print(f"redrive: {len(lines)} notification(s): {summary}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
