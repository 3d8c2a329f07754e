"""The post-side rule: each of ``media_ids`` is one of the caller's ready uploads, looked up
only when it has the shape of an id the service makes (DynamoDB refuses a sort key over 1,024
bytes in AWS; moto does not, so a fake store records what is asked)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from scheduled_posts.logic.network_rules import ready_media_errors
from scheduled_posts.models.media import Media, MediaCreate, MediaStatus

NOW = datetime(2026, 12, 2, tzinfo=UTC)


class FakeMedia:
    def __init__(self, *items: Media) -> None:
        self.items = {m.media_id: m for m in items}
        self.asked: list[str] = []

    def get_many(self, owner: str, media_ids: Iterable[str]) -> dict[str, Media]:
        self.asked += list(media_ids)
        return {i: self.items[i] for i in self.asked if i in self.items and owner == "alice"}


def upload(status: MediaStatus) -> Media:
    media = Media.new("alice", MediaCreate(content_type="image/png", size=1), NOW)
    return media.model_copy(update={"status": status})


def errors(store: FakeMedia, ids: list[str]) -> list[dict[str, Any]]:
    return ready_media_errors("alice", ids, media=store)  # type: ignore[arg-type]


def test_only_id_shaped_entries_are_looked_up_and_the_others_refused() -> None:
    store = FakeMedia()
    odd = "\U0001f600" * 256
    found = errors(store, [odd, "a b", "fine-id"])
    assert store.asked == ["fine-id"]
    assert [e["loc"] for e in found] == [["body", "media_ids", i] for i in range(3)]
    assert "this id" in found[0]["msg"]


def test_ready_passes_and_pending_or_rejected_are_named() -> None:
    ready, pending, rejected = (upload(MediaStatus(s)) for s in ("ready", "pending", "rejected"))
    store = FakeMedia(ready, pending, rejected)
    found = errors(store, [ready.media_id, pending.media_id, rejected.media_id])
    assert [(e["loc"][2], e["type"]) for e in found] == [
        (1, "media_not_ready"),
        (2, "media_not_ready"),
    ]
    assert "pending" in found[0]["msg"] and "rejected" in found[1]["msg"]


def test_no_store_or_no_media_checks_nothing() -> None:
    assert ready_media_errors("alice", ["x"], media=None) == []
    assert errors(FakeMedia(), []) == []
