"""The local stack's page server and local-only sign-in (local/static_site.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from local.http_front import JwtChecker
from local.static_site import SECURITY_HEADERS, StaticSite

SECRET = "static-site-test-secret-long-enough-for-hs256"


@pytest.fixture
def site(tmp_path: Path) -> StaticSite:
    (tmp_path / "index.html").write_text("<!doctype html><title>x</title>")
    (tmp_path / "js").mkdir()
    (tmp_path / "js" / "main.js").write_text("export {};")
    (tmp_path.parent / "outside.txt").write_text("secret")
    return StaticSite.for_authorizer(SECRET, "local-issuer", "calendar", root=tmp_path)


def test_static_site_root_serves_index_with_security_headers(site: StaticSite) -> None:
    answer = site.answer("GET", "/", b"")
    assert answer is not None
    status, headers, body = answer
    assert (status, body) == (200, b"<!doctype html><title>x</title>")
    assert ("content-type", "text/html; charset=utf-8") in headers
    assert set(SECURITY_HEADERS) <= set(headers)
    csp = dict(headers)["content-security-policy"]
    assert "script-src 'self'" in csp and "'unsafe-inline'" not in csp


def test_static_site_module_script_has_a_javascript_type(site: StaticSite) -> None:
    answer = site.answer("GET", "/js/main.js", b"")
    assert answer is not None
    assert dict(answer[1])["content-type"].split(";")[0] in (
        "text/javascript",
        "application/javascript",
    )


@pytest.mark.parametrize(
    "path", ["/../outside.txt", "/js/../../outside.txt", "/missing.js", "/js", "/a\\b"]
)
def test_static_site_path_outside_root_or_missing_is_not_served(
    site: StaticSite, path: str
) -> None:
    assert site.answer("GET", path, b"") is None


def test_static_site_other_methods_are_left_to_the_api(site: StaticSite) -> None:
    assert site.answer("POST", "/", b"") is None
    assert site.answer("DELETE", "/index.html", b"") is None


def test_static_site_config_says_local_sign_in(site: StaticSite) -> None:
    answer = site.answer("GET", "/config.json", b"")
    assert answer is not None
    assert json.loads(answer[2]) == {"auth": "local", "api_base": ""}


def test_static_site_local_token_is_accepted_by_the_local_authorizer(site: StaticSite) -> None:
    answer = site.answer("POST", "/local/token", b'{"sub": "alice"}')
    assert answer is not None
    status, headers, body = answer
    payload = json.loads(body)
    assert status == 200 and payload["token_type"] == "Bearer" and payload["expires_in"] == 3600
    assert ("cache-control", "no-store") in headers
    claims = JwtChecker(SECRET, "local-issuer", "calendar").check(
        f"Bearer {payload['access_token']}"
    )
    assert claims["sub"] == "alice"


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (b"not json", 400),
        (b"[]", 400),
        (b'{"sub": ""}', 422),
        (b'{"sub": " alice"}', 422),
        (b'{"sub": "a\\nb"}', 422),
        (b'{"sub": 7}', 422),
        (json.dumps({"sub": "x" * 256}).encode(), 422),
        (b"x" * 5000, 413),
    ],
)
def test_static_site_local_token_refuses_bad_user_names_with_a_problem(
    site: StaticSite, body: bytes, status: int
) -> None:
    answer = site.answer("POST", "/local/token", body)
    assert answer is not None
    assert answer[0] == status
    assert ("content-type", "application/problem+json") in answer[1]


def test_static_site_local_token_only_takes_post(site: StaticSite) -> None:
    answer = site.answer("GET", "/local/token", b"")
    assert answer is not None and answer[0] == 405
