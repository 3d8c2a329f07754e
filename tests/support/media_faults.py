"""Lost answers at the media steps of a network delivery (issue 25), injected by the worker's
network transport (``tests/support/networks.py``, :class:`NetworkFaults`).

The network processes the request, then its answer never reaches the worker (a timeout):

* ``upload_blob``: Bluesky ``com.atproto.repo.uploadBlob`` (the blob is stored; the retry
  uploads the same bytes again and gets the same CID);
* ``media_upload``: Mastodon ``POST /api/v2/media`` (the item is stored, its id never learnt:
  the retry has to upload it again; an upload answered 202 is also counted
  ``media_processing``);
* ``media_processing``: Mastodon ``GET /api/v1/media/:id`` answered 206 (still processing);
* ``media_status``: the status or record of a post with media (the write's answer is lost;
  the retry must find the first one).

Each is decided once per delivery, step and item (the first time), from the seed and the
delivery's key (``<schedule_id>:<channel_id>``), which :class:`KeyedAdapter` makes known to the
transport on the worker's thread: so the decisions do not depend on thread order.

:meth:`MediaFaults.check`: per delivery and media id, the number of Mastodon uploads is at most
one plus the uploads of it whose answer was lost (a stored network id is reused on every
retry: "no item is uploaded to Mastodon twice"), and the stand-in counted every one of them.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from scheduled_posts.models.post import Channel
from scheduled_posts.platforms.base import DeliveryRequest, DeliveryResult, PlatformAdapter
from scheduled_posts.platforms.webhook import TransportError, TransportResponse, Urllib3Transport
from tests.support.faults import FaultPlan
from tests.support.transport import SentRequest

#: Chance that the answer of a media step is lost, per delivery, step and item.
MEDIA_LOSS_RATE = 0.35
_FILENAME = re.compile(rb'filename="([^"./]+)\.')


class KeyedAdapter:
    """A network adapter that names the delivery it is sending on the current thread."""

    def __init__(self, inner: PlatformAdapter, current: threading.local) -> None:
        self.inner = inner
        self.current = current
        self.platform = inner.platform

    def deliver(
        self, channel: Channel, request: DeliveryRequest, *, now: datetime
    ) -> DeliveryResult:
        self.current.key = request.idempotency_key
        self.current.media = bool(request.media)
        try:
            return self.inner.deliver(channel, request, now=now)
        finally:
            self.current.key = None
            self.current.media = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@dataclass
class MediaFaults:
    """The media steps' lost answers and the upload counts (see the module docstring)."""

    plan: FaultPlan
    current: threading.local = field(default_factory=threading.local)
    #: ``(delivery key, media id) -> Mastodon uploads`` sent, and those whose answer was lost.
    uploads: Counter[tuple[str, str]] = field(default_factory=Counter)
    lost_uploads: Counter[tuple[str, str]] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def key(self) -> str | None:
        return getattr(self.current, "key", None)

    def step(self, network: str, request: SentRequest) -> str | None:
        """The media step ``request`` is (``None``: not one)."""
        if network == "bluesky" and request.path == "/xrpc/com.atproto.repo.uploadBlob":
            return "upload_blob"
        if network == "mastodon" and request.method == "POST" and request.path == "/api/v2/media":
            return "media_upload"
        polled = request.method == "GET" and request.path.startswith("/api/v1/media/")
        return "media_processing" if network == "mastodon" and polled else None

    def lose_status(self, network: str, key: str) -> bool:
        """Whether the status or record write of ``key`` (a post with media) loses its answer
        (the first write only)."""
        if not getattr(self.current, "media", False) or not self._enabled():
            return False
        if self.plan.occurrence("media-status", key) > 0:
            return False
        if self.plan.draw("media-status", key) >= MEDIA_LOSS_RATE:
            return False
        self.plan.count(f"network_{network}_media_status_answer_lost")
        return True

    def answer(
        self, network: str, step: str, request: SentRequest, inner: Urllib3Transport
    ) -> TransportResponse:
        """Forward ``request`` (a media step); maybe lose its answer."""
        key = self.key or "?"
        item = self._item(step, request)
        if step == "media_upload":
            with self._lock:
                self.uploads[(key, item)] += 1
        answer = request.forward(inner)
        lose = (
            self._enabled()
            and key != "?"
            and 200 <= answer.status < 300
            and (step != "media_processing" or answer.status == 206)
            and self.plan.occurrence("media", key, step, item) == 0
            and self.plan.draw("media", key, step, item) < MEDIA_LOSS_RATE
        )
        if not lose:
            return answer
        self.plan.count(f"network_{network}_{step}_answer_lost")
        if step == "media_upload":
            with self._lock:
                self.lost_uploads[(key, item)] += 1
            if answer.status == 202:
                self.plan.count(f"network_{network}_media_processing_answer_lost")
        sid = key.split(":", 1)[0]
        self.plan.touch(
            "destination_retry", f"{step}_answer_lost", sid, self.plan.retry_cap_seconds + 1
        )
        raise TransportError(f"timed out (injected: the {step} answer was lost)", timeout=True)

    def _enabled(self) -> bool:
        return self.plan.enabled and self.plan.rates.answer > 0

    @staticmethod
    def _item(step: str, request: SentRequest) -> str:
        if step == "media_upload":
            found = _FILENAME.search(request.body or b"")
            return found.group(1).decode() if found else "?"
        if step == "media_processing":
            return request.path.rsplit("/", 1)[-1]
        return hashlib.sha256(request.body or b"").hexdigest()[:16]

    def check(self, store: Any, sha_of: dict[str, str], totals: Counter[str]) -> list[str]:
        """The upload promises (module docstring); ``store`` is the stand-in's ``media``,
        ``sha_of`` the world's ``media_id -> SHA-256``."""
        problems: list[str] = []
        by_sha: Counter[str] = Counter()
        for (key, media_id), count in sorted(self.uploads.items()):
            by_sha[sha_of.get(media_id, media_id)] += count
            lost = self.lost_uploads[(key, media_id)]
            totals["network_mastodon_media_uploads_checked"] += 1
            if count > 1 + lost:
                problems.append(
                    f"{key}: media {media_id} uploaded to mastodon {count} times, "
                    f"{lost} answer(s) lost"
                )
        for sha, count in by_sha.items():
            # The stand-in never stores an upload the service did not send; it may store fewer
            # (a send refused or dropped by an injected fault before it reached the stand-in is
            # counted as sent, not stored: seeds 102, 103, 107).
            if store.uploads[sha] > count:
                problems.append(
                    f"mastodon counted {store.uploads[sha]} uploads of {sha[:12]}, sent {count}"
                )
        return problems
