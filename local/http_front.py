"""The local API Gateway: HTTP on loopback -> HTTP API payload v2 events -> the API Lambda.

Each request is checked as the deployed JWT authorizer checks it (signature, ``exp``, ``nbf``,
``iat``, and ``iss``/``aud`` when configured; HS256 with ``LOCAL_JWT_SECRET`` here, the user
pool's keys in AWS), turned into the event API Gateway sends (payload format 2.0, claims under
``requestContext.authorizer.jwt``), passed to ``functions.api.handler.lambda_handler``
in-process, and its result mapped back to HTTP as API Gateway maps it.

Sources: API Gateway developer guide, "Create AWS Lambda proxy integrations for HTTP APIs"
(payload 2.0 and the response format), "Control access to HTTP APIs with JWT authorizers" and
"Troubleshooting issues with HTTP API JWT authorizers" (the 401 body and ``www-authenticate``).
"""

from __future__ import annotations

import base64
import json
import logging
import re
import threading
import time
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

import jwt

from local.emulation.environments import ProcessFunction
from local.emulation.http_api import build_event
from local.emulation.lambda_runtime import LambdaFunction
from local.static_site import StaticSite
from scheduled_posts.api.headers import API_HEADERS
from scheduled_posts.api.routes import ROUTES

log = logging.getLogger("local.api")

#: HTTP API payload limit (API Gateway quotas: "Payload size" 10 MB).
MAX_PAYLOAD_BYTES = 10 * 1024 * 1024

#: The API's routes (``scheduled_posts/api/routes.py``, the table ``infra/api.py`` deploys), as
#: ``(route, pattern)``, literal routes first as API Gateway prefers them ("Routing
#: API requests", HTTP APIs). API Gateway answers a request that matches none with 404
#: ``{"message":"Not Found"}``, before the authorizer and without calling the Lambda.
_ROUTE_PATTERNS = [
    (
        route,
        re.compile("^" + re.sub(r"\\{(\w+)\\}", r"(?P<\1>[^/]+)", re.escape(route.path)) + "$"),
    )
    for route in sorted(ROUTES, key=lambda r: r.path.count("{"))
]

#: The headers of the front's own JSON errors (401, 404, 413, 500): the API Lambda's headers
#: (``scheduled_posts.api.headers``) so that every API answer carries them locally.
_FRONT_JSON = (("content-type", "application/json"), *API_HEADERS.items())

#: The keys of the routes that answer without a token (no authorizer when deployed).
PUBLIC_ROUTE_KEYS = frozenset(route.key for route in ROUTES if not route.auth)


def match_route(method: str, path: str) -> tuple[str, dict[str, str]] | None:
    """The route key (``"GET /v1/channels/{channel_id}"``) and path parameters, or ``None``.

    A ``{name}`` matches one path segment; path parameters are URL-decoded.
    """
    for route, pattern in _ROUTE_PATTERNS:
        found = pattern.match(path) if route.method == method else None
        if found:
            return route.key, {k: unquote(v) for k, v in found.groupdict().items()}
    return None


class Unauthorized(Exception):
    """The token was refused; ``description`` goes into ``www-authenticate``."""

    def __init__(self, description: str | None) -> None:
        super().__init__(description or "missing token")
        self.description = description


