"""The local API Gateway front: JWT check, payload v2 events, response mapping, real HTTP."""

from __future__ import annotations

import base64
import http.client
import json
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import jwt
import pytest

from local.config import LocalConfig
from local.emulation.environments import ProcessFunction
from local.emulation.http_api import build_event
from local.emulation.lambda_runtime import LambdaFunction
from local.http_front import (
    ApiFront,
    JwtChecker,
    Unauthorized,
    match_route,
    response_from_result,
    unauthorized_response,
)
from local.token import make_token

SECRET = "unit-secret-long-enough-for-hs256-keys"


def _token(**claims: Any) -> str:
    now = int(time.time())
    body = {"sub": "alice", "iat": now, "exp": now + 60, **claims}
    return jwt.encode({k: v for k, v in body.items() if v is not None}, SECRET, algorithm="HS256")


def test_jwt_checker_valid_token_returns_claims() -> None:
    claims = JwtChecker(SECRET).check(f"Bearer {_token()}")
    assert claims["sub"] == "alice"


def test_jwt_checker_missing_header_raises_without_description() -> None:
    with pytest.raises(Unauthorized) as caught:
        JwtChecker(SECRET).check(None)
    assert caught.value.description is None


# Tokens are built when the test runs, not at collection: a long suite would otherwise see
# every "valid for 60 s" token expire before its test starts.
@pytest.mark.parametrize(
    ("make", "description"),
    [
        (lambda: _token(exp=int(time.time()) - 5), "the token has expired"),
        (lambda: _token(nbf=int(time.time()) + 300), "the token is not valid yet"),
        (lambda: _token(exp=None), "the token does not have a exp claim"),
        (
            lambda: jwt.encode(
                {"sub": "a", "exp": int(time.time()) + 60},
                "other-secret-long-enough-for-hs256-keys",
                algorithm="HS256",
            ),
            "the token signature is invalid",
        ),
        (lambda: "not-a-jwt", "the token is malformed"),
    ],
    ids=["expired", "not-yet-valid", "no-exp", "bad-signature", "malformed"],
)
def test_jwt_checker_bad_token_raises_with_reason(
    make: Callable[[], str], description: str
) -> None:
    token = make()
    with pytest.raises(Unauthorized) as caught:
        JwtChecker(SECRET).check(f"Bearer {token}")
    assert caught.value.description == description


def test_jwt_checker_configured_audience_refuses_other_audience() -> None:
    with pytest.raises(Unauthorized) as caught:
        JwtChecker(SECRET, audience="scheduled-posts").check(_token(aud="someone-else"))
    assert caught.value.description == "the token does not have a valid audience"


def test_jwt_checker_configured_issuer_refuses_other_issuer() -> None:
    with pytest.raises(Unauthorized) as caught:
        JwtChecker(SECRET, issuer="https://issuer.local").check(_token(iss="https://evil"))
    assert caught.value.description == "the token does not have a valid issuer"


def test_make_token_with_issuer_and_audience_passes_the_checker() -> None:
    config = LocalConfig(jwt_secret=SECRET, jwt_issuer="https://i", jwt_audience="aud")
    claims = JwtChecker(SECRET, "https://i", "aud").check(f"Bearer {make_token('bob', config)}")
    assert (claims["sub"], claims["exp"] - claims["iat"]) == ("bob", 3600)


def test_unauthorized_response_invalid_token_matches_api_gateway() -> None:
    status, headers, body = unauthorized_response(Unauthorized("the token has expired"))
    assert (status, body) == (401, b'{"message":"Unauthorized"}')
    assert headers["www-authenticate"] == (
        'Bearer scope="" error="invalid_token" error_description="the token has expired"'
    )


def test_build_event_claims_are_strings_and_scopes_a_list() -> None:
    event = build_event(
        method="GET",
        target="/v1/x",
        headers=[],
        body=b"",
        claims={"sub": "alice", "exp": 1700000000, "scope": "a b", "groups": ["g1", "g2"]},
        source_ip="127.0.0.1",
        host="127.0.0.1:8080",
    )
    jwt_part = event["requestContext"]["authorizer"]["jwt"]
    assert jwt_part["claims"] == {
        "sub": "alice",
        "exp": "1700000000",
        "scope": "a b",
        "groups": "[g1 g2]",
    }
    assert jwt_part["scopes"] == ["a", "b"]


