"""Fetch a linked page's preview (OpenGraph / Twitter card metadata) under the outbound URL
policy (decision "Bluesky link cards, frozen at scheduling time").

Every request goes through :class:`~scheduled_posts.platforms.http.OutboundHttp`, so each URL,
and each redirect's ``Location``, is checked by ``url_policy.check_destination`` (``https``
and public addresses only unless the origin is in ``OUTBOUND_ALLOWED_ORIGINS``, the port
rules), the transport connects to the checked address, never follows redirects itself, is
bounded by ``DELIVERY_TIMEOUT_SECONDS`` over connect and read, and reads at most the cap + 1
bytes (an answer over the cap is refused, never cut). Rules:

- at most :data:`MAX_REDIRECTS` redirects (301, 302, 303, 307, 308), each re-checked;
- the page: ``200``, ``Content-Type`` ``text/html`` or ``application/xhtml+xml``, no
  ``Content-Encoding`` (we ask for ``identity``), at most :data:`MAX_PAGE_BYTES`, decoded with
  the header's ``charset``, else the page's ``<meta charset>`` (:func:`page_charset`; UTF-8
  when none or unknown; undecodable bytes replaced);
- the image (``og:image``, else ``twitter:image``, resolved against the page URL): ``200``,
  ``image/*``, at most ``link_card.MAX_THUMB_BYTES``.

Metadata (https://ogp.me, X's card markup): ``og:title`` > ``twitter:title`` > ``<title>``;
``og:description`` > ``twitter:description`` > ``<meta name="description">``. Parsed with the
standard library's :class:`html.parser.HTMLParser` (no regular expression reads HTML).
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urljoin

from scheduled_posts.models.link_card import MAX_THUMB_BYTES
from scheduled_posts.platforms.http import HttpAnswer, OutboundError, OutboundHttp
from scheduled_posts.platforms.transport import Urllib3Transport
from scheduled_posts.platforms.url_policy import Resolver
from scheduled_posts.settings import Settings

#: Largest page read, in bytes (the metadata sits in ``<head>``; bigger pages are refused).
MAX_PAGE_BYTES = 512 * 1024
#: Redirects followed (each re-checked by the URL policy).
MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


class PreviewError(Exception):
    """The preview cannot be fetched; ``str(exc)`` says why (safe to show the creator)."""


@dataclass(frozen=True)
class PagePreview:
    """What a page says about itself: ``title``, ``description`` (``""`` when absent),
    ``image`` (an absolute URL or ``None``)."""

    title: str
    description: str
    image: str | None


class _MetaParser(HTMLParser):
    """Collects ``<meta property|name=... content=...>`` and the ``<title>`` text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.meta: dict[str, str] = {}
        self.title = ""
        self.charset = ""
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        if tag != "meta":
            return
        values = dict(attrs)
        if values.get("charset") and not self.charset:  # <meta charset="...">
            self.charset = values["charset"] or ""
        if (values.get("http-equiv") or "").lower() == "content-type" and not self.charset:
            self.charset = _charset(values.get("content") or "", default="")
        key = (values.get("property") or values.get("name") or "").strip().lower()
        content = values.get("content")
        if key and content is not None and key not in self.meta:
            self.meta[key] = content.strip()

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data


def parse_preview(html: str, page_url: str) -> PagePreview:
    """The preview of ``html`` served at ``page_url`` (rules: module docstring). Pure; never
    raises on hostile markup (the parser is lenient)."""
    parser = _MetaParser()
    parser.feed(html)
    parser.close()
    meta = parser.meta

    def first(*keys: str) -> str:
        return next((meta[k] for k in keys if meta.get(k)), "")

    title = first("og:title", "twitter:title") or " ".join(parser.title.split())
    description = first("og:description", "twitter:description", "description")
    image = first("og:image:secure_url", "og:image", "og:image:url", "twitter:image")
    return PagePreview(title, description, urljoin(page_url, image) if image else None)


def _charset(content_type: str, *, default: str = "utf-8") -> str:
    """The codec of a ``Content-Type``'s ``charset`` parameter; ``default`` when it has none
    or names no codec Python knows."""
    for part in content_type.split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.strip().lower() == "charset":
            return _codec(value.strip().strip('"'), default)
    return default