@dataclass(frozen=True)
class JwtChecker:
    """The local JWT authorizer: HS256 with ``secret``; ``issuer``/``audience`` when set."""

    secret: str
    issuer: str | None = None
    audience: str | None = None

    def check(self, authorization: str | None) -> dict[str, Any]:
        """Return the token's claims from an ``Authorization: Bearer <jwt>`` header value.

        Raises
        ------
        Unauthorized
            When the header is missing (``description`` None) or the token is refused.
        """
        if not authorization:
            raise Unauthorized(None)
        value = authorization.strip()
        # API Gateway strips a "Bearer " prefix and otherwise takes the value as the token.
        token = value[7:].strip() if value[:7].lower() == "bearer " else value
        if not token or token.lower() == "bearer":
            raise Unauthorized("the token is malformed")
        try:
            claims = dict(
                jwt.decode(
                    token,
                    self.secret,
                    algorithms=["HS256"],
                    issuer=self.issuer,
                    options={
                        "require": ["exp"],
                        "verify_aud": False,  # checked below, as API Gateway does
                        "verify_iss": self.issuer is not None,
                    },
                )
            )
        except jwt.ExpiredSignatureError as exc:
            raise Unauthorized("the token has expired") from exc
        except jwt.ImmatureSignatureError as exc:
            raise Unauthorized("the token is not valid yet") from exc
        except jwt.InvalidIssuerError as exc:
            raise Unauthorized("the token does not have a valid issuer") from exc
        except jwt.MissingRequiredClaimError as exc:
            raise Unauthorized(f"the token does not have a {exc.claim} claim") from exc
        except jwt.InvalidSignatureError as exc:
            raise Unauthorized("the token signature is invalid") from exc
        except jwt.PyJWTError as exc:
            raise Unauthorized("the token is malformed") from exc
        if self.audience is not None and not self._audience_ok(claims):
            raise Unauthorized("the token does not have a valid audience")
        return claims

    def _audience_ok(self, claims: dict[str, Any]) -> bool:
        """``aud`` (a string or a list) names a configured audience; without ``aud``,
        ``client_id`` must (Cognito access tokens carry ``client_id``, not ``aud``).
        ``LOCAL_JWT_AUDIENCE`` may list several, comma-separated."""
        allowed = {a.strip() for a in (self.audience or "").split(",") if a.strip()}
        aud = claims.get("aud", claims.get("client_id"))
        values = {aud} if isinstance(aud, str) else set(aud) if isinstance(aud, list) else set()
        return bool(values & allowed)


def unauthorized_response(error: Unauthorized) -> tuple[int, dict[str, str], bytes]:
    """API Gateway's 401: ``{"message":"Unauthorized"}`` and its ``www-authenticate`` header."""
    if error.description is None:
        challenge = "Bearer"
    else:
        challenge = f'Bearer scope="" error="invalid_token" error_description="{error.description}"'
    return (
        401,
        {"content-type": "application/json", "www-authenticate": challenge, **API_HEADERS},
        b'{"message":"Unauthorized"}',
    )


def response_from_result(result: Any) -> tuple[int, list[tuple[str, str]], bytes]:
    """Map a handler's result to HTTP as API Gateway does for payload 2.0.

    A dict with ``statusCode`` is used as is (``headers``, ``cookies`` as ``set-cookie``,
    ``body``, ``isBase64Encoded``); anything else is taken as a JSON 200 body. A malformed
    response is API Gateway's 500 ``{"message":"Internal Server Error"}``.
    """
    if not isinstance(result, dict) or "statusCode" not in result:
        return 200, [("content-type", "application/json")], json.dumps(result).encode()
    try:
        status = int(result["statusCode"])
        headers = [(str(k), str(v)) for k, v in (result.get("headers") or {}).items()]
        for name, values in (result.get("multiValueHeaders") or {}).items():
            headers.extend((str(name), str(v)) for v in values)
        headers.extend(("set-cookie", str(c)) for c in result.get("cookies") or [])
        raw = result.get("body") or ""
        body = base64.b64decode(raw) if result.get("isBase64Encoded") else str(raw).encode()
    except (TypeError, ValueError):
        return internal_error()
    return status, headers, body


def internal_error() -> tuple[int, list[tuple[str, str]], bytes]:
    """API Gateway's answer when the integration fails: 500 ``Internal Server Error``."""
    return 500, list(_FRONT_JSON), b'{"message":"Internal Server Error"}'


#: Connections the kernel holds for the front before it accepts them (``listen`` backlog;
#: ``socketserver``'s default is 5). The docs' local load (20+ concurrent clients, a burst of
#: posts from the page and the benchmarks) needs more: past the backlog a connection is dropped
#: or reset before the server sees it.
LISTEN_BACKLOG = 128


class _FrontServer(ThreadingHTTPServer):
    """``ThreadingHTTPServer`` with a :data:`LISTEN_BACKLOG` deep accept queue."""

    request_queue_size = LISTEN_BACKLOG


