"""The Mastodon stand-in (local/mastodon.py) reads JSON and form bodies, including the README's
revoke command, and answers a bad request with a 400 JSON error instead of dropping it."""

from __future__ import annotations

import http.client
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local.mastodon import Account, BadRequestError, MastodonStandIn, parse_body

ROOT = Path(__file__).resolve().parents[2]
FORM = "application/x-www-form-urlencoded"  # what curl -d sends without a -H


@pytest.fixture
def stand_in() -> Iterator[tuple[MastodonStandIn, int]]:
    state = MastodonStandIn()
    server = state.serve()
    try:
        yield state, int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def account(stand_in: tuple[MastodonStandIn, int]) -> Account:
    return stand_in[0].add_account("alice")


def _post(
    port: int, path: str, body: bytes, content_type: str = FORM, **headers: str
) -> tuple[int, Any]:
    """POST over loopback; ``(status, JSON answer)``. A dropped connection raises."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        sent = {"Content-Type": content_type, "Content-Length": str(len(body)), **headers}
        connection.request("POST", path, body=body, headers=sent)
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read())
    finally:
        connection.close()


def _verify(port: int, token: str) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request(
            "GET",
            "/api/v1/accounts/verify_credentials",
            headers={"Authorization": f"Bearer {token}"},
        )
        answer = connection.getresponse()
        answer.read()
        return answer.status
    finally:
        connection.close()


def _readme_revoke_body(token: str) -> bytes:
    """The body the README's revoke command sends: its ``-d '...'`` with ``$MT`` filled in."""
    readme = (ROOT / "README.md").read_text()
    command = re.search(r"_stand_in/revoke (.*?)`", readme)
    assert command is not None, "the README no longer shows the revoke command"
    quoted = re.fullmatch(r"-d '(.*)'", command.group(1))
    assert quoted is not None, command.group(1)
    # '{"token": "'$MT'"}': the shell joins the quoted parts around $MT
    return quoted.group(1).replace("'$MT'", token).encode()


def test_stand_in_readme_revoke_command_revokes_the_token(
    stand_in: tuple[MastodonStandIn, int], account: Account
) -> None:
    _, port = stand_in

    status, answer = _post(port, "/_stand_in/revoke", _readme_revoke_body(account.token))

    assert (status, answer, _verify(port, account.token)) == (200, {"revoked": True}, 401)


def test_stand_in_revoke_with_a_form_body_revokes_the_token(
    stand_in: tuple[MastodonStandIn, int], account: Account
) -> None:
    _, port = stand_in

    status, _ = _post(port, "/_stand_in/revoke", f"token={account.token}".encode())

    assert (status, _verify(port, account.token)) == (200, 401)


def test_stand_in_revoke_with_a_json_body_revokes_the_token(
    stand_in: tuple[MastodonStandIn, int], account: Account
) -> None:
    _, port = stand_in
    body = json.dumps({"token": account.token}).encode()

    status, _ = _post(port, "/_stand_in/revoke", body, "application/json")

    assert (status, _verify(port, account.token)) == (200, 401)


@pytest.mark.parametrize(
    ("path", "body", "content_type", "error"),
    [
        ("/_stand_in/revoke", b"", FORM, "token is required"),
        ("/_stand_in/revoke", b"tokn=abc", FORM, "token is required"),
        ("/_stand_in/revoke", b'{"token": 5}', "application/json", "token is required"),
        ("/_stand_in/revoke", b"token=unknown", FORM, "no account's"),
        ("/_stand_in/revoke", b'{"token": ', "application/json", "not valid JSON"),
        ("/_stand_in/revoke", b'["token"]', "application/json", "JSON object or a form"),
        ("/_stand_in/revoke", b"\xff\xfe", FORM, "not UTF-8"),
        ("/_stand_in/accounts", b'{"username": ["bob"]}', "application/json", "strings"),
        ("/_stand_in/accounts", b'{"token": 7}', "application/json", "strings"),
        ("/api/v1/statuses", b'["hello"]', "application/json", "JSON object or a form"),
        ("/api/v1/statuses", b'{"status": ', "application/json", "not valid JSON"),
    ],
)
def test_stand_in_bad_request_answers_400_json(
    stand_in: tuple[MastodonStandIn, int],
    account: Account,
    path: str,
    body: bytes,
    content_type: str,
    error: str,
) -> None:
    _, port = stand_in

    status, answer = _post(port, path, body, content_type, Authorization=f"Bearer {account.token}")

    assert status == 400
    assert error in answer["error"]


def test_stand_in_account_with_a_taken_token_answers_400(
    stand_in: tuple[MastodonStandIn, int], account: Account
) -> None:
    state, port = stand_in

    status, _ = _post(port, "/_stand_in/accounts", f"username=bob&token={account.token}".encode())

    assert (status, state.accounts[account.token].username) == (400, "alice")


