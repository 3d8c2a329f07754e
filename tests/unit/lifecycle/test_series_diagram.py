"""The series state diagram in docs/recurring.md and the series transition table cannot drift
apart."""

from __future__ import annotations

from scheduled_posts.lifecycle.series_transitions import SERIES_ARROWS
from tests.support.diagrams import diagram_edges


def test_series_diagram_arrows_equal_the_series_transition_table() -> None:
    table = {edge for edges in SERIES_ARROWS.values() for edge in edges}
    assert diagram_edges("recurring.md", after="## Series states") == table


def test_series_diagram_is_the_one_under_its_heading() -> None:
    edges = diagram_edges("recurring.md", after="## Series states")
    assert ("paused", "active") in edges
    assert ("ended", "[*]") not in edges
