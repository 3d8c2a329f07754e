"""problem+json mapping and small API helpers."""

from __future__ import annotations

import json

import pytest

from scheduled_posts.errors import LimitExceededError, ValidationFailedError
from scheduled_posts.logic.post_checks import parse_if_match
from scheduled_posts.problems import clean_errors, from_service_error


def test_clean_errors_drops_input_and_context() -> None:
    raw = [{"loc": ("body", "x"), "msg": "bad", "type": "t", "input": "secret", "ctx": {"e": 1}}]
    assert clean_errors(raw) == [{"loc": ["body", "x"], "msg": "bad", "type": "t"}]


def test_clean_errors_strips_pydantics_value_error_prefix() -> None:
    raw = [{"loc": ("body", "content"), "msg": "Value error, must not be blank", "type": "v"}]
    assert clean_errors(raw)[0]["msg"] == "must not be blank"


def test_from_service_error_limit_is_429_problem() -> None:
    response = from_service_error(LimitExceededError("too many"))
    body = json.loads(response.body)
    assert (response.status_code, response.content_type) == (429, "application/problem+json")
    assert body == {
        "type": "/problems/limit-exceeded",
        "title": "Limit exceeded",
        "status": 429,
        "detail": "too many",
    }


def test_from_service_error_validation_carries_errors() -> None:
    error = ValidationFailedError("bad", [{"loc": ["body", "url"], "msg": "m", "type": "t"}])
    body = json.loads(from_service_error(error).body)
    assert body["errors"] == [{"loc": ["body", "url"], "msg": "m", "type": "t"}]


@pytest.mark.parametrize(
    ("header", "tags"),
    [
        (None, None),
        ("*", None),
        ('"3"', {'"3"'}),
        ('W/"4"', {'W/"4"'}),
        ('"1", "2"', {'"1"', '"2"'}),
        ('"1",, W/"2" ', {'"1"', 'W/"2"'}),  # empty list elements are ignored (RFC 9110 5.6.1.2)
        ('"a,b"', {'"a,b"'}),
        ("", set()),
    ],
)
def test_parse_if_match_reads_the_entity_tags(header: str | None, tags: set[str] | None) -> None:
    assert parse_if_match(header) == (frozenset(tags) if tags is not None else None)


@pytest.mark.parametrize("header", ["1", "abc", '"1", 2', '*, "1"', '"1', 'w/"1"'])
def test_parse_if_match_malformed_raises_validation_failed(header: str) -> None:
    with pytest.raises(ValidationFailedError) as caught:
        parse_if_match(header)
    assert caught.value.errors[0]["loc"] == ["header", "If-Match"]
    assert "quoted" in str(caught.value.errors[0]["msg"])
