"""The README's API guide block erases its own user, never the one its other steps use."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _guide_block() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    guide = text[text.index("## API guide") :]
    start = guide.index("```bash\n") + len("```bash\n")
    return guide[start : guide.index("```\n", start)]


def test_readme_api_guide_erases_a_user_of_its_own() -> None:
    block = _guide_block()
    main = re.search(r"TOKEN=\$\(make -s token SUB=([\w-]+)\)", block)
    # other header variables and the SUB of their token: ERASE -> erase-me
    others = dict(
        re.findall(r'(\w+)="Authorization: Bearer \$\(make -s token SUB=([\w-]+)\)"', block)
    )
    erasures = re.findall(r'-X DELETE \$API/v1/me -H "\$(\w+)"', block)

    assert main is not None and erasures, "the guide's token or DELETE /v1/me moved"
    assert all(others.get(header, main.group(1)) != main.group(1) for header in erasures)
