"""A faster ``TransactWriteItems`` for moto, the embedded AWS of ``make run`` and of the tests.

moto 5.2.5 deep-copies every table a transaction names, once per item, so each transaction's
cost grows with the whole table (hundreds of milliseconds per create once a table holds a few
thousand posts). :func:`fast_moto_transactions` keeps the semantics (all or nothing; the
conditions are moto's own) by backing up only the items the transaction touches and restoring
them on any failure. It changes the emulator only, never the service; moto computes its GSIs from
the items at query time, so restoring items restores the indexes too.

It also makes moto's writes atomic across threads (the fault runner, ``tests.faults.run``, writes
from several threads and, unlike a pytest session, has no per-request lock): moto numbers a
stream record ``len(records) + start`` before it builds and appends it, so two concurrent writes
could share one sequence number (DynamoDB never does: a shard's numbers only grow), and the
outbox feed, keyed by sequence number, could keep one of two events of a post. One re-entrant
lock now holds each write, its condition check and its stream record.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock


@contextlib.contextmanager
def fast_moto_transactions() -> Iterator[None]:
    """Make moto's ``TransactWriteItems`` back up only the items it touches, and every write
    (with its stream record) atomic across threads.

    moto 5.2.5 deep-copies every table a transaction names, once per item, so the rollback
    costs grow with the whole table (a quarter of a world's CPU at 50 posts). This keeps its
    semantics (all or nothing; the conditions are moto's own) by backing up the touched items
    and restoring them on any failure. A test-double speed-up only: the service is unchanged.
    """
    from moto.dynamodb import models
    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.models.table import StreamShard, Table

    real_copy = models.copy
    original = models.DynamoDBBackend.transact_write_items

    class _Copy:
        """``copy`` for moto's module: a table 'copy' is the table itself."""

        @staticmethod
        def deepcopy(value: Any, memo: Any = None) -> Any:
            if isinstance(value, Table):
                return value
            return real_copy.deepcopy(value, memo)

        def __getattr__(self, name: str) -> Any:
            return getattr(real_copy, name)

    def transact(self: Any, transact_items: list[dict[str, Any]]) -> None:
        backups = []
        for entry in transact_items:
            try:
                _, op = next(iter(entry.items()))
                table = self.tables[op["TableName"]]
                attrs = op["Item"] if "Item" in op else op["Key"]
                h = DynamoType(attrs[table.hash_key_attr])
                r = DynamoType(attrs[table.range_key_attr]) if table.range_key_attr else None
            except (KeyError, TypeError, StopIteration, AttributeError):
                continue
            current = table.items.get(h) if r is None else table.items.get(h, {}).get(r)
            backups.append((table, h, r, real_copy.deepcopy(current)))
        # moto appends a stream record per applied write; a rolled-back write must leave none
        # (DynamoDB streams only committed writes; the outbox depends on it: decision "The outbox is
        # the posts table's DynamoDB stream (`NEW_AND_OLD_IMAGES`), not an outbox item").
        streams = {
            id(t): (t.stream_shard, len(t.stream_shard.items))
            for t, *_ in backups
            if t.stream_shard is not None
        }
        try:
            original(self, transact_items)
        except Exception:
            for shard, length in streams.values():
                del shard.items[length:]
            for table, h, r, old in reversed(backups):
                if r is None:
                    if old is None:
                        table.items.pop(h, None)
                    else:
                        table.items[h] = old
                elif old is None:
                    table.items.get(h, {}).pop(r, None)
                else:
                    table.items[h][r] = old
            raise

    lock = threading.RLock()

    def serialised(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def locked(*args: Any, **kwargs: Any) -> Any:
            with lock:
                return method(*args, **kwargs)

        return locked

    backend = models.DynamoDBBackend
    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.object(models, "copy", _Copy()))
        stack.enter_context(
            mock.patch.object(backend, "transact_write_items", serialised(transact))
        )
        for name in ("put_item", "update_item", "delete_item"):
            stack.enter_context(
                mock.patch.object(backend, name, serialised(getattr(backend, name)))
            )
        stack.enter_context(mock.patch.object(StreamShard, "add", serialised(StreamShard.add)))
        yield
