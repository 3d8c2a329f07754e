"""Webhook signatures: Standard Webhooks headers, plus the deprecated ``X-Signature``.

Standard Webhooks (https://www.standardwebhooks.com, the spec's "Signature scheme"), on every
webhook delivery and notification::

    webhook-id: <the delivery's idempotency key: the same on every retry>
    webhook-timestamp: <unix seconds of this attempt>
    webhook-signature: v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<raw body>")>[ v1,<previous>]

One ``v1,`` per valid secret, newest first, space-separated (a rotation's overlap). The key is
the base64 decoding of the ``whsec_`` secret (:func:`standard_secret`); receivers verify with any
Standard Webhooks library, e.g. ``standardwebhooks.Webhook(secret).verify(body, headers)``. The
signing itself is the ``standardwebhooks`` package's (``Webhook.sign``), imported lazily.

Deprecated: ``X-Signature``, sent alongside until at least 2027-06-01 (decision "Standard
Webhooks signatures; X-Signature deprecated"). Format: ``t=<unix seconds>,v1=<hex
HMAC-SHA256(secret, "<t>.<raw body>")>`` (HMAC: RFC 2104;
SHA-256: FIPS 180-4), the same scheme as Stripe's ``Stripe-Signature``. During a secret
rotation overlap (``SECRET_OVERLAP_SECONDS``, default 24 h) one ``v1`` is sent per secret,
newest first: ``t=...,v1=<new>,v1=<old>``. A receiver holding either secret verifies, so it
can switch secrets at any time within the overlap. Its HMAC key is the secret string's UTF-8
bytes (``whsec_`` prefix included), as before.

What a receiver should do
-------------------------
- Compute the HMAC over the **raw** body bytes exactly as received (before any JSON parsing),
  compare in constant time, and accept when **any** ``v1`` matches.
- Accept a ``t`` within **5 minutes** (300 s) of its own clock, either side, and refuse
  older ones: that bounds how long a captured request can be replayed while tolerating
  ordinary clock skew.
- Do **not** use ``t`` to detect duplicates. Every retry is signed afresh with the time of that
  attempt, so a retry hours after the first try (backoff up to ``RETRY_CAP_SECONDS``,
  ``Retry-After``, recovery after a crash) still carries a recent ``t``, and two sends of the
  same post carry different ``t`` values. Deduplicate by ``webhook-id`` (signed) or the body's
  ``idempotency_key`` (``<schedule_id>:<channel_id>``, the same on every retry, and equal to
  ``webhook-id``): both are under the signature, so a captured delivery replayed under another
  key no longer verifies. The ``Idempotency-Key`` header carries the same value for receivers
  that read headers first; refuse a request whose header and body disagree.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Sequence
from datetime import UTC, datetime

#: The header carrying the signature.
SIGNATURE_HEADER = "X-Signature"
#: The Standard Webhooks headers (lower case, as the spec writes them).
ID_HEADER = "webhook-id"
TIMESTAMP_HEADER = "webhook-timestamp"
STANDARD_SIGNATURE_HEADER = "webhook-signature"
#: The prefix of a Standard Webhooks secret.
SECRET_PREFIX = "whsec_"  # noqa: S105 - a prefix, not a secret
#: Recommended receiver tolerance for ``t``, in seconds (either side of its clock).
DEFAULT_TOLERANCE_SECONDS = 300


def _digest(secret: str, timestamp: int, body: bytes) -> str:
    message = str(timestamp).encode("ascii") + b"." + body
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def sign(secrets: Sequence[str], timestamp: int, body: bytes) -> str:
    """Build the ``X-Signature`` value for ``body`` sent at ``timestamp``.

    Parameters
    ----------
    secrets
        The signing secrets, newest first (one during normal operation; the new and the
        previous one during a rotation overlap). Empty entries are skipped.
    timestamp
        Unix seconds of the send (the sender's clock at this attempt).
    body
        The exact bytes of the request body.

    Returns
    -------
    str
        ``t=<timestamp>,v1=<hex>[,v1=<hex>...]``, one ``v1`` per secret in the given order.

    Raises
    ------
    ValueError
        When no non-empty secret is given.
    """
    usable = [s for s in secrets if s]
    if not usable:
        raise ValueError("at least one signing secret is required")
    parts = [f"t={int(timestamp)}"]
    parts.extend(f"v1={_digest(secret, int(timestamp), body)}" for secret in usable)
    return ",".join(parts)


def parse_signature(header: str) -> tuple[int, list[str]] | None:
    """Split an ``X-Signature`` value into ``(t, [v1, ...])``; ``None`` when malformed
    (no ``t``, more than one ``t``, a non-integer ``t``, or no ``v1``). Unknown schemes
    (``v0=``...) are ignored, so a future scheme can be added alongside ``v1``."""
    timestamp: int | None = None
    seen_t = False
    signatures: list[str] = []
    for item in header.split(","):
        key, sep, value = item.strip().partition("=")
        if not sep:
            continue
        if key == "t":
            if seen_t:
                return None
            seen_t = True
            try:
                timestamp = int(value)
            except ValueError:
                return None
        elif key == "v1" and value and value.isascii():
            signatures.append(value.lower())
    if timestamp is None or not signatures:
        return None
    return timestamp, signatures


def verify(
    header: str,
    secret: str,
    body: bytes,
    *,
    now: int,
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
) -> bool:
    """Whether ``header`` signs ``body`` with ``secret`` at a ``t`` within the tolerance.

    Parameters
    ----------
    header
        The ``X-Signature`` value as received.
    secret
        The receiver's secret (any one of the secrets the sender signed with).
    body
        The raw request body.
    now
        The receiver's clock, unix seconds.
    tolerance_seconds
        Largest accepted ``|now - t|`` (default 300 s, see the module docstring).

    Returns
    -------
    bool
        True when the header is well-formed, ``t`` is within the tolerance and any ``v1``
        equals the HMAC (compared with :func:`hmac.compare_digest`, constant time).
    """
    if not secret:
        return False
    parsed = parse_signature(header)
    if parsed is None:
        return False
    timestamp, signatures = parsed
    if abs(now - timestamp) > tolerance_seconds:
        return False
    expected = _digest(secret, timestamp, body)
    matched = False
    for candidate in signatures:
        # No early exit: every candidate is compared, in constant time each.
        matched |= hmac.compare_digest(expected, candidate)
    return matched


def standard_secret(secret: str) -> str:
    """The Standard Webhooks (``whsec_<base64>``) form of a stored signing secret.

    Every secret the service generates already is one (``whsec_`` + 64 hex characters before
    2026-12, which are base64 characters too; ``whsec_`` + base64 of 32 random bytes since), so
    it is returned unchanged: the ``signing_secret`` a receiver holds goes straight into a
    Standard Webhooks library. Any other string (hand-made data, test fixtures) maps to
    ``whsec_`` + base64 of its UTF-8 bytes. Decision "A signing secret is its own whsec_
    secret"."""
    if secret.startswith(SECRET_PREFIX):
        try:
            if base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True):
                return secret
        except binascii.Error:
            pass
    return SECRET_PREFIX + base64.b64encode(secret.encode("utf-8")).decode("ascii")


