"""Read the arrows of a mermaid ``stateDiagram-v2`` block in a doc, for the tests that hold a
state diagram equal to its transition table."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"
ARROW = re.compile(r"^\s*(\[\*\]|\w+)\s*-->\s*(\[\*\]|\w+)\s*(?::\s*(.*))?$")


def diagram_edges(doc: str, *, after: str = "") -> set[tuple[str, str]]:
    """The ``(from, to)`` arrows of the first state diagram in ``docs/<doc>`` after the text
    ``after``; ``x --> [*]`` marks a final state, not an arrow, and is skipped."""
    text = (DOCS / doc).read_text(encoding="utf-8")
    block = re.search(re.escape(after) + r".*?```mermaid\n(stateDiagram-v2\n.*?)```", text, re.S)
    assert block is not None, f"no mermaid stateDiagram-v2 block in docs/{doc} after {after!r}"
    edges = set()
    for line in block.group(1).splitlines()[1:]:
        match = ARROW.match(line)
        if match and match.group(2) != "[*]":
            edges.add((match.group(1), match.group(2)))
    return edges
