"""A post's media resolved at publish time (``logic/post_media.py``): ready uploads in order, or
a refusal that keeps the network from being called (decision "Media are checked again before
publishing")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pytest
from botocore.exceptions import ClientError

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.lifecycle.reasons import DeliveryError
from scheduled_posts.logic.post_media import resolve
from scheduled_posts.platforms.base import PublishedMedia


@dataclass
class Upload:
    media_id: str
    status: str

    def published(self) -> PublishedMedia:
        return PublishedMedia(
            media_id=self.media_id,
            content_type="image/png",
            size=10,
            sha256="0" * 64,
            object_key=f"media/{self.media_id}",
        )


class Lookup:
    def __init__(self, *uploads: Upload, fail: bool = False) -> None:
        self.uploads = {u.media_id: u for u in uploads}
        self.fail = fail
        self.calls = 0

    def get_many(self, owner: str, media_ids: Sequence[str]) -> dict[str, Upload]:
        self.calls += 1
        if self.fail:
            raise ClientError({"Error": {"Code": "ProvisionedThroughputExceededException"}}, "Get")
        return {m: self.uploads[m] for m in media_ids if m in self.uploads}


def test_ready_uploads_come_in_the_posts_order() -> None:
    lookup = Lookup(Upload("a", "ready"), Upload("b", "ready"))
    got = resolve("alice", ["b", "a"], "webhook", lambda: lookup)
    assert [m.media_id for m in got.media] == ["b", "a"] and got.refusal is None


def test_no_media_reads_nothing() -> None:
    lookup = Lookup()
    assert resolve("alice", [], "bluesky", lambda: lookup).media == ()
    assert lookup.calls == 0


@pytest.mark.parametrize(
    ("uploads", "state"),
    [
        ((Upload("a", "ready"),), "missing"),
        ((Upload("a", "ready"), Upload("b", "pending")), "pending"),
    ],
    ids=["one-missing", "one-pending"],
)
def test_a_missing_or_unready_upload_refuses_the_delivery(
    uploads: tuple[Upload, ...], state: str
) -> None:
    got = resolve("alice", ["a", "b"], "webhook", lambda: Lookup(*uploads))
    assert got.media == ()
    assert got.refusal == f"{DeliveryError.MEDIA_MISSING.value} (b: {state})"


def test_a_webhook_post_from_before_uploads_keeps_its_free_media_ids() -> None:
    got = resolve("alice", ["free string from before uploads"], "webhook", Lookup)
    assert got.media == () and got.refusal is None


def test_the_same_free_ids_on_a_network_channel_are_refused() -> None:
    got = resolve("alice", ["free string from before uploads"], "bluesky", Lookup)
    assert got.refusal is not None and got.refusal.startswith("media_")


def test_a_failed_read_is_retryable() -> None:
    with pytest.raises(RetryableDeliveryError):
        resolve("alice", ["a"], "webhook", lambda: Lookup(fail=True))
