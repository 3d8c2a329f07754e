"""Envelope encryption of channel credentials with KMS data keys (moto KMS) (issue 12)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from scheduled_posts.data.credentials import CredentialCipher, CredentialsUnavailableError

CONTEXT = {"owner": "alice", "channel_id": "ch_1", "platform": "mastodon", "purpose": "credentials"}
SECRET = {"access_token": "tok-very-secret-123"}


@pytest.fixture
def kms() -> Iterator[Any]:
    with mock_aws():
        yield boto3.client("kms", region_name="us-east-1")


@pytest.fixture
def cipher(kms: Any) -> CredentialCipher:
    key_id = kms.create_key(Description="credentials")["KeyMetadata"]["KeyId"]
    return CredentialCipher(key_id, kms=kms)


def test_cipher_seal_then_open_round_trips(cipher: CredentialCipher) -> None:
    sealed = cipher.seal(SECRET, context=CONTEXT)
    assert cipher.open(sealed, context=CONTEXT) == SECRET


def test_cipher_sealed_value_holds_no_plaintext(cipher: CredentialCipher) -> None:
    sealed = cipher.seal(SECRET, context=CONTEXT)
    assert "tok-very-secret" not in sealed
    assert set(json.loads(sealed)) == {"v", "key", "nonce", "data"}


def test_cipher_each_seal_uses_a_fresh_data_key_and_nonce(cipher: CredentialCipher) -> None:
    first, second = (json.loads(cipher.seal(SECRET, context=CONTEXT)) for _ in range(2))
    assert first["key"] != second["key"] and first["nonce"] != second["nonce"]


def test_cipher_other_channel_context_does_not_open(cipher: CredentialCipher) -> None:
    sealed = cipher.seal(SECRET, context=CONTEXT)
    with pytest.raises(CredentialsUnavailableError):
        cipher.open(sealed, context={**CONTEXT, "channel_id": "ch_2"})


def test_cipher_tampered_data_does_not_open(cipher: CredentialCipher) -> None:
    envelope = json.loads(cipher.seal(SECRET, context=CONTEXT))
    data = bytearray(base64.b64decode(envelope["data"]))
    data[0] ^= 0x01
    envelope["data"] = base64.b64encode(bytes(data)).decode()
    with pytest.raises(CredentialsUnavailableError, match="do not verify"):
        cipher.open(json.dumps(envelope), context=CONTEXT)


def test_cipher_malformed_value_refused_without_echoing_it(cipher: CredentialCipher) -> None:
    with pytest.raises(CredentialsUnavailableError, match="malformed") as caught:
        cipher.open("not json tok-very-secret", context=CONTEXT)
    assert "tok-very-secret" not in str(caught.value)


def test_cipher_without_key_refuses_to_seal(kms: Any) -> None:
    with pytest.raises(CredentialsUnavailableError, match="no credentials key"):
        CredentialCipher("", kms=kms).seal(SECRET, context=CONTEXT)
