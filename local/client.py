"""A tiny HTTP client for the local API (stdlib only), used by the demo and the e2e test."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any


@dataclass
class Response:
    """Status, lower-cased headers and the JSON body (``None`` when empty or not JSON)."""

    status: int
    headers: dict[str, str]
    body: Any


class ApiClient:
    """Calls ``base_url`` with ``Authorization: Bearer <token>``; never raises on 4xx/5xx."""

    def __init__(self, base_url: str, token: str, *, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Response:
        """One request; ``body`` is sent as JSON when not ``None``.

        Raises
        ------
        urllib.error.URLError
            When the server cannot be reached.
        """
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(  # noqa: S310 (http(s) base URL of the local API)
            f"{self.base_url}{path}",
            data=data,
            method=method,
            headers={
                "authorization": f"Bearer {self.token}",
                "content-type": "application/json",
                **(headers or {}),
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as reply:  # noqa: S310
                return _response(reply.status, dict(reply.headers.items()), reply.read())
        except urllib.error.HTTPError as error:
            return _response(error.code, dict(error.headers.items()), error.read())


def _response(status: int, headers: dict[str, str], raw: bytes) -> Response:
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        body = raw.decode(errors="replace")
    return Response(status, {k.lower(): v for k, v in headers.items()}, body)
