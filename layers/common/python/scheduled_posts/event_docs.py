"""Writes the JSON Schema of every event type into ``docs/events/<type>.json``, and their index
into ``docs/events.md``.

``python -m scheduled_posts.event_docs docs/events.md`` (``make openapi`` runs it) writes one file
per type from :func:`scheduled_posts.models.events.event_schemas` into the ``events/`` directory
beside the document (removing files of types that no longer exist), and rewrites the part of the
document between ``<!-- schemas:begin -->`` and ``<!-- schemas:end -->``: one line per type
linking its file. The prose stays in the document.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from scheduled_posts.models.events import event_schemas

BEGIN = "<!-- schemas:begin -->"
END = "<!-- schemas:end -->"
#: The schemas' directory, relative to the document.
SCHEMA_DIR = "events"


def render_schema(schema: dict[str, Any]) -> str:
    """One schema file's text: indented JSON and a final newline."""
    return json.dumps(schema, indent=2) + "\n"


def render_index() -> str:
    """The generated section of the document (without the markers): a link per type."""
    return "".join(f"- [`{kind}`]({SCHEMA_DIR}/{kind}.json)\n" for kind in event_schemas())


def rewrite(doc: str) -> str:
    """``doc`` with its generated section replaced (ValueError when a marker is missing)."""
    start, end = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    return f"{doc[:start]}\n\n{render_index()}\n{doc[end:]}"


def schemas_in(directory: Path) -> dict[str, dict[str, Any]]:
    """The schemas a directory holds, by type (the file name without ``.json``)."""
    return {
        path.name.removesuffix(".json"): json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(directory.glob("*.json"))
    }


def main(argv: list[str]) -> int:
    path = Path(argv[1] if len(argv) > 1 else "docs/events.md")
    directory = path.parent / SCHEMA_DIR
    directory.mkdir(exist_ok=True)
    schemas = event_schemas()
    for stale in directory.glob("*.json"):
        if stale.name.removesuffix(".json") not in schemas:
            stale.unlink()
    for kind, schema in schemas.items():
        (directory / f"{kind}.json").write_text(render_schema(schema), encoding="utf-8")
    path.write_text(rewrite(path.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
