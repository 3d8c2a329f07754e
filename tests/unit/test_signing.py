"""X-Signature: t=<unix>,v1=<HMAC-SHA256("<t>.<body>")>, one v1 per secret."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from scheduled_posts.platforms.signing import parse_signature, sign, verify

BODY = b'{"schedule_id":"s1","content":"hello"}'
T = 1_796_040_000


def test_sign_one_secret_matches_reference_hmac() -> None:
    expected = hmac.new(b"secret-a", f"{T}.".encode() + BODY, hashlib.sha256).hexdigest()

    assert sign(["secret-a"], T, BODY) == f"t={T},v1={expected}"


def test_sign_two_secrets_newest_first() -> None:
    new = sign(["new"], T, BODY).split(",")[1]
    old = sign(["old"], T, BODY).split(",")[1]

    assert sign(["new", "old"], T, BODY) == f"t={T},{new},{old}"


def test_sign_no_secret_raises() -> None:
    with pytest.raises(ValueError, match="secret"):
        sign(["", ""], T, BODY)


def test_verify_own_signature_true() -> None:
    assert verify(sign(["k"], T, BODY), "k", BODY, now=T)


def test_verify_wrong_secret_false() -> None:
    assert not verify(sign(["k"], T, BODY), "other", BODY, now=T)


def test_verify_altered_body_false() -> None:
    assert not verify(sign(["k"], T, BODY), "k", BODY + b" ", now=T)


def test_verify_altered_timestamp_false() -> None:
    header = sign(["k"], T, BODY).replace(f"t={T}", f"t={T + 1}")

    assert not verify(header, "k", BODY, now=T)


def test_verify_overlap_header_verifies_with_new_secret() -> None:
    assert verify(sign(["new", "old"], T, BODY), "new", BODY, now=T)


def test_verify_overlap_header_verifies_with_old_secret() -> None:
    assert verify(sign(["new", "old"], T, BODY), "old", BODY, now=T)


def test_verify_timestamp_at_tolerance_true() -> None:
    header = sign(["k"], T, BODY)

    assert verify(header, "k", BODY, now=T + 300) and verify(header, "k", BODY, now=T - 300)


def test_verify_timestamp_past_tolerance_false() -> None:
    assert not verify(sign(["k"], T, BODY), "k", BODY, now=T + 301)


def test_verify_timestamp_in_future_past_tolerance_false() -> None:
    assert not verify(sign(["k"], T, BODY), "k", BODY, now=T - 301)


def test_verify_custom_tolerance_applies() -> None:
    assert not verify(sign(["k"], T, BODY), "k", BODY, now=T + 31, tolerance_seconds=30)


def test_verify_malformed_headers_false() -> None:
    good = sign(["k"], T, BODY)
    v1 = good.split(",")[1]
    for header in ["", v1, f"t=abc,{v1}", f"t={T}", f"t={T},t={T},{v1}", f"t={T},v1=zz\u00e9"]:
        assert not verify(header, "k", BODY, now=T), header


def test_verify_empty_secret_false() -> None:
    assert not verify(sign(["k"], T, BODY), "", BODY, now=T)


def test_parse_signature_ignores_unknown_schemes() -> None:
    assert parse_signature(f"t={T},v0=abc,v1=DEF") == (T, ["def"])