def _codec(name: str, default: str) -> str:
    try:
        return codecs.lookup(name).name
    except LookupError:
        return default


#: Bytes of a page searched for a ``<meta charset>`` when the header names none (the HTML
#: standard's prescan reads the first 1,024 bytes; we allow a longer head).
PRESCAN_BYTES = 4096


def page_charset(content_type: str, body: bytes) -> str:
    """The page's encoding: the header's ``charset``, else the first ``<meta charset>`` (or
    ``http-equiv`` Content-Type) in the first :data:`PRESCAN_BYTES`, else UTF-8."""
    declared = _charset(content_type, default="")
    if declared:
        return declared
    parser = _MetaParser()
    parser.feed(body[:PRESCAN_BYTES].decode("ascii", "replace"))
    return _codec(parser.charset, "utf-8") if parser.charset else "utf-8"


class LinkPreviewer:
    """Fetches pages and images under the URL policy of ``settings`` (its allowed origins and
    ports, ``DELIVERY_TIMEOUT_SECONDS``). ``resolver``: injectable for tests."""

    def __init__(self, settings: Settings, *, resolver: Resolver | None = None) -> None:
        def http(cap: int) -> OutboundHttp:
            return OutboundHttp.from_settings(
                settings,
                transport=Urllib3Transport(max_response_bytes=cap + 1),
                resolver=resolver,
            )

        self._page_http = http(MAX_PAGE_BYTES)
        self._image_http = http(MAX_THUMB_BYTES)

    def _get(self, http: OutboundHttp, url: str, accept: str, cap: int) -> tuple[str, HttpAnswer]:
        """``(final URL, answer)`` of a GET of ``url`` after at most :data:`MAX_REDIRECTS`
        checked redirects; raises :class:`PreviewError` on a refusal, error or overflow."""
        for _ in range(MAX_REDIRECTS + 1):
            try:
                answer = http.request(
                    "GET", url, headers={"Accept": accept, "Accept-Encoding": "identity"}
                )
            except OutboundError as exc:
                raise PreviewError(f"{exc.kind}: {exc}") from exc
            location = answer.header("Location")
            if answer.status in _REDIRECTS and location:
                url = urljoin(url, location.strip())
                continue
            if answer.status != 200:
                raise PreviewError(f"http_{answer.status}: {url} did not answer 200")
            if len(answer.body) > cap:
                raise PreviewError(f"too_large: {url} answered more than {cap} bytes")
            encoding = (answer.header("Content-Encoding") or "identity").strip().lower()
            if encoding != "identity":
                raise PreviewError(f"encoded: {url} answered Content-Encoding {encoding}")
            return url, answer
        raise PreviewError(f"too_many_redirects: more than {MAX_REDIRECTS}")

    def page(self, url: str) -> PagePreview:
        """The preview of the HTML page at ``url``.

        Raises
        ------
        PreviewError
            Refused by the URL policy, unreachable, not 200, not HTML, over
            :data:`MAX_PAGE_BYTES`, encoded, or too many redirects.
        """
        final, answer = self._get(
            self._page_http, url, "text/html,application/xhtml+xml", MAX_PAGE_BYTES
        )
        content_type = answer.header("Content-Type") or ""
        if content_type.split(";")[0].strip().lower() not in _HTML_TYPES:
            raise PreviewError(f"not_html: {final} answered {content_type or 'no type'!r}")
        return parse_preview(
            answer.body.decode(page_charset(content_type, answer.body), "replace"), final
        )

    def image(self, url: str) -> tuple[bytes, str]:
        """``(bytes, content type)`` of the image at ``url`` (``image/*``, at most
        ``MAX_THUMB_BYTES``).

        Raises
        ------
        PreviewError
            As :meth:`page`, or not ``image/*``.
        """
        final, answer = self._get(self._image_http, url, "image/*", MAX_THUMB_BYTES)
        content_type = (answer.header("Content-Type") or "").split(";")[0].strip().lower()
        if not content_type.startswith("image/"):
            raise PreviewError(f"not_image: {final} answered {content_type or 'no type'!r}")
        return answer.body, content_type
