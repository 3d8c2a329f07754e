"""The event feed's order (pure: no boto3, no clock, no I/O): per-owner positions taken from a
counter, and which stored items a reader may hand out so that a poller following the cursor
sees every event exactly once (``docs/events.md``, "What a client may rely on"; decisions,
"Feed positions").

The relay takes positions from the owner's counter (one atomic ``UpdateItem``) and then writes
the items; relays of different shards take and write concurrently, so position ``p`` may be
written after ``p + 1``, or never (a relay that died between the two; its retry takes new
positions). The bound that makes a gap decidable:

* a relay stamps ``taken_at`` *before* the counter update and starts each put only while
  ``now - taken_at < FRESH_SECONDS`` (else it takes a new position);
* one put call lasts at most ``PUT_SECONDS`` (botocore: 3 attempts of a 3 s connect and a 10 s
  read timeout, with backoff, ``data/aws.py``);
* so when ``p < q`` both were taken, ``p``'s ``taken_at`` precedes ``q``'s counter update, which
  precedes ``q``'s first put, so ``taken_at(p) < taken_at(q) + FRESH_SECONDS``; ``p`` is
  written by ``taken_at(q) + 2 * FRESH_SECONDS + PUT_SECONDS`` = ``taken_at(q) +
  SETTLE_SECONDS``, or never.

A reader therefore hands out items in position order without gaps, and passes a gap only when
the item after it was taken at least ``SETTLE_SECONDS`` ago (then whatever is missing never
comes). Without a cursor, the first item is handed out when it is settled or is the first of
its counter (nothing was ever taken before it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: How long a relay may use a position after stamping it, seconds.
FRESH_SECONDS = 30
#: The longest single DynamoDB put, seconds (``data/aws.py``'s ``BOTO_CONFIG``: 3 x 13 s plus
#: backoff, rounded up).
PUT_SECONDS = 60
#: After this long, a gap before an item is permanent (see the module docstring), seconds.
SETTLE_SECONDS = 2 * FRESH_SECONDS + PUT_SECONDS
#: Positions a new counter starts after, per millisecond of the clock: a counter created again
#: (its erasure tombstone expired) starts above every position the old one handed out unless
#: that one handed out more than 1,000 positions per millisecond of its life.
FLOOR_PER_MS = 1000
#: Digits of a position in keys and cursors (``floor`` is about 1.8e15 in 2026).
POSITION_DIGITS = 20


def position_floor(now_epoch: float) -> int:
    """Where a counter created at ``now_epoch`` (seconds) starts: positions are above it."""
    return int(now_epoch * 1000) * FLOOR_PER_MS


def position_key(position: int) -> str:
    """``position`` zero-padded to :data:`POSITION_DIGITS` digits (sorts as a number)."""
    return f"{position:0{POSITION_DIGITS}d}"


@dataclass(frozen=True)
class Placed:
    """What the reader needs of a stored item: its ``position``, when the relay took it
    (``taken_at``, epoch seconds) and whether it is the ``first`` of its counter."""

    position: int
    taken_at: float
    first: bool


def readable(items: Sequence[Placed], *, after: int | None, now_epoch: float) -> int:
    """How many of ``items`` (positions above ``after``, ascending) a reader may hand out:
    the longest prefix with no gap, where a gap (or, without a cursor, the start) is passed
    only by an item taken :data:`SETTLE_SECONDS` before ``now_epoch`` (or, at the start, the
    first item of its counter)."""
    count = 0
    expected = None if after is None else after + 1
    for item in items:
        settled = now_epoch - item.taken_at >= SETTLE_SECONDS
        in_order = item.first if expected is None else item.position == expected
        if not (in_order or settled):
            break
        count += 1
        expected = item.position + 1
    return count
