"""The visible text of a Mastodon status, comparable with a post's text: the status HTML's
``content`` without tags (https://docs.joinmastodon.org/entities/Status/#content), ``<br>`` and
``</p>`` as breaks, whitespace collapsed, ``@user@domain`` as ``@user`` (as the HTML shows it).
Used to recognise a status an earlier attempt published when its answer was lost."""

from __future__ import annotations

import re
from html.parser import HTMLParser


class _TextOf(HTMLParser):
    """Plain text of a status's HTML ``content``: tags dropped, ``<br>`` and ``</p>`` as breaks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br":
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "p":
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def comparable(text: str) -> str:
    """Whitespace-collapsed text with ``@user@domain`` reduced to ``@user`` (the status HTML
    shows only ``@user``)."""
    text = re.sub(r"(?<![\w/=])@([A-Za-z0-9_]+)@[\w.-]+\w", r"@\1", text)
    return " ".join(text.split())


def status_text(content_html: str) -> str:
    """The visible text of a status's HTML ``content`` (comparable form)."""
    parser = _TextOf()
    parser.feed(content_html)
    parser.close()
    return comparable("".join(parser.parts))
