"""A Mastodon API stand-in: the documented subset the ``mastodon`` adapter uses, for ``make
mastodon``, ``make run`` and the contract tests. Binds to 127.0.0.1 only.

No Mastodon-compatible server installs from the reachable registries, and the one mock on PyPI
(``mastodon-mock``) keeps idempotency keys forever and sends ``X-RateLimit-Reset`` as epoch
seconds, so this stand-in is written to the documentation (decision "The Mastodon stand-in is
ours"):

- ``GET /api/v1/accounts/verify_credentials`` (401 ``{"error": "The access token is invalid"}``
  for an unknown or revoked token) and ``GET /api/v2/instance``
  (``configuration.statuses.max_characters``, ``characters_reserved_per_url``).
- ``POST /api/v1/statuses`` (JSON or form): 422 for blank or over-long text; an
  ``Idempotency-Key`` seen in the last hour (:attr:`MastodonStandIn.idempotency_seconds`) for
  the same account answers the status created then, without a second one
  (https://docs.joinmastodon.org/methods/statuses/#create); ``visibility`` (422 unless one of
  :data:`VISIBILITIES`), ``spoiler_text`` (counted in the length, as Mastodon does) and
  ``sensitive`` are stored and shown on the status; ``in_reply_to_id`` makes it a reply (404
  ``Record not found`` for an unknown status, as Mastodon), shown as ``in_reply_to_id``.
- ``GET /api/v1/statuses/{id}/context``: its ``ancestors`` and ``descendants`` (the replies,
  depth first, oldest first), as https://docs.joinmastodon.org/methods/statuses/#context.
- ``GET /api/v1/accounts/{id}/statuses`` (newest first, ``limit``; public without a token, 403
  for a token without a read scope), ``GET /api/v1/statuses/{id}/source`` and
  ``DELETE /api/v1/statuses/{id}`` (the owner's token; 404 otherwise).
- Media (``local/mastodon_media.py``): ``POST /api/v2/media`` (200 for an image, 202 while a
  video or GIF processes), ``GET``/``PUT /api/v1/media/:id`` (206 while processing),
  ``media_ids[]`` (form) or ``media_ids`` (JSON) on ``POST /api/v1/statuses`` with Mastodon's
  422s (unprocessed, unknown, another account's or already attached media, more than 4), and
  ``media_attachments`` on every status (``GET /api/v1/statuses/{id}`` too); the instance
  reports its limits in ``configuration.media_attachments``.
- Rate limits per token: ``X-RateLimit-Limit/-Remaining/-Reset`` on every authenticated answer
  (reset as an ISO 8601 instant), 429 ``{"error": "Too many requests"}`` once spent
  (https://docs.joinmastodon.org/api/rate-limits/).

Test controls (in process, or over HTTP under ``/_stand_in/``): create accounts, revoke tokens,
change the instance's limits, fail the next requests with a status, or **lose** the next answers
(the request is processed, then the connection is closed with no answer). Time comes from an
injectable clock, so the one-hour key window is tested without sleeping.

Bodies are JSON or forms, as Mastodon takes them (a JSON object sent with curl's default form
type, ``curl -d '{"token": "..."}'``, is read as JSON too); a body that is neither, or a control
request with a missing or wrong field, answers 400 ``{"error": ...}``, and any failure of the
stand-in itself a 500 JSON answer, never a dropped connection.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from local.mastodon_media import MediaStore, parse_multipart
from scheduled_posts.platforms.text_length import grapheme_count, mastodon_length

Clock = Callable[[], datetime]


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Account:
    """A stand-in account and its token."""

    id: str
    username: str
    token: str
    revoked: bool = False
    #: False: a token with ``write:statuses`` only (reading answers 403, as Mastodon does).
    can_read: bool = True


#: A status's visibilities (https://docs.joinmastodon.org/methods/statuses/#create).
VISIBILITIES = ("public", "unlisted", "private", "direct")


@dataclass
class Status:
    """A stored status (``text`` is the source, ``content`` the rendered HTML)."""

    id: str
    account_id: str
    text: str
    created_at: datetime
    language: str | None = None
    #: The attached media's ids, in the order given.
    media_ids: tuple[str, ...] = ()
    #: ``public``, ``unlisted``, ``private`` or ``direct``; the content warning; sensitive.
    visibility: str = "public"
    spoiler_text: str = ""
    sensitive: bool = False
    #: The status this one replies to (a thread's part, a first comment).
    in_reply_to_id: str | None = None

    def content(self) -> str:
        escaped = html.escape(self.text, quote=False)
        escaped = re.sub(r"(?<![\w/=])@([A-Za-z0-9_]+)@[\w.-]+\w", r"@\1", escaped)
        return "<p>" + escaped.replace("\n", "<br />") + "</p>"


@dataclass
class _Window:
    started: datetime
    used: int = 0


@dataclass
class MastodonStandIn:
    """The stand-in's state; :meth:`serve` starts it on ``127.0.0.1``.

    ``rate_limit`` requests per ``rate_window_seconds`` per token (Mastodon's default is 300
    per 5 minutes); ``idempotency_seconds`` how long a key answers (Mastodon: about an hour).
    """

    clock: Clock = field(default=lambda: datetime.now(UTC))
    domain: str = "mastodon.local"
    max_characters: int | None = 500
    characters_reserved_per_url: int | None = 23
    rate_limit: int = 300
    rate_window_seconds: int = 300
    idempotency_seconds: int = 3600
    accounts: dict[str, Account] = field(default_factory=dict)
    statuses: list[Status] = field(default_factory=list)
    _keys: dict[tuple[str, str], tuple[str, datetime]] = field(default_factory=dict)
    _windows: dict[str, _Window] = field(default_factory=dict)
    _faults: list[tuple[str, int]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _next_id: int = 100
    #: Uploads, their processing and limits (``media.uploads`` counts uploads per SHA-256).
    media: MediaStore = field(default_factory=MediaStore)

    def __post_init__(self) -> None:
        self.media.domain = self.domain

    # -- controls --------------------------------------------------------------------------------

    def add_account(self, username: str, token: str | None = None) -> Account:
        """A new account with a fresh (or given) token."""
        with self._lock:
            self._next_id += 1
            account = Account(
                id=str(self._next_id), username=username, token=token or secrets.token_hex(16)
            )
            self.accounts[account.token] = account
            return account

    def revoke(self, token: str) -> None:
        """Make ``token`` answer 401 from now on."""
        self.accounts[token].revoked = True

    def lose_next_answers(self, count: int = 1, path: str = "/api/v1/statuses") -> None:
        """Process the next ``count`` requests to ``path``, then drop the connection unanswered."""
        self._faults.extend([(path, 0)] * count)

    def fail_next(self, status: int, count: int = 1, path: str = "/api/v1/statuses") -> None:
        """Answer the next ``count`` requests to ``path`` with ``status`` (not processed)."""
        self._faults.extend([(path, status)] * count)

    def delete_status(self, status_id: str) -> bool:
        """Delete status ``status_id`` as its author would (``DELETE /api/v1/statuses/:id``);
        ``False`` when there is none."""
        with self._lock:
            found = next((s for s in self.statuses if s.id == status_id), None)
            if found is not None:
                self.statuses.remove(found)
        return found is not None

    def statuses_of(self, account: Account) -> list[Status]:
        """The account's statuses, oldest first."""
        return [s for s in self.statuses if s.account_id == account.id]

    def _fault(self, path: str) -> int | None:
        with self._lock:
            for index, (where, status) in enumerate(self._faults):
                if where == path:
                    del self._faults[index]
                    return status
        return None

    # -- the API ---------------------------------------------------------------------------------

    def _rate(self, token: str, now: datetime) -> tuple[dict[str, str], bool]:
        with self._lock:
            window = self._windows.get(token)
            if window is None or now >= window.started + timedelta(
                seconds=self.rate_window_seconds
            ):
                window = self._windows[token] = _Window(started=now)
            window.used += 1
            spent = window.used > self.rate_limit
            reset = window.started + timedelta(seconds=self.rate_window_seconds)
            headers = {
                "X-RateLimit-Limit": str(self.rate_limit),
                "X-RateLimit-Remaining": str(max(0, self.rate_limit - window.used)),
                "X-RateLimit-Reset": _iso(reset),
            }
            return headers, spent

    def handle(
        self, method: str, path: str, query: dict[str, str], headers: dict[str, str], body: Any
    ) -> tuple[int, dict[str, str], Any]:
        """One request -> ``(status, headers, JSON body)``."""
        now = self.clock()
        if path == "/api/v2/instance" and method == "GET":
            statuses: dict[str, int] = {}
            if self.max_characters is not None:
                statuses["max_characters"] = self.max_characters
            if self.characters_reserved_per_url is not None:
                statuses["characters_reserved_per_url"] = self.characters_reserved_per_url
            statuses["max_media_attachments"] = self.media.max_attachments
            configuration = {"statuses": statuses, "media_attachments": self.media.configuration()}
            return 200, {}, {"domain": self.domain, "configuration": configuration}
        token = headers.get("authorization", "").removeprefix("Bearer ").strip()
        listing = re.fullmatch(r"/api/v1/accounts/([^/]+)/statuses", path)
        if not token and listing and method == "GET":  # public without a token (public posts)
            return 200, {}, self._list(listing.group(1), query)
        context = re.fullmatch(r"/api/v1/statuses/([^/]+)/context", path)
        if context and method == "GET":  # public statuses: no token needed
            found, listed = self._context(context.group(1))
            return found, {}, listed
        single = re.fullmatch(r"/api/v1/statuses/([^/]+)", path)
        if not token and single and method == "GET":
            status, answer = self._one(single.group(1))
            return status, {}, answer
        account = self.accounts.get(token)
        if account is None or account.revoked:
            return 401, {}, {"error": "The access token is invalid"}
        rate_headers, spent = self._rate(token, now)
        if spent:
            return 429, rate_headers, {"error": "Too many requests"}
        status, answer = self._route(
            method, path, query=query, headers=headers, body=body, account=account, now=now
        )
        return status, rate_headers, answer

    def _route(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, str],
        headers: dict[str, str],
        body: Any,
        account: Account,
        now: datetime,
    ) -> tuple[int, Any]:
        if path == "/api/v1/accounts/verify_credentials" and method == "GET":
            return 200, self._account_json(account)
        if path == "/api/v1/statuses" and method == "POST":
            return self._post_status(account, headers.get("idempotency-key"), body, now)
        if path == "/api/v2/media" and method == "POST":
            with self._lock:
                self._next_id += 1
                return self.media.upload(account.id, body or {}, new_id=str(self._next_id), now=now)
        media = re.fullmatch(r"/api/v1/media/([^/]+)", path)
        if media and method in ("GET", "PUT"):
            with self._lock:
                if method == "GET":
                    return self.media.show(account.id, media.group(1), now=now)
                return self.media.update(account.id, media.group(1), body or {}, now=now)
        reading = method == "GET" and (path.endswith("/statuses") or path.endswith("/source"))
        if reading and not account.can_read:
            return 403, {"error": "This action is outside the authorized scopes"}
        match = re.fullmatch(r"/api/v1/accounts/([^/]+)/statuses", path)
        if match and method == "GET":
            return 200, self._list(match.group(1), query)
        match = re.fullmatch(r"/api/v1/statuses/([^/]+)", path)
        if match and method == "GET":
            return self._one(match.group(1))
        if match and method == "DELETE":  # the owner's own status only, as Mastodon
            return self._delete(account, match.group(1))
        match = re.fullmatch(r"/api/v1/statuses/([^/]+)/source", path)
        if match and method == "GET":
            found = next((s for s in self.statuses if s.id == match.group(1)), None)
            if found is None:
                return 404, {"error": "Record not found"}
            return 200, {"id": found.id, "text": found.text, "spoiler_text": found.spoiler_text}
        return 404, {"error": "Not found"}

    def _post_status(
        self, account: Account, key: str | None, body: Any, now: datetime
    ) -> tuple[int, Any]:
        with self._lock:
            if key:
                seen = self._keys.get((account.id, key))
                if seen and now - seen[1] < timedelta(seconds=self.idempotency_seconds):
                    status = next(s for s in self.statuses if s.id == seen[0])
                    return 200, self._status_json(status)
            text = str((body or {}).get("status") or "")
            media_ids = _media_ids(body or {})
            refused, media = self.media.attachable(account.id, media_ids, now=now)
            if refused is not None:
                return 422, {"error": refused}
            if not text.strip() and not media:
                return 422, {"error": "Validation failed: Text can't be blank"}
            body = body or {}
            visibility = str(body.get("visibility") or "public")
            if visibility not in VISIBILITIES:
                return 422, {"error": f"Validation failed: Visibility {visibility} is invalid"}
            reply_to = str(body.get("in_reply_to_id") or "") or None
            if reply_to and not any(s.id == reply_to for s in self.statuses):
                return 404, {"error": "Record not found"}
            spoiler = str(body.get("spoiler_text") or "")
            limit = self.max_characters or 500
            # StatusLengthValidator: the spoiler text counts, as it is, with the status text
            counted = grapheme_count(spoiler)
            if counted + mastodon_length(text, self.characters_reserved_per_url or 23) > limit:
                return 422, {
                    "error": f"Validation failed: Text character limit of {limit} exceeded"
                }
            self._next_id += 1
            status = Status(
                id=str(self._next_id),
                account_id=account.id,
                text=text,
                created_at=now,
                language=body.get("language"),
                media_ids=tuple(m.id for m in media),
                visibility=visibility,
                spoiler_text=spoiler,
                sensitive=_flag(body.get("sensitive")) or bool(spoiler),
                in_reply_to_id=reply_to,
            )
            for attached in media:
                attached.status_id = status.id
            self.statuses.append(status)
            if key:
                self._keys[(account.id, key)] = (status.id, now)
            return 200, self._status_json(status)

    def _context(self, status_id: str) -> tuple[int, Any]:
        """A status's ancestors (oldest first) and descendants (depth first, oldest first)."""
        by_id = {s.id: s for s in self.statuses}
        found = by_id.get(status_id)
        if found is None:
            return 404, {"error": "Record not found"}
        ancestors: list[Status] = []
        while found.in_reply_to_id in by_id:
            found = by_id[found.in_reply_to_id]
            ancestors.insert(0, found)
        descendants: list[Status] = []
        pending = [status_id]
        while pending:  # depth first: a reply's own replies come before its next sibling
            parent = pending.pop()
            replies = [s for s in self.statuses if s.in_reply_to_id == parent]
            if parent != status_id:
                descendants.append(by_id[parent])
            pending += [r.id for r in reversed(replies)]
        return 200, {
            "ancestors": [self._status_json(s) for s in ancestors],
            "descendants": [self._status_json(s) for s in descendants],
        }

    def _one(self, status_id: str) -> tuple[int, Any]:
        found = next((s for s in self.statuses if s.id == status_id), None)
        if found is None:
            return 404, {"error": "Record not found"}
        return 200, self._status_json(found)

    def _delete(self, account: Account, status_id: str) -> tuple[int, Any]:
        with self._lock:
            found = next((s for s in self.statuses if s.id == status_id), None)
            if found is None or found.account_id != account.id:
                return 404, {"error": "Record not found"}
            self.statuses.remove(found)
        return 200, self._status_json(found)

    def _list(self, account_id: str, query: dict[str, str]) -> list[dict[str, Any]]:
        try:
            limit = min(40, max(1, int(query.get("limit") or 20)))
        except ValueError:
            limit = 20
        mine = [s for s in self.statuses if s.account_id == account_id]
        return [self._status_json(s) for s in reversed(mine)][:limit]

    def _account_json(self, account: Account) -> dict[str, Any]:
        return {
            "id": account.id,
            "username": account.username,
            "acct": account.username,
            "url": f"https://{self.domain}/@{account.username}",
        }

    def _status_json(self, status: Status) -> dict[str, Any]:
        username = next(a.username for a in self.accounts.values() if a.id == status.account_id)
        return {
            "id": status.id,
            "created_at": _iso(status.created_at),
            "content": status.content(),
            "language": status.language,
            "visibility": status.visibility,
            "spoiler_text": status.spoiler_text,
            "sensitive": status.sensitive,
            "in_reply_to_id": status.in_reply_to_id,
            "url": f"https://{self.domain}/@{username}/{status.id}",
            "uri": f"https://{self.domain}/users/{username}/statuses/{status.id}",
            "account": {"id": status.account_id, "username": username, "acct": username},
            "media_attachments": [self.media.json(self.media.items[i]) for i in status.media_ids],
        }

    # -- HTTP -------------------------------------------------------------------------------------

    def serve(self, port: int = 0) -> ThreadingHTTPServer:
        """Listen on ``127.0.0.1:port`` (0: a free port) in a daemon thread; returns the server
        (``server.server_address[1]`` is the port; ``server.shutdown()`` stops it)."""
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self, method: str) -> None:
                try:
                    self._dispatch(method)
                except BadRequestError as exc:
                    self._answer(400, {}, {"error": str(exc)})
                except Exception as exc:  # a stand-in bug answers; it never drops the request
                    self._answer(500, {}, {"error": f"stand-in failure: {type(exc).__name__}"})

            def _dispatch(self, method: str) -> None:
                parts = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
                try:
                    length = int(self.headers.get("Content-Length") or 0)
                except ValueError as exc:
                    raise BadRequestError("Content-Length is not a number") from exc
                if length > MAX_BODY_BYTES:  # the instance's proxy refuses it unread
                    self.close_connection = True
                    return self._answer(413, {}, {"error": "Request Entity Too Large"})
                raw = self.rfile.read(length) if length > 0 else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                body = parse_body(raw, headers)
                if parts.path.startswith("/_stand_in/"):
                    status, answer = stand_in._control(parts.path, body)
                    return self._answer(status, {}, answer)
                fault = stand_in._fault(parts.path)
                if fault is not None and fault != 0:
                    return self._answer(fault, {}, {"error": HTTPStatus(fault).phrase})
                status, extra, answer = stand_in.handle(method, parts.path, query, headers, body)
                if fault == 0:  # processed; the answer is lost on the way back
                    self.close_connection = True
                    self.connection.close()
                    return None
                return self._answer(status, extra, answer)

            def _answer(self, status: int, extra: dict[str, str], answer: Any) -> None:
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for name, value in extra.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

            def do_PUT(self) -> None:  # no such route: a JSON 404, not http.server's HTML 501
                self._serve("PUT")

            def do_PATCH(self) -> None:
                self._serve("PATCH")

            def do_DELETE(self) -> None:
                self._serve("DELETE")

        server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server

    @contextmanager
    def serving(self, port: int = 0) -> Iterator[str]:
        """:meth:`serve` for the length of a ``with`` block, which gets the base URL
        (``http://127.0.0.1:<port>``); the server is shut down and closed on leaving."""
        server = self.serve(port)
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            server.server_close()

    def _control(self, path: str, body: dict[str, Any] | None) -> tuple[int, Any]:
        body = body or {}
        if path == "/_stand_in/accounts":
            username, token = body.get("username") or "alice", body.get("token") or None
            if not isinstance(username, str) or not isinstance(token, str | None):
                return 400, {"error": "username and token must be strings"}
            if token is not None and token in self.accounts:
                return 400, {"error": "token is already an account's"}
            account = self.add_account(username, token)
            return 200, {"id": account.id, "username": account.username, "token": account.token}
        if path == "/_stand_in/revoke":
            token = body.get("token")
            if not isinstance(token, str) or not token:
                return 400, {"error": 'token is required (JSON {"token": ...} or form token=...)'}
            if token not in self.accounts:
                return 400, {"error": "token is no account's"}
            self.revoke(token)
            return 200, {"revoked": True}
        if path == "/_stand_in/statuses":
            return 200, [{**self._status_json(s), "text": s.text} for s in self.statuses]
        if path == "/_stand_in/media":
            return 200, [
                {**self.media.json(m), "sha256": m.sha256, "uploads": self.media.uploads[m.sha256]}
                for m in self.media.items.values()
            ]
        return 404, {"error": "Not found"}