def standard_signature(secrets: Sequence[str], msg_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` value: ``v1,<base64>`` per non-empty secret, newest first,
    space-separated, each ``standardwebhooks.Webhook(standard_secret(s)).sign(...)`` over
    ``"<msg_id>.<timestamp>.<body>"`` (``body`` is UTF-8 JSON).

    Raises
    ------
    ValueError
        When no non-empty secret is given.
    """
    from standardwebhooks import Webhook  # lazily: only the senders need it

    usable = [s for s in secrets if s]
    if not usable:
        raise ValueError("at least one signing secret is required")
    when = datetime.fromtimestamp(int(timestamp), tz=UTC)
    text = body.decode("utf-8")
    return " ".join(Webhook(standard_secret(s)).sign(msg_id, when, text) for s in usable)


def signature_headers(
    secrets: Sequence[str], msg_id: str, timestamp: int, body: bytes
) -> dict[str, str]:
    """Every signature header of one request: ``webhook-id`` (``msg_id``, the delivery's
    idempotency key), ``webhook-timestamp``, ``webhook-signature`` and the deprecated
    ``X-Signature``, all for ``timestamp`` (unix seconds) and ``secrets`` (newest first).

    Raises
    ------
    ValueError
        When no non-empty secret is given.
    """
    return {
        ID_HEADER: msg_id,
        TIMESTAMP_HEADER: str(int(timestamp)),
        STANDARD_SIGNATURE_HEADER: standard_signature(secrets, msg_id, timestamp, body),
        SIGNATURE_HEADER: sign(secrets, timestamp, body),
    }
