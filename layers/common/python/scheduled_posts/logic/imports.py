"""Bulk import (decision "Bulk import"): check every row of a file, then create its posts.

* :func:`check_rows` is the whole-file validation (``dry_run=true`` answers with it, a commit
  refuses to start on a file with any problem): per row, the channels resolved by id or name,
  the body built as an ordinary :class:`PostCreate` (its own field rules), then the ordinary
  create's rules (``logic/posts.py`` :func:`publish_at_errors`, ``logic/network_rules.py``
  :func:`channel_errors`). Reads only; writes nothing.
* :func:`import_rows` creates the rows' posts through :func:`create_post`, each under the id
  :func:`row_schedule_id` derives from (owner, the import's idempotency key, line): the post
  store's create is conditional on that id, so a retried chunk, a re-sent request or the same
  file uploaded again finds the posts it made instead of making them twice.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from scheduled_posts.clock import format_instant
from scheduled_posts.errors import LimitExceededError, ServiceError, ValidationFailedError
from scheduled_posts.logic.import_file import ImportRow
from scheduled_posts.logic.network_rules import channel_errors
from scheduled_posts.logic.post_checks import publish_at_errors
from scheduled_posts.logic.posts import PostDeps, create_post
from scheduled_posts.models.api import PostCreate

#: Namespace of the import and row ids (a fixed random UUID; never change it).
_IMPORT_NAMESPACE = uuid.UUID("0b6c7a52-93e4-4f3e-8a8d-5d1f2c9e4b71")
#: The CSV column a ``PostCreate`` field came from, for the row's problems.
_COLUMN_OF = {"channel_ids": "channels", "media_ids": "media", "publish_at": "publish_at"}


@dataclass
class RowResult:
    """One row's outcome: ``line``, the post's ``schedule_id`` (created or found again), or
    its ``problems`` (``{"loc": [column, ...], "msg": str, "type": str}``)."""

    line: int
    schedule_id: str | None = None
    problems: list[dict[str, Any]] = field(default_factory=list)
    request: PostCreate | None = None


def file_key(data: bytes) -> str:
    """The idempotency key of a file sent without ``Idempotency-Key``: its SHA-256 (hex)."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def import_id(owner: str, key: str) -> str:
    """The import's id: UUIDv5 of (owner, idempotency key), so a retried request finds it."""
    return str(uuid.uuid5(_IMPORT_NAMESPACE, f"{owner}\n{key}"))


def row_schedule_id(owner: str, key: str, line: int) -> str:
    """The post id of the import's row on ``line``: UUIDv5 of (owner, key, line)."""
    return str(uuid.uuid5(_IMPORT_NAMESPACE, f"{owner}\n{key}\nline {line}"))


def _column(loc: Sequence[Any]) -> list[Any]:
    """A create's error location (``["body", "channel_ids", 0]``) as the file's column."""
    rest = [part for part in loc if part != "body"]
    if rest and rest[0] in _COLUMN_OF:
        rest[0] = _COLUMN_OF[rest[0]]
    return rest


def _relocated(errors: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**e, "loc": _column(list(e.get("loc") or []))} for e in errors]


def _resolve(tokens: list[str], names: dict[str, str], ids: set[str]) -> list[str]:
    return [token if token in ids else names.get(token, token) for token in tokens]


def _request(row: ImportRow, channel_ids: list[str]) -> PostCreate | list[dict[str, Any]]:
    body: dict[str, Any] = {
        "content": row.content,
        "publish_at": format_instant(row.publish_at) if row.publish_at else None,
        "channel_ids": channel_ids,
        "media_ids": row.media_ids,
        "language": row.language,
    }
    try:
        return PostCreate.model_validate(body)
    except ValidationError as exc:
        return [
            {"loc": _column(e["loc"]), "msg": e["msg"], "type": e["type"]} for e in exc.errors()
        ]


def _check(owner: str, row: ImportRow, channel_ids: list[str], deps: PostDeps) -> RowResult:
    result = RowResult(line=row.line, problems=list(row.problems))
    if result.problems:
        return result
    built = _request(row, channel_ids)
    if isinstance(built, list):
        result.problems = built
        return result
    errors = publish_at_errors(built.publish_at, deps.clock.now(), deps.settings)  # type: ignore[arg-type]
    errors += channel_errors(
        owner,
        built.channel_ids,
        channels=deps.channels,
        content=built.content,
        media_ids=built.media_ids,
        media=deps.media,
    )
    result.problems = _relocated(errors)
    result.request = None if result.problems else built
    return result


def check_rows(owner: str, rows: Sequence[ImportRow], *, deps: PostDeps) -> list[RowResult]:
    """Every row's problems (empty for a good row, whose ``request`` is then set), in order.

    Channels are named by id or by name (the caller's channel of that exact name; an id wins
    when a name equals another channel's id). Reads the caller's channels once, then each
    row's channels and media (``channel_errors``); writes nothing.
    """
    known = deps.channels.list(owner)
    names = {c.name: c.channel_id for c in known}
    ids = {c.channel_id for c in known}
    return [_check(owner, row, _resolve(row.channels, names, ids), deps) for row in rows]


def import_rows(
    owner: str, key: str, checked: Sequence[RowResult], *, deps: PostDeps
) -> list[RowResult]:
    """Create each checked row's post under :func:`row_schedule_id`; returns every row's
    result (the post id, or the problem the create raised: a limit, a channel gone since the
    check). A row already created by an earlier try answers its stored post (no second post).
    """
    results: list[RowResult] = []
    for row in checked:
        if row.request is None:
            results.append(RowResult(line=row.line, problems=row.problems))
            continue
        schedule_id = row_schedule_id(owner, key, row.line)
        try:
            post = create_post(row.request, owner=owner, deps=deps, schedule_id=schedule_id)
        except ValidationFailedError as exc:
            results.append(RowResult(line=row.line, problems=_relocated(exc.errors)))
        except (LimitExceededError, ServiceError) as exc:
            # the problem's title as a word (``limit_exceeded``, ``queue_full``), as the API's
            # problem types are (``problems.type_for``), never a Python class name
            kind = "_".join(exc.title.lower().split())
            results.append(
                RowResult(line=row.line, problems=[{"loc": [], "msg": str(exc), "type": kind}])
            )
        else:
            results.append(RowResult(line=row.line, schedule_id=post.schedule_id))
    return results
