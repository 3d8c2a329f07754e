"""The state diagram in docs/dispatch.md and the transition table cannot drift apart."""

from __future__ import annotations

import re
from pathlib import Path

from scheduled_posts.lifecycle.arrows import ARROWS

DOC = Path(__file__).resolve().parents[3] / "docs" / "dispatch.md"
ARROW = re.compile(r"^\s*(\[\*\]|\w+)\s*-->\s*(\[\*\]|\w+)\s*(?::\s*(.*))?$")


def diagram_edges() -> set[tuple[str, str]]:
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"```mermaid\n(stateDiagram-v2\n.*?)```", text, re.S)
    assert block is not None, "no mermaid stateDiagram-v2 block in docs/dispatch.md"
    edges = set()
    for line in block.group(1).splitlines()[1:]:
        match = ARROW.match(line)
        if match and match.group(2) != "[*]":  # "x --> [*]" marks a final state, not an arrow
            edges.add((match.group(1), match.group(2)))
    return edges


def table_edges() -> set[tuple[str, str]]:
    return {(s, t) for arrow in ARROWS.values() for s in arrow.sources for t in arrow.targets}


def test_diagram_arrows_equal_the_transition_table() -> None:
    assert diagram_edges() == table_edges()


def test_diagram_parser_reads_arrows_and_skips_final_markers() -> None:
    assert ARROW.match("    a --> b: label").groups() == ("a", "b", "label")
    assert ("published", "[*]") not in diagram_edges()
