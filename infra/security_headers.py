"""The content calendar's security headers, defined once (no CDK import).

CloudFront adds them to every answer of the deployed site (``infra/site.py``, a response headers
policy); the local stack adds the same ones when it serves ``web/`` (``local/static_site.py``),
so the browser tests run the page under the policy it is deployed with. Only ``connect-src``
differs: locally the API is the page's own origin, deployed it is API Gateway and Cognito.
"""

from __future__ import annotations

#: Content-Security-Policy directives but ``connect-src`` (CSP Level 3, W3C): scripts, styles
#: and images from the page's origin only, no inline code or ``eval``, no plugins, no framing.
CSP_DIRECTIVES: tuple[str, ...] = (
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
)


def content_security_policy(*connect_sources: str) -> str:
    """The whole policy: :data:`CSP_DIRECTIVES` plus ``connect-src 'self' <sources...>``."""
    return "; ".join((*CSP_DIRECTIVES, " ".join(("connect-src 'self'", *connect_sources))))


#: ``Referrer-Policy``: the page's URLs never leave in a Referer header.
REFERRER_POLICY = "no-referrer"
#: ``X-Frame-Options`` (with ``frame-ancestors 'none'`` for browsers without CSP 2).
FRAME_OPTIONS = "DENY"
#: ``Strict-Transport-Security`` max-age, seconds (two years, the HSTS preload list's minimum
#: is one year: hstspreload.org).
HSTS_MAX_AGE_SECONDS = 63_072_000
