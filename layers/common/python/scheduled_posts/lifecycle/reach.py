"""Which recorded attempts may have published anything: the gate of editing a post that waits
for its next attempt (decision "A post waiting for its next attempt can be edited when nothing
was sent"). Pure: no I/O.

An attempt published nothing for sure when it ended with a definite answer that publishes
nothing, or failed before a byte of the request left this host:

* an HTTP 429 (RFC 6585 section 4: the request was refused for its rate) or 503 (RFC 9110
  section 15.6.4: the server cannot handle the request now);
* a transport failure whose attempt-error word (``docs/dispatch.md``, "Status codes and
  outcomes") says nothing was sent: ``connect_failed`` (TCP connect refused or unreachable),
  ``dns_error`` (the host did not resolve), ``destination_refused`` (the URL policy refused
  the address), ``rate_limited`` (a network's rate budget we hold is spent: no request),
  ``media_processing`` (the network still processes the post's media: the post itself was not
  sent, or was refused for it);
* a ``skipped`` attempt (the channel was deleted: no request at all).

Anything else may have reached the network and published: a timeout, a lost connection, a TLS
error, any other 5xx, an attempt still ``started`` (in flight, or a crashed round), an attempt
another invocation holds (``in_progress``), and of course a published one.
"""

from __future__ import annotations

from collections.abc import Iterable

from scheduled_posts.models.post import Attempt

#: HTTP answers that publish nothing (RFC 6585 section 4, RFC 9110 section 15.6.4).
NOTHING_PUBLISHED_STATUSES = frozenset({429, 503})
#: Attempt-error words of failures before anything was sent (``platforms.transport.AttemptError``,
#: which the network adapters share; ``rate_limited``: a network's budget we hold spent,
#: ``platforms.rate_limits``, checked before the request; ``media_processing``: the post waits
#: for its media, ``platforms/mastodon_attach.py``).
NOTHING_SENT_WORDS = frozenset(
    {"connect_failed", "dns_error", "destination_refused", "rate_limited", "media_processing"}
)


def published_nothing(attempt: Attempt) -> bool:
    """Whether ``attempt`` (a row, or one folded on the post item) surely published nothing."""
    if attempt.outcome == "skipped":
        return True
    if attempt.outcome not in ("retryable", "rate_limited"):
        return False  # published, failed for good, or started and never recorded
    if attempt.http_status is not None:
        return attempt.http_status in NOTHING_PUBLISHED_STATUSES
    word = (attempt.error or "").split(":", 1)[0].strip()
    statuses = {f"http_{status}" for status in NOTHING_PUBLISHED_STATUSES}
    return word in NOTHING_SENT_WORDS or word in statuses


def may_have_published(attempts: Iterable[Attempt]) -> list[Attempt]:
    """The attempts of ``attempts`` that may have published (empty: none did)."""
    return [a for a in attempts if not published_nothing(a)]


def why_unsafe(attempt: Attempt) -> str:
    """A creator's words for ``attempt``: ``channel c1's attempt 2 (timeout)``."""
    what = attempt.outcome if attempt.error is None else attempt.error.split(":", 1)[0].strip()
    if attempt.http_status is not None:
        what = f"http_{attempt.http_status}"
    return f"channel {attempt.channel_id}'s attempt {attempt.attempt} ({what})"
