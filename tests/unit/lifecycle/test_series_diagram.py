"""The series state diagram in docs/recurring.md and the series transition table cannot drift
apart."""

from __future__ import annotations

import re
from pathlib import Path

from scheduled_posts.lifecycle.series_transitions import SERIES_ARROWS

DOC = Path(__file__).resolve().parents[3] / "docs" / "recurring.md"
ARROW = re.compile(r"^\s*(\[\*\]|\w+)\s*-->\s*(\[\*\]|\w+)\s*(?::\s*(.*))?$")


def diagram_edges() -> set[tuple[str, str]]:
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"## Series states\n+```mermaid\n(stateDiagram-v2\n.*?)```", text, re.S)
    assert block is not None, "no mermaid stateDiagram-v2 block under 'Series states'"
    edges = set()
    for line in block.group(1).splitlines()[1:]:
        match = ARROW.match(line)
        if match and match.group(2) != "[*]":  # "x --> [*]" marks a final state, not an arrow
            edges.add((match.group(1), match.group(2)))
    return edges


def table_edges() -> set[tuple[str, str]]:
    return {edge for edges in SERIES_ARROWS.values() for edge in edges}


def test_series_diagram_arrows_equal_the_series_transition_table() -> None:
    assert diagram_edges() == table_edges()


def test_series_diagram_parser_reads_arrows_and_skips_final_markers() -> None:
    assert ("paused", "active") in diagram_edges()
    assert ("ended", "[*]") not in diagram_edges()
