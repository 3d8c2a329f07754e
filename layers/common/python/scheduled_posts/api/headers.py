"""The headers on every API answer, set by the API Lambda (so the deployed API and the local
front send them alike) and by the local front on its own errors.

* ``Cache-Control: no-store``: no cache may keep an answer (RFC 9111 section 5.2.2.5); answers
  hold signing secrets, the account export and a caller's posts.
* ``X-Content-Type-Options: nosniff``: a browser takes the declared ``Content-Type`` as is
  (Fetch standard, "X-Content-Type-Options" header).

Plain data and one function: the local front imports it without Powertools.
"""

from __future__ import annotations

from typing import Any

API_HEADERS: dict[str, str] = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}


def with_api_headers(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` (a payload v2 Lambda result) with :data:`API_HEADERS` set, replacing any
    other spelling of the same names (header names are case-insensitive, RFC 9110 section 5.1)."""
    names = {name.lower() for name in API_HEADERS}
    headers = {k: v for k, v in (result.get("headers") or {}).items() if k.lower() not in names}
    return {**result, "headers": {**headers, **API_HEADERS}}
