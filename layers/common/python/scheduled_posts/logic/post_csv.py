"""The posts CSV: the format ``GET /v1/scheduled-posts/export.csv`` writes and the import reads.

One header line, then one post per line (RFC 4180: comma-separated, ``"`` quoting, CRLF line
ends; written and read by Python's ``csv`` module, UTF-8 without a BOM)::

    publish_at,channels,content,media,language,schedule_id,status

* ``publish_at``: an RFC 3339 instant in UTC (``2026-12-01T08:00:00.000Z``);
* ``channels``, ``media``: ids separated by single spaces (ids never contain one);
* ``content``: the text, newlines kept inside the quoted cell;
* ``language``: the BCP 47 tag or empty;
* ``schedule_id``, ``status``: what the post is now, for the reader (an import ignores them).

**Formulas.** A cell a spreadsheet would read as a formula (its first character one of
``= + - @``, a tab or a carriage return) is written with a ``'`` before it (OWASP, "CSV
Injection"), and :func:`unescape_cell` removes exactly that ``'`` on the way back, so an export
re-imports to the same text.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from scheduled_posts.clock import format_instant
from scheduled_posts.models.post import Post

#: The columns, in order.
COLUMNS = ("publish_at", "channels", "content", "media", "language", "schedule_id", "status")
#: First characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
MEDIA_TYPE = "text/csv; charset=utf-8; header=present"  # RFC 4180 section 3


def escape_cell(value: str) -> str:
    """``value`` with a ``'`` before it when a spreadsheet would read it as a formula."""
    return "'" + value if value.startswith(FORMULA_STARTS) else value


def unescape_cell(value: str) -> str:
    """The inverse of :func:`escape_cell`: a ``'`` before a formula character is removed."""
    if value.startswith("'") and value[1:].startswith(FORMULA_STARTS):
        return value[1:]
    return value


def row_of(post: Post) -> list[str]:
    """The CSV cells of ``post`` (escaped), in :data:`COLUMNS` order."""
    cells = [
        format_instant(post.publish_at),
        " ".join(post.channel_ids),
        post.content,
        " ".join(post.media_ids),
        post.language or "",
        post.schedule_id,
        post.status.value,
    ]
    return [escape_cell(cell) for cell in cells]


def posts_csv(posts: Iterable[Post]) -> str:
    """The CSV document of ``posts`` (header first, CRLF line ends)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for post in posts:
        writer.writerow(row_of(post))
    return out.getvalue()