def test_stand_in_failure_answers_500_json_instead_of_dropping_the_connection(
    stand_in: tuple[MastodonStandIn, int], account: Account, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, port = stand_in

    def broken(*_args: object, **_kwargs: object) -> None:
        raise KeyError("boom")

    monkeypatch.setattr(state, "_post_status", broken)

    status, answer = _post(
        port, "/api/v1/statuses", b"status=hi", Authorization=f"Bearer {account.token}"
    )

    assert (status, answer) == (500, {"error": "stand-in failure: KeyError"})


def test_stand_in_status_from_a_form_body_is_created(
    stand_in: tuple[MastodonStandIn, int], account: Account
) -> None:
    state, port = stand_in

    status, answer = _post(
        port, "/api/v1/statuses", b"status=Hello+there", Authorization=f"Bearer {account.token}"
    )

    assert (status, [s.text for s in state.statuses_of(account)]) == (200, ["Hello there"])
    assert answer["content"] == "<p>Hello there</p>"


@pytest.mark.parametrize(
    ("raw", "content_type", "expected"),
    [
        (b"", FORM, None),
        (b"a=1&a=2&b=", FORM, {"a": "2", "b": ""}),
        (b'  {"a": 1}', FORM, {"a": 1}),
        (b'{"a": 1}', "application/json; charset=utf-8", {"a": 1}),
        (b"{not json", FORM, {"{not json": ""}),  # a form field after all
    ],
)
def test_parse_body_reads_json_and_forms(
    raw: bytes, content_type: str, expected: dict[str, Any] | None
) -> None:
    assert parse_body(raw, {"content-type": content_type}) == expected


def test_parse_body_json_typed_garbage_raises_bad_request() -> None:
    with pytest.raises(BadRequestError, match="not valid JSON"):
        parse_body(b"nope", {"content-type": "application/json"})


def test_stand_in_unknown_method_answers_404_json(
    stand_in: tuple[MastodonStandIn, int], account: Account
) -> None:
    _, port = stand_in
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request(
            "PATCH", "/api/v1/statuses/1", headers={"Authorization": f"Bearer {account.token}"}
        )
        answer = connection.getresponse()
        status, body = answer.status, json.loads(answer.read())
    finally:
        connection.close()

    assert (status, body) == (404, {"error": "Not found"})


def test_stand_in_delete_removes_the_owners_status_only(
    stand_in: tuple[MastodonStandIn, int], account: Account
) -> None:
    state, _ = stand_in
    other = state.add_account("other")
    created, _, _ = state.handle(
        "POST",
        "/api/v1/statuses",
        {},
        {"authorization": f"Bearer {account.token}"},
        {"status": "x"},
    )
    status_id = created and state.statuses[0].id
    bearer = {"authorization": f"Bearer {other.token}"}
    assert state.handle("DELETE", f"/api/v1/statuses/{status_id}", {}, bearer, None)[0] == 404
    bearer = {"authorization": f"Bearer {account.token}"}
    assert state.handle("DELETE", f"/api/v1/statuses/{status_id}", {}, bearer, None)[0] == 200
    assert state.statuses == []
    assert state.handle("GET", f"/api/v1/statuses/{status_id}", {}, {}, None)[0] == 404


def test_stand_in_status_keeps_visibility_spoiler_and_sensitive(
    stand_in: tuple[MastodonStandIn, int], account: Account
) -> None:
    state, port = stand_in
    body = json.dumps({"status": "Hi", "visibility": "unlisted", "spoiler_text": "cw"}).encode()
    status, answer = _post(
        port, "/api/v1/statuses", body, "application/json", Authorization=f"Bearer {account.token}"
    )
    assert status == 200, answer
    assert (answer["visibility"], answer["spoiler_text"], answer["sensitive"]) == (
        "unlisted",
        "cw",
        True,  # a content warning marks the status sensitive, as Mastodon does
    )
    [stored] = state.statuses_of(account)
    assert (stored.visibility, stored.spoiler_text) == ("unlisted", "cw")


def test_stand_in_form_sensitive_false_is_false(
    stand_in: tuple[MastodonStandIn, int], account: Account
) -> None:
    _, port = stand_in
    status, answer = _post(
        port,
        "/api/v1/statuses",
        b"status=Hi&sensitive=false",
        Authorization=f"Bearer {account.token}",
    )
    assert (status, answer["sensitive"], answer["visibility"]) == (200, False, "public")


def test_stand_in_refuses_an_unknown_visibility_and_counts_the_spoiler(
    stand_in: tuple[MastodonStandIn, int], account: Account
) -> None:
    state, port = stand_in
    auth = f"Bearer {account.token}"
    bad = json.dumps({"status": "Hi", "visibility": "everyone"}).encode()
    assert _post(port, "/api/v1/statuses", bad, "application/json", Authorization=auth)[0] == 422
    long = json.dumps({"status": "a" * 490, "spoiler_text": "b" * 11}).encode()
    status, answer = _post(port, "/api/v1/statuses", long, "application/json", Authorization=auth)
    assert status == 422 and "character limit of 500" in answer["error"]
    assert state.statuses_of(account) == []
