"""Writes the JSON Schema of every event type into ``docs/events.md``.

``python -m scheduled_posts.event_docs docs/events.md`` (``make openapi`` runs it) rewrites the
part between ``<!-- schemas:begin -->`` and ``<!-- schemas:end -->``: one ``### <type>`` heading
and one ``json`` block per type, from :func:`scheduled_posts.models.events.event_schemas`.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from scheduled_posts.models.events import event_schemas

BEGIN = "<!-- schemas:begin -->"
END = "<!-- schemas:end -->"
_BLOCK = re.compile(r"^### `([a-z_.]+)`\n\n```json\n(.*?)\n```", re.MULTILINE | re.DOTALL)


def render_schemas() -> str:
    """The generated section (without the markers)."""
    parts = []
    for kind, schema in event_schemas().items():
        parts.append(f"### `{kind}`\n\n```json\n{json.dumps(schema, indent=2)}\n```\n")
    return "\n".join(parts)


def rewrite(doc: str) -> str:
    """``doc`` with its generated section replaced (ValueError when a marker is missing)."""
    start, end = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    return f"{doc[:start]}\n\n{render_schemas()}\n{doc[end:]}"


def schemas_in(doc: str) -> dict[str, dict[str, Any]]:
    """The schemas a document shows, by type."""
    return {kind: json.loads(body) for kind, body in _BLOCK.findall(doc)}


def main(argv: list[str]) -> int:
    path = Path(argv[1] if len(argv) > 1 else "docs/events.md")
    path.write_text(rewrite(path.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
