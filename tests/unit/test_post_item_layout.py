"""What a post item stores (issue 16, W10): the id and owner only in the keys, no NULL, no empty
list, and items written before W10 (with ``schedule_id`` and ``owner`` attributes) still read.
Pure: no moto."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from scheduled_posts import keys
from scheduled_posts.lifecycle.states import PostStatus
from scheduled_posts.models.post import Post

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
SUB = "0f8e4a52-7c1d-4d0e-9b7f-2a6c3e5d9f10"  # a Cognito sub: 36 characters


def _post(**changes: object) -> Post:
    fields: dict[str, object] = {
        "schedule_id": "068e8264-498d-4785-a217-b3bc08c5646d",
        "owner": SUB,
        "status": PostStatus.SCHEDULED,
        "content": "hi",
        "publish_at": T0,
        "channel_ids": ["c1"],
        "created_at": T0,
        "updated_at": T0,
    }
    fields.update(changes)
    return Post(**fields)  # type: ignore[arg-type]


def test_item_stores_the_id_and_owner_only_in_its_keys_and_reads_them_back() -> None:
    post = _post()
    item = post.to_item()
    assert "schedule_id" not in item and "owner" not in item
    assert item["pk"] == f"POST#{post.schedule_id}"
    assert item["gsi1pk"] == f"OWNER#{SUB}#POST"
    assert Post.from_item(item) == post


def test_item_leaves_out_an_absent_language_and_empty_media() -> None:
    item = _post().to_item()
    assert "language" not in item and "media_ids" not in item
    assert not [name for name, value in item.items() if value is None or value == []]
    kept = _post(language="de", media_ids=["m1"]).to_item()
    assert (kept["language"], kept["media_ids"]) == ("de", ["m1"])


def test_item_written_before_w10_still_reads() -> None:
    post = _post()
    legacy = post.to_item() | {
        "schedule_id": post.schedule_id,
        "owner": post.owner,
        "media_ids": [],
        "language": None,
    }
    assert Post.from_item(legacy) == post


def test_owner_with_hashes_round_trips_through_the_gsi_key() -> None:
    # the owner is the text between the fixed prefix and suffix, whatever it contains
    owner = "apikey#team#POST"
    assert keys.owner_from_posts_gsi_pk(keys.owner_posts_gsi_pk(owner)) == owner


@pytest.mark.parametrize("key", ["OWNER##POST", "OWNER#alice", "alice#POST", "OWNER#x#SERIES"])
def test_owner_from_a_key_that_is_not_a_posts_key_raises(key: str) -> None:
    with pytest.raises(ValueError):
        keys.owner_from_posts_gsi_pk(key)


@pytest.mark.parametrize("pk", ["SERIES#x", "post#x", "x"])
def test_schedule_id_from_a_key_that_is_not_a_post_key_raises(pk: str) -> None:
    with pytest.raises(ValueError):
        keys.schedule_id_from_post_pk(pk)
