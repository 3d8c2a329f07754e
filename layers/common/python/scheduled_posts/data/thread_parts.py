"""A thread's published parts, per delivery: the outbox of a thread (decision "A thread's
parts are stored as they are published").

Each part's :class:`~scheduled_posts.platforms.base.PartRef` (the network's id, page, on
Bluesky its CID, and the part's receipt) is stored as soon as the network answered it, before
the next part is sent; a retry reads them and continues at the first part not stored, so no
earlier part is ever sent again (and a Bluesky reply gets its parent's CID without a
``getRecord``). One item per
``(delivery, part)`` in the posts table under the post's partition, as the network media ids
(``data/network_media.py``, whose conditional put it shares: the first stored ref wins)::

    pk = POST#<schedule_id>   sk = NETPART#<channel_id>#<index, 2 digits>
    network_id (the PartRef as JSON), stored_at, expires_at (TTL)
"""

from __future__ import annotations

import json
from datetime import datetime

from scheduled_posts.data.network_media import NetworkMediaLog
from scheduled_posts.platforms.base import PartRef

PREFIX = "NETPART#"


class ThreadPartLog:
    """``known``/``remember`` of :class:`scheduled_posts.platforms.base.ThreadProgress` on the
    posts table; both raise ``RetryableDeliveryError`` when DynamoDB cannot answer now."""

    def __init__(self, posts_table_name: str) -> None:
        self._log = NetworkMediaLog(posts_table_name, prefix=PREFIX)

    def known(self, idempotency_key: str) -> dict[int, PartRef]:
        """``{index: PartRef}`` stored for the delivery ``idempotency_key``, consistent read."""
        return {
            int(index): PartRef.model_validate(json.loads(value))
            for index, value in self._log.known(idempotency_key).items()
        }

    def remember(self, idempotency_key: str, index: int, ref: PartRef, *, now: datetime) -> PartRef:
        """Store ``ref`` as part ``index`` unless one is stored; returns the stored one."""
        stored = self._log.remember(idempotency_key, f"{index:02d}", ref.model_dump_json(), now=now)
        return PartRef.model_validate(json.loads(stored))
