"""What a network returned when it published a delivery: a receipt a creator can check without
us (decision "Receipts").

Which fields a receipt holds depends on the network (the delivery's ``remote_id`` and
``remote_url`` complete it):

- Bluesky: ``cid`` (the record's CID, as ``putRecord`` or ``getRecord`` answered it) and
  ``rev`` (the repository commit's revision, ``commit.rev`` of ``putRecord``; absent when the
  answer was lost and the record was found by ``getRecord``, which names no commit); the
  record's ``at://`` URI is ``remote_id``.
- Mastodon: ``created_at`` (the status's ``created_at``, UTC); the status id is ``remote_id``
  and its page ``remote_url``.
- Webhook: ``http_status`` (the receiver's answer) and ``body_sha256`` (lowercase hex SHA-256
  of the exact body we signed, so a receiver can match its log to ours).

Every value comes from an untrusted answer and is bounded by
:func:`scheduled_posts.platforms.answers.bounded_receipt` before it is stored.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class Receipt(BaseModel):
    """A delivery's receipt; a field the network did not give is ``None`` (and left out of the
    stored map, the API and events)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    cid: str | None = None
    rev: str | None = None
    created_at: str | None = None
    http_status: int | None = None
    body_sha256: str | None = None

    def to_item(self) -> dict[str, Any]:
        """The stored ``receipt`` map: only the fields that have a value."""
        return self.model_dump(exclude_none=True)

    @classmethod
    def from_item(cls, item: object) -> Receipt | None:
        """The receipt of a stored map, ``None`` for none (or an empty one)."""
        if not isinstance(item, dict) or not item:
            return None
        fields = dict(item)
        if fields.get("http_status") is not None:
            fields["http_status"] = int(fields["http_status"])
        return cls.model_validate(fields)

    @property
    def empty(self) -> bool:
        return not self.to_item()
