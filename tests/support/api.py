"""Call the API Lambda in-process with real API Gateway HTTP API (payload v2) events.

Typical use (inside the ``aws`` and ``clock`` fixtures)::

    promoted = install_api(aws.settings, clock)          # fake DNS, recording promoter
    alice = ApiClient("alice-sub")
    channel = alice.post("/v1/channels", {"platform": "webhook", "name": "n",
                                          "url": "https://hooks.example.com/x"}).json
    answer = alice.post("/v1/scheduled-posts", {...})
    assert answer.status == 201 and answer.headers["ETag"] == '"1"'

``make_event`` builds the event exactly as API Gateway sends it (lower-case headers,
``requestContext.authorizer.jwt.claims.sub``, ``rawQueryString``); ``sub=None`` leaves the
claims out. ``invoke`` runs ``functions.api.handler.lambda_handler`` and parses the JSON body.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from local.emulation.http_api import build_event
from local.emulation.lambda_runtime import LambdaContext
from scheduled_posts.api_app import ApiDependencies, set_dependencies
from scheduled_posts.clock import Clock
from scheduled_posts.data.aws import reset_clients
from scheduled_posts.models.messages import DueEntry
from scheduled_posts.settings import Settings

#: The API Lambda's timeout (seconds), as deployed (``StageConfig.api_timeout_seconds``).
API_TIMEOUT_SECONDS = 29

#: Every host a test channel may use, and the public address it "resolves" to.
FAKE_DNS: dict[str, list[str]] = {
    "hooks.example.com": ["93.184.216.34"],
    "other.example.com": ["93.184.216.35"],
    "internal.example.com": ["10.0.0.7"],
}


def fake_resolver(host: str) -> Sequence[str]:
    """Resolve from :data:`FAKE_DNS`; unknown names raise ``OSError`` like a failed lookup."""
    try:
        return FAKE_DNS[host]
    except KeyError as exc:
        raise OSError(f"unknown host {host}") from exc


@dataclass
class RecordingPromoter:
    """A promoter that records every :class:`DueEntry` it is given (and can be made to fail)."""

    entries: list[DueEntry] = field(default_factory=list)
    fail: bool = False

    def __call__(self, entry: DueEntry) -> None:
        self.entries.append(entry)
        if self.fail:
            raise RuntimeError("promotion failed (test)")


def install_api(
    settings: Settings,
    clock: Clock,
    *,
    resolver: Callable[[str], Sequence[str]] = fake_resolver,
    promoter: Callable[[DueEntry], None] | None = None,
) -> RecordingPromoter:
    """Point the API handler at ``settings`` (moto tables) and ``clock``.

    Returns the :class:`RecordingPromoter` in use (a new one unless ``promoter`` is given, in
    which case the returned recorder is unused). Call :func:`uninstall_api` when done (the
    ``api`` fixtures of the API tests do).
    """
    reset_clients()
    recorder = RecordingPromoter()
    set_dependencies(
        ApiDependencies(
            settings=settings, clock=clock, resolver=resolver, promoter=promoter or recorder
        )
    )
    return recorder


def uninstall_api() -> None:
    """Forget the installed dependencies (the next call rebuilds them from the environment)."""
    set_dependencies(None)
    reset_clients()


def make_event(
    method: str,
    path: str,
    *,
    sub: str | None = "alice",
    body: Any = None,
    raw_body: str | None = None,
    headers: Mapping[str, str] | None = None,
    query: Mapping[str, str] | None = None,
    is_base64: bool = False,
) -> dict[str, Any]:
    """An API Gateway HTTP API payload v2 event, built by the local stack's builder
    (:func:`local.emulation.http_api.build_event`).

    ``body`` is JSON-encoded unless ``raw_body`` (sent as is, marked base64 when
    ``is_base64``); ``sub=None`` leaves the authorizer claims out.
    """
    all_headers = {"content-type": "application/json", "authorization": "Bearer test"}
    all_headers.update({k.lower(): v for k, v in (headers or {}).items()})
    text = raw_body if raw_body is not None else (None if body is None else json.dumps(body))
    event = build_event(
        method=method,
        target=f"{path}?{urlencode(query)}" if query else path,
        headers=list(all_headers.items()),
        body=b"",
        claims=None if sub is None else {"sub": sub, "iss": "https://issuer.example.com"},
        source_ip="192.0.2.1",
        host="api.example.com",
        request_id="req",
        api_id="api",
    )
    if text is not None:
        event["body"] = text
        event["isBase64Encoded"] = is_base64
    return event


@dataclass
class ApiResponse:
    """A handler answer: status, headers (as sent) and the parsed JSON body (``None`` if empty)."""

    status: int
    headers: dict[str, str]
    json: Any
    raw: dict[str, Any]


def invoke(event: dict[str, Any]) -> ApiResponse:
    """Run the API handler on ``event`` and parse its answer."""
    from functions.api.handler import lambda_handler

    answer = lambda_handler(event, LambdaContext("api", API_TIMEOUT_SECONDS))
    body = answer.get("body")
    headers = dict(answer.get("headers") or {})
    is_json = "json" in headers.get("Content-Type", "application/json")
    return ApiResponse(
        status=answer["statusCode"],
        headers=headers,
        json=json.loads(body) if body and is_json else None,
        raw=answer,
    )


def text_of(answer: ApiResponse) -> str:
    """The body of a non-JSON answer (CSV, iCalendar) as text."""
    body = answer.raw.get("body") or ""
    if answer.raw.get("isBase64Encoded"):
        return base64.b64decode(body).decode("utf-8")
    return str(body)


class ApiClient:
    """A caller with a fixed ``sub``: ``get/post/patch/delete(path, body, headers=, query=)``."""

    def __init__(self, sub: str | None = "alice") -> None:
        self.sub = sub

    def request(self, method: str, path: str, body: Any = None, **kwargs: Any) -> ApiResponse:
        return invoke(make_event(method, path, sub=self.sub, body=body, **kwargs))

    def get(self, path: str, **kwargs: Any) -> ApiResponse:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, body: Any = None, **kwargs: Any) -> ApiResponse:
        return self.request("POST", path, body, **kwargs)

    def patch(self, path: str, body: Any = None, **kwargs: Any) -> ApiResponse:
        return self.request("PATCH", path, body, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> ApiResponse:
        return self.request("DELETE", path, **kwargs)

    def create_channel(self, name: str = "main", url: str = "https://hooks.example.com/in") -> str:
        """Create a webhook channel and return its id (asserts the 201)."""
        answer = self.post("/v1/channels", {"platform": "webhook", "name": name, "url": url})
        assert answer.status == 201, answer.json
        return str(answer.json["channel_id"])

    def schedule(self, publish_at: str, channel_ids: list[str], content: str = "hello") -> dict:
        """Create a post and return its JSON (asserts the 201)."""
        answer = self.post(
            "/v1/scheduled-posts",
            {"content": content, "publish_at": publish_at, "channel_ids": channel_ids},
        )
        assert answer.status == 201, answer.json
        return dict(answer.json)
