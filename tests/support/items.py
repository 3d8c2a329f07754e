"""Apply a lifecycle change to an item in memory, as DynamoDB's ``UpdateItem`` would (for pure
tests of what a stream record's old and new images mean)."""

from __future__ import annotations

import copy
from typing import Any

from scheduled_posts.lifecycle.arrows import PostChange


def applied(item: dict[str, Any], change: PostChange) -> dict[str, Any]:
    """A copy of ``item`` with ``change.sets`` (document paths) set and ``change.removes``
    removed. The guard is not checked: the caller passes an item it holds."""
    new = copy.deepcopy(item)
    for path, value in change.sets.items():
        target = new
        for name in path[:-1]:
            target = target.setdefault(name, {})
        target[path[-1]] = copy.deepcopy(value)
    for name in change.removes:
        new.pop(name, None)
    return new
