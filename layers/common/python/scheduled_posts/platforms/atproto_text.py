"""AT Protocol pieces the Bluesky adapter needs: deterministic record keys (TIDs) and rich-text
facets with UTF-8 byte offsets.

TID (https://atproto.com/specs/tid, https://atproto.com/specs/record-key): a 64-bit integer,
top bit 0, then 53 bits of microseconds since the Unix epoch, then a 10-bit clock id, written as
13 characters of base32-sortable (``234567abcdefghijklmnopqrstuvwxyz``). A post's key is derived
from its stored ``publish_at`` (microseconds) and a hash of ``schedule_id`` and ``channel_id``
(the clock id), so every retry of one delivery writes the same key and two deliveries of
different posts at the same microsecond differ (unless their 10-bit hashes collide, 1 in 1,024,
which ``putRecord`` with ``swapRecord: null`` turns into a refused write, never an overwrite).

Facets (https://docs.bsky.app/docs/advanced-guides/post-richtext; lexicon
``app.bsky.richtext.facet``): ``index.byteStart``/``byteEnd`` are UTF-8 byte offsets into the
text (end exclusive); features ``#link`` (``uri``), ``#mention`` (``did``) and ``#tag`` (``tag``
without ``#``, at most 64 graphemes). Detection follows the reference client's rules
(``@atproto/api`` ``RichText.detectFacets``): a link starts with ``http(s)://`` and loses trailing
``.,;:!?`` (and a ``)`` without an opening one); a mention is ``@`` + a handle (a domain name)
after the start, a space or ``(``; a hashtag is ``#`` + a word that is not only digits.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import regex

from scheduled_posts.platforms.deadline import AttemptDeadline

_B32 = "234567abcdefghijklmnopqrstuvwxyz"
_TID = regex.compile(r"^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

_LINK = regex.compile(r"(?:^|(?<=[\s(]))(https?://\S+)", regex.IGNORECASE)
_MENTION = regex.compile(
    r"(?:^|(?<=[\s(]))@((?:[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+[a-zA-Z]"
    r"(?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)\b"
)
_TAG = regex.compile(r"(?:^|(?<=\s))[#\uff03]([^\s\u00ad\u2060\u200a-\u200d\u20e2]+)")
_TRAILING = ".,;:!?"
MAX_TAG_GRAPHEMES = 64


def tid(publish_at: datetime, *, schedule_id: str, channel_id: str, part: int = 0) -> str:
    """The record key of one delivery: a TID from ``publish_at`` in microseconds since the Unix
    epoch, plus ``part`` (a thread's part index, 0 for part 1: the parts' keys follow each other
    in order), and the clock id ``sha256(schedule_id + "\\x00" + channel_id) mod 1024``.

    Raises
    ------
    ValueError
        When ``publish_at`` is naive or before the epoch.
    """
    if publish_at.tzinfo is None:
        raise ValueError("publish_at must be timezone-aware")
    delta = publish_at.astimezone(UTC) - _EPOCH
    micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds + part
    if micros < 0:
        raise ValueError("publish_at must not be before 1970")
    digest = hashlib.sha256(f"{schedule_id}\x00{channel_id}".encode()).digest()
    clock_id = int.from_bytes(digest[:2], "big") % 1024
    value = ((micros & ((1 << 53) - 1)) << 10) | clock_id
    chars = []
    for _ in range(13):
        chars.append(_B32[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def is_tid(key: str) -> bool:
    """Whether ``key`` has the TID syntax (13 base32-sortable characters, top bit 0)."""
    return bool(_TID.match(key))


class MentionResolver:
    """``handle -> DID`` for :func:`detect_facets` within a budget (decision "One deadline per
    network delivery attempt"): each distinct handle is resolved once (by ``resolve``), in
    the order the mentions appear; once ``max_handles`` distinct handles were asked for or
    ``budget`` (an :class:`~scheduled_posts.platforms.deadline.AttemptDeadline`) has passed,
    the remaining mentions are not resolved and stay plain text."""

    def __init__(
        self,
        resolve: Callable[[str], str | None],
        *,
        max_handles: int,
        budget: AttemptDeadline,
    ) -> None:
        self.resolve = resolve
        self.max_handles = max_handles
        self.budget = budget
        self.asked: dict[str, str | None] = {}

    def __call__(self, handle: str) -> str | None:
        if handle in self.asked:
            return self.asked[handle]
        if len(self.asked) >= self.max_handles or self.budget.spent():
            return None
        did = self.asked[handle] = self.resolve(handle)
        return did


def _byte_span(text: str, start: int, end: int) -> dict[str, int]:
    byte_start = len(text[:start].encode("utf-8"))
    return {"byteStart": byte_start, "byteEnd": byte_start + len(text[start:end].encode("utf-8"))}


def _trim_link(url: str) -> str:
    url = url.rstrip(_TRAILING)
    if url.endswith(")") and "(" not in url:
        url = url[:-1].rstrip(_TRAILING)
    return url


def detect_facets(text: str, resolve_handle: Callable[[str], str | None]) -> list[dict[str, Any]]:
    """The facets of ``text``, ordered by ``byteStart``.

    Parameters
    ----------
    text
        The post text.
    resolve_handle
        ``handle -> DID`` (``com.atproto.identity.resolveHandle``), ``None`` when the handle does
        not resolve: that mention stays plain text.

    Returns
    -------
    list of dict
        ``{"index": {"byteStart": int, "byteEnd": int}, "features": [{"$type": ..., ...}]}``.
    """
    facets: list[dict[str, Any]] = []
    for match in _LINK.finditer(text):
        url = _trim_link(match.group(1))
        if len(url) <= len("https://"):
            continue
        start = match.start(1)
        facets.append(
            {
                "index": _byte_span(text, start, start + len(url)),
                "features": [{"$type": "app.bsky.richtext.facet#link", "uri": url}],
            }
        )
    for match in _MENTION.finditer(text):
        handle = match.group(1).lower()
        did = resolve_handle(handle)
        if did is None:
            continue
        facets.append(
            {
                "index": _byte_span(text, match.start(), match.end()),
                "features": [{"$type": "app.bsky.richtext.facet#mention", "did": did}],
            }
        )
    for match in _TAG.finditer(text):
        tag = match.group(1).rstrip(_TRAILING + "'\"")
        too_long = sum(1 for _ in regex.finditer(r"\X", tag)) > MAX_TAG_GRAPHEMES
        if not tag or tag.isdigit() or too_long:
            continue
        start = match.start()
        facets.append(
            {
                "index": _byte_span(text, start, match.start(1) + len(tag)),
                "features": [{"$type": "app.bsky.richtext.facet#tag", "tag": tag}],
            }
        )
    return sorted(facets, key=lambda facet: facet["index"]["byteStart"])
