"""The state diagram in docs/dispatch.md and the transition table cannot drift apart."""

from __future__ import annotations

from scheduled_posts.lifecycle.arrows import ARROWS
from tests.support.diagrams import ARROW, diagram_edges


def table_edges() -> set[tuple[str, str]]:
    return {(s, t) for arrow in ARROWS.values() for s in arrow.sources for t in arrow.targets}


def test_diagram_arrows_equal_the_transition_table() -> None:
    assert diagram_edges("dispatch.md") == table_edges()


def test_diagram_parser_reads_arrows_and_skips_final_markers() -> None:
    assert ARROW.match("    a --> b: label").groups() == ("a", "b", "label")
    assert ("published", "[*]") not in diagram_edges("dispatch.md")
