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


def _media_walks() -> list[str]:
    """The shell lines of the README's media section and docs/api.md's walk that turn the
    upload form's ``fields`` into curl arguments."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    section = readme[readme.index("### Media: an image with alt text") :]
    section = section[: section.index("\n## ")]
    return [
        line
        for text in (section, api)
        for line in text.splitlines()
        if '["fields"].items()' in line
    ]


def test_media_walks_send_the_form_fields_as_literal_strings() -> None:
    # curl -F reads a value beginning with "<" as a file name (the tagging field is XML), sends
    # nothing and exits 26; --form-string sends the value as it is.
    lines = _media_walks()
    assert len(lines) == 2, "the README's media section or docs/api.md's walk moved"
    assert all("--form-string" in line and '"-F' not in line for line in lines)


def test_readme_media_section_follows_the_networks_and_no_rule_refuses_network_media() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    networks = text.index("### Mastodon and Bluesky on this machine")
    media = text.index("### Media: an image with alt text")
    assert networks < media and "\n### " not in text[networks + 4 : media]
    assert "media for a Mastodon or Bluesky channel are a 422" not in " ".join(text.split())
