"""``docs/decisions.md`` as an index: every decision a file cites by name is a heading there, and
every link of its contents reaches a heading.

Code, tests and docs cite a decision as ``decision "<name>"`` (or ``decisions "<a>" and "<b>"``),
so a renamed or removed heading must fail here rather than leave a citation pointing nowhere.
Anchors follow GitHub's rule: lower case, punctuation other than ``-`` and ``_`` dropped, spaces
become ``-``, a repeated anchor gains ``-1``, ``-2``, ...
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DECISIONS = ROOT / "docs" / "decisions.md"
CITING = ("layers", "functions", "infra", "local", "web", "docs", "tests", "bench")
SUFFIXES = {".py", ".md", ".js", ".html", ".toml"}
#: ``decision "A"`` or ``decisions "A", "B" and "C"``, once comment markers and line breaks are
#: folded into single spaces.
CITATION = re.compile(r'\bdecisions? ((?:"[^"]{2,160}"(?:,? and |, )?)+)')
QUOTED = re.compile(r'"([^"]+)"')
#: Quoted names that are not decisions: STYLE.md's rules of thumb.
NOT_DECISIONS = {"Decide, then apply"}


def _headings() -> list[str]:
    return [
        line.lstrip("#").strip()
        for line in DECISIONS.read_text(encoding="utf-8").splitlines()
        if re.match(r"#{1,4} ", line)
    ]


def _anchors(headings: list[str]) -> set[str]:
    seen: Counter[str] = Counter()
    anchors = set()
    for heading in headings:
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        anchors.add(slug if seen[slug] == 0 else f"{slug}-{seen[slug]}")
        seen[slug] += 1
    return anchors


def _citations() -> dict[str, list[str]]:
    cited: dict[str, list[str]] = {}
    files = [ROOT / "README.md"]
    for top in CITING:
        files += [p for p in (ROOT / top).rglob("*") if p.suffix in SUFFIXES and p.is_file()]
    for path in files:
        if path == Path(__file__).resolve() or "vendor" in path.parts:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        folded = re.sub(r"\s*\n\s*(?:(?://|#):?\s*)?", " ", text)
        for match in CITATION.finditer(folded):
            for name in QUOTED.findall(match.group(1)):
                cited.setdefault(name, []).append(str(path.relative_to(ROOT)))
    return cited


def test_decisions_every_cited_name_is_a_heading() -> None:
    headings = set(_headings())
    missing = {
        name: paths for name, paths in _citations().items() if name not in headings | NOT_DECISIONS
    }
    assert not missing, f"cited decisions with no heading in docs/decisions.md: {missing}"


def test_decisions_contents_links_reach_a_heading() -> None:
    text = DECISIONS.read_text(encoding="utf-8")
    anchors = _anchors(_headings())
    links = re.findall(r"\]\(#([^)]+)\)", text)
    assert links, "docs/decisions.md has no contents"
    assert not [link for link in links if link not in anchors]


def test_decisions_names_are_unique_per_decision() -> None:
    names = [
        line[4:].strip()
        for line in DECISIONS.read_text(encoding="utf-8").splitlines()
        if line.startswith("### ")
    ]
    assert [name for name, n in Counter(names).items() if n > 1] == []