class ApiFront:
    """The HTTP server: ``ThreadingHTTPServer`` on ``host:port`` in front of the API Lambda."""

    def __init__(
        self,
        function: LambdaFunction | ProcessFunction,
        checker: JwtChecker,
        *,
        host: str,
        port: int,
        site: StaticSite | None = None,
        connect_sources: tuple[str, ...] = (),
    ) -> None:
        self.function = function
        self.checker = checker
        #: The content calendar and its local sign-in, for requests no API route matches.
        self.site = site or StaticSite.for_authorizer(
            checker.secret, checker.issuer, checker.audience, connect_sources=connect_sources
        )
        front = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            server_version = "local-apigw"
            sys_version = ""

            def _serve(self) -> None:
                front.handle(self)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _serve

            def __getattr__(self, name: str) -> Any:
                # Any other method (TRACE, CONNECT, made-up ones) is routed like the rest, so it
                # gets API Gateway's 404 rather than http.server's 501 (decision "Schema fuzzing
                # runs in-process").
                if name.startswith("do_") and name[3:].isascii() and name[3:].isalpha():
                    return self._serve
                raise AttributeError(name)

            def log_message(self, format: str, *args: Any) -> None:
                log.debug("%s " + format, self.address_string(), *args)

        self.server = _FrontServer((host, port), _Handler)
        self.server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The bound port (useful with port 0)."""
        return int(self.server.server_address[1])

    def start(self) -> None:
        """Serve in a background thread."""
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop accepting requests and close the socket (also when never started)."""
        if self._thread is not None:
            self.server.shutdown()  # waits for serve_forever: only when it runs
        self.server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def handle(self, request: BaseHTTPRequestHandler) -> None:
        """Serve one request (called on the server's request thread)."""
        started = time.monotonic()
        length = int(request.headers.get("content-length") or 0)
        if length > MAX_PAYLOAD_BYTES:
            self._send(
                request,
                413,
                list(_FRONT_JSON),
                b'{"message":"Request Entity Too Large"}',
            )
            return
        body = request.rfile.read(length) if length else b""
        route = match_route(request.command, urlsplit(request.path).path)
        page = (
            None if route else self.site.answer(request.command, urlsplit(request.path).path, body)
        )
        if page is not None:
            self._send(request, *page)
            return
        if route is None:
            self._send(request, 404, list(_FRONT_JSON), b'{"message":"Not Found"}')
            return
        try:
            claims = self._claims(route[0], request.headers.get("authorization"))
        except Unauthorized as exc:
            status, headers, payload = unauthorized_response(exc)
            self._send(request, status, list(headers.items()), payload)
            return
        event = build_event(
            method=request.command,
            target=request.path,
            headers=list(request.headers.items()),
            body=body,
            claims=claims,
            source_ip=request.client_address[0],
            host=request.headers.get("host") or f"127.0.0.1:{self.port}",
            route_key=route[0],
            path_parameters=route[1],
        )
        try:
            result, _ = self.function.invoke(event)
            status, out_headers, payload = response_from_result(result)
        except Exception:
            log.exception("the API Lambda raised")
            status, out_headers, payload = internal_error()
        out_headers.append(("apigw-requestid", event["requestContext"]["requestId"]))
        self._send(request, status, out_headers, payload)
        log.debug(
            "request",
            extra={
                "method": request.command,
                "path": request.path,
                "status": status,
                "ms": int((time.monotonic() - started) * 1000),
            },
        )

    def _claims(self, route_key: str, authorization: str | None) -> dict[str, Any] | None:
        """The token's claims, or ``None`` on a public route (no authorizer, no token asked).

        Raises
        ------
        Unauthorized
            When a route behind the authorizer gets no token or a refused one.
        """
        if route_key in PUBLIC_ROUTE_KEYS:
            return None
        return self.checker.check(authorization)

    @staticmethod
    def _send(
        request: BaseHTTPRequestHandler,
        status: int,
        headers: list[tuple[str, str]],
        payload: bytes,
    ) -> None:
        try:
            reason = HTTPStatus(status).phrase
        except ValueError:
            reason = ""
        request.send_response(status, reason)
        for name, value in headers:
            if name.lower() not in {"content-length", "connection", "date", "server"}:
                request.send_header(name, value)
        request.send_header("content-length", str(len(payload)))
        request.end_headers()
        if request.command != "HEAD":
            request.wfile.write(payload)
