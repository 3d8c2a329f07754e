"""Channel credentials at rest: envelope encryption with a KMS key of the stack.

Each seal asks KMS for a fresh 256-bit data key (``GenerateDataKey``, ``AES_256``), encrypts the
credentials with it locally (AES-256-GCM, NIST SP 800-38D; 96-bit random nonce) and keeps only
the KMS-encrypted copy of the data key next to the ciphertext. Opening asks KMS to ``Decrypt``
that copy. The same encryption context (owner, channel id, platform, purpose) is given to KMS
and bound to the ciphertext as GCM associated data, so a sealed value copied onto another
channel or another user does not open (and CloudTrail records which channel a decrypt was for).

Only the API (credential check, on create and edit) and the worker may call ``kms:Decrypt``;
only the API ``kms:GenerateDataKey`` (``infra/``). Plaintext credentials exist only in memory
as :class:`pydantic.SecretStr` values, whose ``repr`` and ``str`` are masked.

Sealed format (a compact JSON string stored on the channel item): ``{"v": 1, "key": <base64
KMS CiphertextBlob>, "nonce": <base64>, "data": <base64 AES-GCM ciphertext+tag>}``.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping
from functools import cache
from typing import Any

import boto3
from botocore.exceptions import ClientError

from scheduled_posts.data.aws import BOTO_CONFIG

FORMAT_VERSION = 1
NONCE_BYTES = 12


class CredentialsUnavailableError(Exception):
    """A sealed value could not be opened (wrong context, tampered, KMS refused or unreachable).
    The message never contains key material or plaintext."""


@cache
def kms_client() -> Any:
    """The process's KMS client (``AWS_ENDPOINT_URL`` points it at moto locally)."""
    return boto3.client("kms", config=BOTO_CONFIG)


def _aad(context: Mapping[str, str]) -> bytes:
    return json.dumps(dict(sorted(context.items())), separators=(",", ":")).encode()


class CredentialCipher:
    """Seals and opens credential dictionaries with data keys of the KMS key ``key_id``.

    Parameters
    ----------
    key_id
        The KMS key id or ARN (``CREDENTIALS_KEY_ID``); opening needs only the sealed value.
    kms
        A boto3 KMS client (default :func:`kms_client`).
    """

    def __init__(self, key_id: str, *, kms: Any = None) -> None:
        self.key_id = key_id
        self._kms = kms

    @property
    def kms(self) -> Any:
        return self._kms if self._kms is not None else kms_client()

    def seal(self, secret: Mapping[str, str], *, context: Mapping[str, str]) -> str:
        """Encrypt ``secret`` (``name -> value``) bound to ``context``.

        Raises
        ------
        CredentialsUnavailableError
            When KMS refuses or cannot be reached (no key id configured included).
        """
        if not self.key_id:
            raise CredentialsUnavailableError("no credentials key is configured")
        try:
            answer = self.kms.generate_data_key(
                KeyId=self.key_id, KeySpec="AES_256", EncryptionContext=dict(context)
            )
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "error")
            raise CredentialsUnavailableError(f"KMS refused a data key: {code}") from exc
        # Imported on first use (decisions, "Heavy modules imported where they are used").
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        nonce = os.urandom(NONCE_BYTES)
        plaintext = json.dumps(dict(secret), separators=(",", ":")).encode()
        data = AESGCM(answer["Plaintext"]).encrypt(nonce, plaintext, _aad(context))
        return json.dumps(
            {
                "v": FORMAT_VERSION,
                "key": base64.b64encode(answer["CiphertextBlob"]).decode(),
                "nonce": base64.b64encode(nonce).decode(),
                "data": base64.b64encode(data).decode(),
            },
            separators=(",", ":"),
        )

    def open(self, sealed: str, *, context: Mapping[str, str]) -> dict[str, str]:
        """Decrypt a value of :meth:`seal` sealed with the same ``context``.

        Raises
        ------
        CredentialsUnavailableError
            On a malformed value, another context, tampering, or a KMS refusal.
        """
        try:
            envelope = json.loads(sealed)
            blob = base64.b64decode(envelope["key"])
            nonce = base64.b64decode(envelope["nonce"])
            data = base64.b64decode(envelope["data"])
            if envelope.get("v") != FORMAT_VERSION:
                raise ValueError("unknown version")
        except (ValueError, KeyError, TypeError) as exc:
            raise CredentialsUnavailableError("sealed credentials are malformed") from exc
        try:
            key = self.kms.decrypt(CiphertextBlob=blob, EncryptionContext=dict(context))
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "error")
            raise CredentialsUnavailableError(f"KMS refused to decrypt: {code}") from exc
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        try:
            plaintext = AESGCM(key["Plaintext"]).decrypt(nonce, data, _aad(context))
        except InvalidTag as exc:
            raise CredentialsUnavailableError("sealed credentials do not verify") from exc
        opened = json.loads(plaintext)
        return {str(k): str(v) for k, v in opened.items()}
