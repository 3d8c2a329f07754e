"""The mutation runner's own pieces (issue 18): applying a mutation, the seed order, the table
and where it is written. The runs themselves are ``make mutants``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.faults.run import CI_SEEDS
from tests.mutants.run import (
    BEGIN,
    END,
    PACKAGE,
    ROOT,
    Mutant,
    Results,
    Verdict,
    load,
    table,
    write_results,
)

_BASE = Mutant(name="m", guarantee="g", path="p.py", find="a < b", replace="a <= b")


def _mutant(**overrides: Any) -> Mutant:
    return replace(_BASE, **overrides)


def test_mutant_mutate_nth_occurrence_replaces_only_that_one() -> None:
    m = _mutant(nth=2)
    assert m.mutate("a < b; a < b; a < b") == "a < b; a <= b; a < b"


@pytest.mark.parametrize("text", ["nothing here", "a < b and a < b"])
def test_mutant_mutate_absent_or_ambiguous_without_nth_raises(text: str) -> None:
    with pytest.raises(ValueError, match="occurs"):
        _mutant().mutate(text)


def test_mutant_seed_order_named_seeds_first_each_ci_seed_once() -> None:
    order = _mutant(seeds=(107, 999, 103)).seed_order()
    assert order[:2] == [107, 103]
    assert sorted(order) == sorted(CI_SEEDS)


def test_mutations_toml_every_mutation_applies_to_the_package() -> None:
    # A refactor that moves a mutated line must fail here, not in a 20-minute run.
    for m in load():
        m.mutate((ROOT / PACKAGE / m.path).read_text())
        assert set(m.seeds) <= set(CI_SEEDS), m.name


def test_table_unexplained_survivor_is_flagged_and_explained_one_gives_its_reason() -> None:
    mutants = [_mutant(name="a"), _mutant(name="b", survives="equivalent: x"), _mutant(name="c")]
    rows = table(
        [*mutants, _mutant(name="d")],
        {
            "a": Verdict("a", seeds_run=list(CI_SEEDS)),
            "b": Verdict("b", seeds_run=list(CI_SEEDS)),
            "c": Verdict("c", killed_by="`t` seed 101", check="early | x", seeds_run=[101]),
        },
    )
    assert "UNEXPLAINED" in rows[2]
    assert "(explained)" in rows[3] and "equivalent: x" in rows[3]
    assert "`t` seed 101" in rows[4] and "early \\| x" in rows[4]
    assert "not run yet" in rows[5]


def test_results_killer_seed_runs_first_next_time(tmp_path: Path) -> None:
    results = Results(tmp_path / "results.json")
    results.record(Verdict("c", killed_by="`t` seed 105", check="x", seeds_run=[101, 105]))
    results.record(Verdict("s", seeds_run=list(CI_SEEDS)))
    again = Results(tmp_path / "results.json")
    assert again.first_seeds("c") == (105,)
    assert again.first_seeds("s") == again.first_seeds("new") == ()


def test_write_results_replaces_only_between_the_markers(tmp_path: Path) -> None:
    doc = tmp_path / "r.md"
    doc.write_text(f"before\n{BEGIN}\nold\n{END}\nafter\n")
    write_results(["new 1", "new 2"], doc)
    assert doc.read_text() == f"before\n{BEGIN}\nnew 1\nnew 2\n{END}\nafter\n"


def test_write_results_without_markers_raises(tmp_path: Path) -> None:
    doc = tmp_path / "r.md"
    doc.write_text("no markers\n")
    with pytest.raises(ValueError, match="markers"):
        write_results(["x"], doc)