#: The largest request body read: the video limit and room for the multipart framing.
MAX_BODY_BYTES = 100 * 1024 * 1024


def _media_ids(body: dict[str, Any]) -> list[str]:
    """``media_ids[]`` of a form (every value) or ``media_ids`` of a JSON body, as strings."""
    value = body.get("media_ids[]", body.get("media_ids"))
    if value is None or value == "":
        return []
    values = value if isinstance(value, list) else [value]
    return [str(v) for v in values]


class BadRequestError(ValueError):
    """A request the stand-in cannot read; ``str(exc)`` is the 400 answer's ``error``."""


def _flag(value: Any) -> bool:
    """A boolean parameter as Rails reads it: JSON ``true``, or a form's ``true``/``1``/``on``."""
    return value is True or str(value).lower() in ("true", "1", "on")


def parse_body(raw: bytes, headers: dict[str, str]) -> dict[str, Any] | None:
    """A request body as a dict: JSON for ``application/json``, or any body that is a JSON
    object (curl's ``-d '{...}'`` sends one typed as a form), a ``multipart/form-data`` body
    (:func:`~local.mastodon_media.parse_multipart`: files as ``FilePart``), else a form (last
    value of each field, every value of an ``x[]`` field); ``None`` when empty.

    Raises
    ------
    BadRequestError
        When a JSON-typed body is not a JSON object, a body is not UTF-8, or a multipart body
        cannot be read.
    """
    if not raw:
        return None
    content_type = headers.get("content-type", "")
    if content_type.startswith("multipart/form-data"):
        try:
            return parse_multipart(raw, content_type)
        except (ValueError, UnicodeDecodeError) as exc:
            raise BadRequestError(f"the multipart body cannot be read: {exc}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadRequestError("the body is not UTF-8") from exc
    typed_json = headers.get("content-type", "").startswith("application/json")
    if typed_json or text.lstrip().startswith("{"):
        try:
            value = json.loads(text)
        except ValueError as exc:
            if typed_json:
                raise BadRequestError("the body is not valid JSON") from exc
        else:
            if isinstance(value, dict):
                return value
            raise BadRequestError("the body must be a JSON object or a form")
    fields = parse_qs(text, keep_blank_values=True).items()
    return {k: v if k.endswith("[]") else v[-1] for k, v in fields}


def main(argv: list[str] | None = None) -> None:
    """``make mastodon``: serve on ``127.0.0.1:<port>`` with one account and print its token."""
    parser = argparse.ArgumentParser(description="Mastodon API stand-in on 127.0.0.1")
    parser.add_argument("--port", type=int, default=9300)
    parser.add_argument("--username", default="alice")
    parser.add_argument("--token", default=None)
    args = parser.parse_args(argv)
    stand_in = MastodonStandIn()
    account = stand_in.add_account(args.username, args.token)
    server = stand_in.serve(args.port)
    port = server.server_address[1]
    print(f"Mastodon stand-in at http://127.0.0.1:{port} (account @{account.username})")
    print(f"access_token: {account.token}")
    print("POST /_stand_in/accounts {'username'} adds one; POST /_stand_in/revoke {'token'}")
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()


if __name__ == "__main__":
    main()
