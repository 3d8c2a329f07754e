"""The link preview: the metadata parser (pure) and the fetcher under the outbound URL policy
against a loopback site (decision "Bluesky link cards, frozen at scheduling time")."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scheduled_posts.platforms.link_preview import (
    MAX_PAGE_BYTES,
    LinkPreviewer,
    PreviewError,
    page_charset,
    parse_preview,
)
from scheduled_posts.settings import Settings
from tests.support.link_site import LinkSite, og_page
from tests.support.media import png

PAGE = "https://example.org/a/page"


def test_parse_preview_og_tags_win_over_twitter_and_title() -> None:
    html = (
        "<html><head><title>T</title>"
        '<meta name="twitter:title" content="Tw"><meta property="og:title" content="OG">'
        '<meta name="description" content="plain"><meta property="og:description" content="D">'
        '<meta property="og:image" content="/img.png"></head></html>'
    )
    preview = parse_preview(html, PAGE)
    assert (preview.title, preview.description) == ("OG", "D")
    assert preview.image == "https://example.org/img.png"  # resolved against the page


def test_parse_preview_falls_back_to_twitter_then_title_and_description() -> None:
    html = (
        "<html><head><title>  The\n  title </title>"
        '<meta name="twitter:image" content="https://cdn.example/x.jpg">'
        '<meta name="description" content="About &amp; more"></head></html>'
    )
    preview = parse_preview(html, PAGE)
    assert preview.title == "The title"
    assert preview.description == "About & more"  # character references decoded
    assert preview.image == "https://cdn.example/x.jpg"


def test_parse_preview_without_metadata_is_empty() -> None:
    preview = parse_preview("<p>just text <meta content='x'> <b>unclosed", PAGE)
    assert (preview.title, preview.description, preview.image) == ("", "", None)


def test_page_charset_header_then_meta_then_utf8() -> None:
    latin = b'<meta charset="iso-8859-1"><title>x</title>'
    equiv = b'<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">'
    assert page_charset("text/html; charset=Shift_JIS", latin) == "shift_jis"
    assert page_charset("text/html", latin) == "iso8859-1"
    assert page_charset("text/html", equiv) == "cp1252"
    assert page_charset("text/html", b"<p>none</p>") == "utf-8"
    assert page_charset("text/html; charset=nonsense", b"") == "utf-8"


def test_parse_preview_first_tag_of_a_name_wins() -> None:
    html = '<meta property="og:title" content="first"><meta property="og:title" content="2nd">'
    assert parse_preview(html, PAGE).title == "first"


@pytest.fixture
def site() -> Iterator[LinkSite]:
    with LinkSite().serving() as served:
        yield served


def previewer() -> LinkPreviewer:
    return LinkPreviewer(Settings(OUTBOUND_ALLOWED_ORIGINS="http://127.0.0.1"))


def test_previewer_reads_an_og_page_and_its_image(site: LinkSite) -> None:
    site.html("/p", og_page("Hello", "World", "/i.png"))
    image = png(20, 10)
    site.pages["/i.png"] = (200, {"Content-Type": "image/png"}, image)
    page = previewer().page(site.url("/p"))
    assert (page.title, page.description, page.image) == ("Hello", "World", site.url("/i.png"))
    assert previewer().image(site.url("/i.png")) == (image, "image/png")


def test_previewer_honours_the_charset(site: LinkSite) -> None:
    site.html("/latin", og_page("Caf\u00e9", "na\u00efve", None), charset="iso-8859-1")
    assert previewer().page(site.url("/latin")).title == "Caf\u00e9"


def test_previewer_reads_the_meta_charset_when_the_header_has_none(site: LinkSite) -> None:
    body = '<meta charset="iso-8859-1">' + og_page("Gar\u00e7on", "d", None)
    site.pages["/m"] = (200, {"Content-Type": "text/html"}, body.encode("iso-8859-1"))
    assert previewer().page(site.url("/m")).title == "Gar\u00e7on"


def test_previewer_follows_a_redirect_and_checks_it_again(site: LinkSite) -> None:
    site.html("/final", og_page("Moved", "here", None))
    site.pages["/old"] = (301, {"Location": "/final"}, b"")
    site.pages["/private"] = (302, {"Location": "https://10.0.0.7/admin"}, b"")
    assert previewer().page(site.url("/old")).title == "Moved"
    with pytest.raises(PreviewError, match="destination_refused"):
        previewer().page(site.url("/private"))


def test_previewer_refuses_a_loopback_url_outside_the_allow_list(site: LinkSite) -> None:
    site.html("/p", og_page("Hello", "World", None))
    with pytest.raises(PreviewError, match="destination_refused"):
        LinkPreviewer(Settings(OUTBOUND_ALLOWED_ORIGINS="")).page(site.url("/p"))


def test_previewer_refuses_non_html_huge_and_failing_answers(site: LinkSite) -> None:
    site.pages["/json"] = (200, {"Content-Type": "application/json"}, b"{}")
    huge = b"<html>" + b"x" * MAX_PAGE_BYTES
    site.pages["/huge"] = (200, {"Content-Type": "text/html"}, huge)
    site.pages["/gone"] = (410, {"Content-Type": "text/html"}, b"gone")
    site.pages["/loop"] = (302, {"Location": "/loop"}, b"")
    site.pages["/gz"] = (200, {"Content-Type": "text/html", "Content-Encoding": "gzip"}, b"x")
    for path, word in [
        ("/json", "not_html"),
        ("/huge", "too_large"),
        ("/gone", "http_410"),
        ("/loop", "too_many_redirects"),
        ("/gz", "encoded"),
    ]:
        with pytest.raises(PreviewError, match=word):
            previewer().page(site.url(path))


def test_previewer_refuses_an_image_that_is_not_one(site: LinkSite) -> None:
    site.pages["/i"] = (200, {"Content-Type": "text/html"}, b"<html>")
    with pytest.raises(PreviewError, match="not_image"):
        previewer().image(site.url("/i"))
