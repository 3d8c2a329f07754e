"""The content calendar (``web/``) on the local stack's origin, and its local-only sign-in.

``make run`` serves the page at ``http://127.0.0.1:$API_PORT/``, the API's own origin, so the
page calls the API without CORS, as the deployed page does through its CORS-allowed origin.
Three kinds of answers, for requests that match no API route:

* ``GET``/``HEAD`` of a file under ``web/`` (``/`` is ``index.html``), with the security headers
  the deployed CloudFront distribution adds (both from ``infra/security_headers.py``; only
  ``connect-src`` differs);
* ``GET /config.json``: ``{"auth": "local", "api_base": ""}``, which tells the page to offer the
  local sign-in (the deployment writes its own ``config.json`` naming Cognito);
* ``POST /local/token`` with ``{"sub": "<user>"}``: ``{"access_token", "token_type",
  "expires_in"}``, a JWT the local authorizer accepts (``local/token.py``). This endpoint exists
  only here: no deployment has it.

Anything else is left to the caller (``None``), which answers API Gateway's 404.
"""

from __future__ import annotations

import json
import mimetypes
from collections.abc import Callable
from pathlib import Path

from infra.security_headers import FRAME_OPTIONS, REFERRER_POLICY, content_security_policy
from local.config import LocalConfig
from local.token import DEFAULT_TTL_SECONDS, make_token

#: ``web/`` at the repository root.
WEB_ROOT = Path(__file__).resolve().parents[1] / "web"
#: Longest user name accepted for a local token (the API's ``sub`` limit, OIDC Core 1.0 s. 2).
MAX_SUB_LENGTH = 255
#: Largest ``POST /local/token`` body read, in bytes.
MAX_TOKEN_BODY_BYTES = 4096


def security_headers(*connect_sources: str) -> tuple[tuple[str, str], ...]:
    """Headers on every static answer: those CloudFront's response headers policy adds to the
    deployed site (``infra/security_headers.py``), with ``connect-src 'self'`` (the API's
    origin) and ``connect_sources`` (locally, the embedded AWS's origin, where the page sends
    media uploads: the deployed page sends them to the bucket's S3 host)."""
    return (
        ("content-security-policy", content_security_policy(*connect_sources)),
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", REFERRER_POLICY),
        ("x-frame-options", FRAME_OPTIONS),
        ("cache-control", "no-cache"),
    )


#: :func:`security_headers` with the API's origin only.
SECURITY_HEADERS: tuple[tuple[str, str], ...] = security_headers()

Answer = tuple[int, list[tuple[str, str]], bytes]


class StaticSite:
    """Serve ``root`` and the local sign-in; :meth:`answer` is called for unrouted requests.

    ``mint(sub)`` returns a signed token for ``sub`` (:meth:`for_authorizer` builds one that
    matches the local JWT authorizer's secret, issuer and audience).
    """

    def __init__(
        self,
        mint: Callable[[str], str],
        *,
        root: Path = WEB_ROOT,
        ttl_seconds: int = DEFAULT_TTL_SECONDS,
        connect_sources: tuple[str, ...] = (),
    ) -> None:
        self.root = root.resolve()
        self.mint = mint
        self.ttl_seconds = ttl_seconds
        self.headers = security_headers(*connect_sources)

    @classmethod
    def for_authorizer(
        cls,
        secret: str,
        issuer: str | None,
        audience: str | None,
        *,
        root: Path = WEB_ROOT,
        connect_sources: tuple[str, ...] = (),
    ) -> StaticSite:
        """A site whose tokens carry the local authorizer's ``iss``/``aud`` when set."""
        config = LocalConfig(jwt_secret=secret, jwt_issuer=issuer, jwt_audience=audience)
        return cls(lambda sub: make_token(sub, config), root=root, connect_sources=connect_sources)

    def answer(self, method: str, path: str, body: bytes) -> Answer | None:
        """The answer to ``method path`` (path without query), or ``None`` when not ours."""
        if path == "/local/token":
            if method != "POST":
                return _problem(405, "Method Not Allowed", 'use POST with {"sub": "<user>"}')
            return self._token(body)
        if method not in ("GET", "HEAD"):
            return None
        if path == "/config.json":
            payload = json.dumps({"auth": "local", "api_base": ""}).encode()
            return 200, [("content-type", "application/json"), *self.headers], payload
        file = self._file(path)
        if file is None:
            return None
        kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        if kind.startswith("text/") or kind in ("application/javascript", "text/javascript"):
            kind += "; charset=utf-8"
        return 200, [("content-type", kind), *self.headers], file.read_bytes()

    def _file(self, path: str) -> Path | None:
        """The file under :attr:`root` that ``path`` names, or ``None`` (also for ``..``)."""
        relative = path.lstrip("/") or "index.html"
        if "\x00" in relative or "\\" in relative:
            return None
        candidate = (self.root / relative).resolve()
        if not candidate.is_relative_to(self.root) or not candidate.is_file():
            return None
        return candidate

    def _token(self, body: bytes) -> Answer:
        if len(body) > MAX_TOKEN_BODY_BYTES:
            return _problem(413, "Payload Too Large", "the body is over 4 KiB")
        try:
            sub = json.loads(body.decode("utf-8")).get("sub")
        except (ValueError, AttributeError):
            return _problem(400, "Bad Request", 'send {"sub": "<user>"} as JSON')
        if (
            not isinstance(sub, str)
            or not 0 < len(sub) <= MAX_SUB_LENGTH
            or not sub.isprintable()
            or sub.strip() != sub
        ):
            return _problem(
                422,
                "Validation Failed",
                "the user name must be 1 to 255 printable characters without surrounding spaces",
            )
        payload = {
            "access_token": self.mint(sub),
            "token_type": "Bearer",
            "expires_in": self.ttl_seconds,
        }
        return (
            200,
            [("content-type", "application/json"), ("cache-control", "no-store")],
            (json.dumps(payload).encode()),
        )


def _problem(status: int, title: str, detail: str) -> Answer:
    body = {"type": "about:blank", "title": title, "status": status, "detail": detail}
    return status, [("content-type", "application/problem+json")], json.dumps(body).encode()