def test_build_event_repeated_query_and_headers_joined_with_commas() -> None:
    event = build_event(
        method="GET",
        target="/v1/scheduled-posts?status=a&status=b&limit=5",
        headers=[("X-A", "1"), ("x-a", "2"), ("Cookie", "c1=1; c2=2")],
        body=b"",
        claims={"sub": "alice"},
        source_ip="127.0.0.1",
        host="h",
    )
    assert event["queryStringParameters"] == {"status": "a,b", "limit": "5"}
    assert event["rawQueryString"] == "status=a&status=b&limit=5"
    assert event["headers"]["x-a"] == "1,2"
    assert event["cookies"] == ["c1=1", "c2=2"]
    assert (event["version"], event["rawPath"]) == ("2.0", "/v1/scheduled-posts")


def test_build_event_binary_body_is_base64_encoded() -> None:
    event = build_event(
        method="POST",
        target="/v1/x",
        headers=[("content-type", "application/octet-stream")],
        body=b"\xff\x00",
        claims={"sub": "a"},
        source_ip="127.0.0.1",
        host="h",
    )
    assert event["isBase64Encoded"] is True
    assert base64.b64decode(event["body"]) == b"\xff\x00"


def test_response_from_result_without_status_code_is_json_200() -> None:
    status, _, body = response_from_result({"hello": "world"})
    assert (status, json.loads(body)) == (200, {"hello": "world"})


def test_response_from_result_maps_headers_cookies_and_body() -> None:
    status, headers, body = response_from_result(
        {"statusCode": 201, "headers": {"ETag": '"1"'}, "cookies": ["a=1"], "body": "{}"}
    )
    assert (status, body) == (201, b"{}")
    assert ("ETag", '"1"') in headers and ("set-cookie", "a=1") in headers


def _front(handler: Any) -> ApiFront:
    front = ApiFront(
        LambdaFunction("api", 5, handler=handler), JwtChecker(SECRET), host="127.0.0.1", port=0
    )
    front.start()
    return front


