"""X-Signature: t=<unix>,v1=<HMAC-SHA256("<t>.<body>")>, one v1 per secret; Standard Webhooks
headers checked with the ``standardwebhooks`` package."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import subprocess
import sys
import time

import pytest
from standardwebhooks import Webhook, WebhookVerificationError

from scheduled_posts.logic.channels import new_signing_secret
from scheduled_posts.platforms.signing import (
    parse_signature,
    sign,
    signature_headers,
    standard_secret,
    standard_signature,
    verify,
)

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


# -- Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature) ------------------------

OLD_HEX = "whsec_" + "ab" * 32  # the secrets generated before Standard Webhooks
NEW_B64 = "whsec_" + base64.b64encode(b"n" * 32).decode()


def _now() -> int:
    return int(time.time())  # the library's verify checks 5 minutes against the real clock


def test_signature_headers_verify_with_the_standardwebhooks_library() -> None:
    headers = signature_headers([NEW_B64], "s1:c1", _now(), BODY)

    assert Webhook(NEW_B64).verify(BODY, headers) == json.loads(BODY)
    assert headers["webhook-id"] == "s1:c1"


def test_signature_headers_keep_a_verifying_x_signature() -> None:
    now = _now()
    headers = signature_headers([NEW_B64], "s1:c1", now, BODY)

    assert verify(headers["X-Signature"], NEW_B64, BODY, now=now)
    assert headers["webhook-timestamp"] == str(now)


def test_an_existing_hex_secret_is_its_own_whsec_secret() -> None:
    headers = signature_headers([OLD_HEX], "e-1", _now(), BODY)

    assert standard_secret(OLD_HEX) == OLD_HEX
    Webhook(OLD_HEX).verify(BODY, headers)  # raises when it does not verify


def test_rotation_overlap_verifies_with_either_secret() -> None:
    headers = signature_headers([NEW_B64, OLD_HEX], "s1:c1", _now(), BODY)

    assert len(headers["webhook-signature"].split(" ")) == 2
    for secret in (NEW_B64, OLD_HEX):
        Webhook(secret).verify(BODY, headers)
    with pytest.raises(WebhookVerificationError):
        Webhook("whsec_" + base64.b64encode(b"x" * 32).decode()).verify(BODY, headers)


def test_webhook_signature_is_hmac_of_id_timestamp_body_with_the_decoded_key() -> None:
    digest = hmac.new(b"n" * 32, f"s1:c1.{T}.".encode() + BODY, hashlib.sha256).digest()

    assert (
        standard_signature([NEW_B64], "s1:c1", T, BODY) == "v1," + base64.b64encode(digest).decode()
    )


def test_a_string_that_is_not_whsec_base64_maps_to_base64_of_its_bytes() -> None:
    assert standard_secret("s3cret") == "whsec_" + base64.b64encode(b"s3cret").decode()
    assert standard_secret("whsec_not base64!") != "whsec_not base64!"


def test_tampered_body_fails_the_library_check() -> None:
    headers = signature_headers([NEW_B64], "s1:c1", _now(), BODY)

    with pytest.raises(WebhookVerificationError):
        Webhook(NEW_B64).verify(BODY + b" ", headers)


def test_new_signing_secret_is_whsec_base64_of_32_bytes() -> None:
    secret = new_signing_secret()

    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret[6:], validate=True)) == 32
    assert standard_secret(secret) == secret


def test_the_senders_import_standardwebhooks_only_when_they_sign() -> None:
    code = (
        "import sys, scheduled_posts.platforms.webhook, scheduled_posts.logic.notifier; "
        "a = 'standardwebhooks' in sys.modules; "
        "from scheduled_posts.platforms.signing import standard_signature; "
        "standard_signature(['k'], 'i', 1, b'{}'); print(a, 'standardwebhooks' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.stdout.split() == ["False", "True"], done.stderr
