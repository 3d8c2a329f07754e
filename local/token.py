"""``make token SUB=alice``: an HS256 JWT the local stack's authorizer accepts.

Signed with ``LOCAL_JWT_SECRET``; carries ``iss``/``aud`` when ``LOCAL_JWT_ISSUER`` /
``LOCAL_JWT_AUDIENCE`` are set, so the token matches the local authorizer's configuration.
"""

from __future__ import annotations

import time

import jwt

from local.config import LocalConfig

DEFAULT_TTL_SECONDS = 3600


def make_token(
    sub: str,
    config: LocalConfig,
    *,
    ttl_seconds: int = DEFAULT_TTL_SECONDS,
    now: float | None = None,
    extra_claims: dict[str, object] | None = None,
) -> str:
    """A compact JWS: ``{"sub", "iat", "nbf", "exp" (now + ttl_seconds)[, "iss", "aud"]}``.

    ``now`` is Unix seconds (default the current time).
    """
    issued = int(time.time() if now is None else now)
    claims: dict[str, object] = {
        "sub": sub,
        "iat": issued,
        "nbf": issued,
        "exp": issued + ttl_seconds,
    }
    if config.jwt_issuer:
        claims["iss"] = config.jwt_issuer
    if config.jwt_audience:
        claims["aud"] = config.jwt_audience
    claims.update(extra_claims or {})
    return jwt.encode(claims, config.jwt_secret, algorithm="HS256")