def _get(url: str, token: str | None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(
        url, headers={"authorization": f"Bearer {token}"} if token else {}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as reply:
            return reply.status, dict(reply.headers.items()), reply.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers.items()), error.read()


def test_api_front_without_token_answers_401_and_never_calls_the_handler() -> None:
    calls: list[dict[str, Any]] = []
    front = _front(lambda event, context: calls.append(event))
    try:
        status, headers, body = _get(f"http://127.0.0.1:{front.port}/v1/channels", None)
    finally:
        front.stop()
    assert (status, body, calls) == (401, b'{"message":"Unauthorized"}', [])
    assert headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize("path", ["/v1/health", "/openapi.json"])
def test_api_front_public_route_without_token_reaches_the_handler(path: str) -> None:
    seen: list[dict[str, Any]] = []

    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        seen.append(event)
        return {"statusCode": 200, "body": '{"status":"ok"}'}

    front = _front(handler)
    try:
        status, _, body = _get(f"http://127.0.0.1:{front.port}{path}", None)
    finally:
        front.stop()
    assert (status, body) == (200, b'{"status":"ok"}')
    assert seen[0]["routeKey"] == f"GET {path}"
    assert "authorizer" not in seen[0]["requestContext"]


def test_api_front_with_token_passes_claims_and_returns_handler_response() -> None:
    seen: list[dict[str, Any]] = []

    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        seen.append(event)
        return {
            "statusCode": 404,
            "headers": {"content-type": "application/problem+json"},
            "body": '{"status":404}',
        }

    front = _front(handler)
    try:
        status, _, body = _get(f"http://127.0.0.1:{front.port}/v1/channels/c%201?a=1", _token())
    finally:
        front.stop()
    assert (status, body) == (404, b'{"status":404}')
    assert seen[0]["requestContext"]["authorizer"]["jwt"]["claims"]["sub"] == "alice"
    assert seen[0]["requestContext"]["http"]["method"] == "GET"
    assert seen[0]["routeKey"] == "GET /v1/channels/{channel_id}"
    assert seen[0]["pathParameters"] == {"channel_id": "c 1"}


def test_api_front_handler_exception_answers_api_gateway_500() -> None:
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        raise RuntimeError("boom")

    front = _front(handler)
    try:
        status, _, body = _get(f"http://127.0.0.1:{front.port}/v1/channels", _token())
    finally:
        front.stop()
    assert (status, body) == (500, b'{"message":"Internal Server Error"}')


def test_api_front_unknown_route_answers_404_before_the_authorizer() -> None:
    calls: list[dict[str, Any]] = []
    front = _front(lambda event, context: calls.append(event))
    try:
        status, _, body = _get(f"http://127.0.0.1:{front.port}/v1/nothing-here", None)
    finally:
        front.stop()
    assert (status, body, calls) == (404, b'{"message":"Not Found"}', [])


def test_match_route_method_not_on_route_is_none() -> None:
    assert match_route("PUT", "/v1/channels") is None


def test_match_route_prefers_a_literal_segment_to_a_parameter() -> None:
    assert match_route("POST", "/v1/recurring-schedules/preview") == (
        "POST /v1/recurring-schedules/preview",
        {},
    )


def test_jwt_checker_configured_audience_accepts_matching_client_id_without_aud() -> None:
    claims = JwtChecker(SECRET, audience="app-client").check(_token(client_id="app-client"))
    assert claims["client_id"] == "app-client"


def test_jwt_checker_configured_audience_refuses_token_without_aud_or_client_id() -> None:
    with pytest.raises(Unauthorized):
        JwtChecker(SECRET, audience="app-client").check(_token())


@pytest.mark.parametrize("method", ["TRACE", "CONNECT", "PURGE"])
def test_api_front_undocumented_method_answers_404_not_501(method: str) -> None:
    calls: list[dict[str, Any]] = []
    front = _front(lambda event, context: calls.append(event))
    try:
        request = urllib.request.Request(
            f"http://127.0.0.1:{front.port}/v1/channels", method=method
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as reply:
                status, body = reply.status, reply.read()
        except urllib.error.HTTPError as error:
            status, body = error.code, error.read()
    finally:
        front.stop()
    assert (status, body, calls) == (404, b'{"message":"Not Found"}', [])


API_HEADERS = {"cache-control": "no-store", "x-content-type-options": "nosniff"}


def _lower(headers: dict[str, str]) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items()}


def test_api_front_own_errors_carry_the_api_headers() -> None:
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        raise RuntimeError("boom")

    front = _front(handler)
    base = f"http://127.0.0.1:{front.port}"
    try:
        answers = [
            _get(f"{base}/v1/channels", None),  # 401
            _get(f"{base}/v1/nothing-here", None),  # 404
            _get(f"{base}/v1/channels", _token()),  # 500
        ]
        connection = http.client.HTTPConnection("127.0.0.1", front.port, timeout=5)
        connection.putrequest("POST", "/v1/channels")
        connection.putheader("content-length", str(20 * 1024 * 1024))
        connection.endheaders()
        reply = connection.getresponse()
        answers.append((reply.status, dict(reply.getheaders()), reply.read()))
        connection.close()
    finally:
        front.stop()
    assert [status for status, _, _ in answers] == [401, 404, 500, 413]
    for _, headers, _ in answers:
        lowered = _lower(headers)
        assert {name: lowered.get(name) for name in API_HEADERS} == API_HEADERS, headers


def test_api_front_holds_thirty_connections_before_it_accepts_any() -> None:
    # Given a front that is not serving yet (nothing accepts), When 30 clients connect,
    # Then the kernel holds every connection (a backlog of 5 holds about 6; the rest hang).
    front = ApiFront(
        LambdaFunction("api", 5, handler=lambda e, c: {}),
        JwtChecker(SECRET),
        host="127.0.0.1",
        port=0,
    )
    clients: list[socket.socket] = []
    try:
        for _ in range(30):
            client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            client.settimeout(0.5)
            clients.append(client)
            client.connect(("127.0.0.1", front.port))
    finally:
        for client in clients:
            client.close()
        front.stop()
    assert len(clients) == 30


def _meet(front: ApiFront, folder: Path, count: int) -> list[int]:
    """``count`` concurrent GET /v1/health requests to the rendezvous handler: the marks each
    saw."""

    def one(_: int) -> int:
        request = urllib.request.Request(
            f"http://127.0.0.1:{front.port}/v1/health",
            headers={"x-rendezvous": str(folder), "x-expect": str(count)},
        )
        with urllib.request.urlopen(request, timeout=30) as reply:
            return int(json.loads(reply.read())["met"])

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(one, range(count)))


def test_api_front_serves_requests_concurrently_in_separate_environments(tmp_path: Path) -> None:
    """API_CONCURRENCY environments: requests that wait for each other all meet (served at
    once, each in its own process); with one environment they could not."""
    function = ProcessFunction("api", 30, environments=3, module="tests.support.rendezvous_handler")
    function.start()
    front = ApiFront(function, JwtChecker(SECRET), host="127.0.0.1", port=0)
    front.start()
    try:
        assert _meet(front, tmp_path, 3) == [3, 3, 3]
    finally:
        front.stop()
        function.stop()


def test_local_config_api_concurrency_defaults_to_four_and_refuses_zero() -> None:
    assert LocalConfig.from_env({}).api_concurrency == 4
    assert LocalConfig.from_env({"API_CONCURRENCY": "1"}).api_concurrency == 1
    with pytest.raises(ValueError, match="API_CONCURRENCY"):
        LocalConfig.from_env({"API_CONCURRENCY": "0"})
