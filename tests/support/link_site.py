"""A linked site on loopback for link-card tests: the stdlib ``ThreadingHTTPServer`` on
127.0.0.1:0 answering each path from a table the test changes at will (``pages[path] =
(status, headers, body)``); unknown paths answer 404. ``hits`` counts requests per path."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Page = tuple[int, dict[str, str], bytes]


class LinkSite:
    """The table of answers and the server's base URL (``http://127.0.0.1:<port>``)."""

    def __init__(self) -> None:
        self.pages: dict[str, Page] = {}
        self.hits: Counter[str] = Counter()
        self.base = ""

    def url(self, path: str) -> str:
        return f"{self.base}{path}"

    def html(self, path: str, body: str, charset: str = "utf-8") -> None:
        kind = f"text/html; charset={charset}"
        self.pages[path] = (200, {"Content-Type": kind}, body.encode(charset))

    @contextmanager
    def serving(self) -> Iterator[LinkSite]:
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.hits[self.path] += 1
                status, headers, body = site.pages.get(self.path, (404, {}, b"not found"))
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{server.server_address[1]}"
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            server.shutdown()
            server.server_close()


def og_page(title: str, description: str, image: str | None) -> str:
    """An HTML page with OpenGraph tags (and an ``og:image`` when given)."""
    image_tag = f'<meta property="og:image" content="{image}">' if image else ""
    return (
        f"<!doctype html><html><head><title>Fallback</title>"
        f'<meta property="og:title" content="{title}">'
        f'<meta property="og:description" content="{description}">{image_tag}'
        f"</head><body><p>hello</p></body></html>"
    )
