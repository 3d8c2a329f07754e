"""Edit (PATCH) and cancel (DELETE): versions, due-index moves, 409/412 races."""

from __future__ import annotations

import pytest

from tests.support.api import ApiClient, RecordingPromoter
from tests.support.fixtures import AwsResources
from tests.support.media import ready_media

FAR = "2026-11-30T09:30:00Z"
LATER = "2026-11-30T14:00:00Z"


@pytest.fixture
def m1(aws: AwsResources, alice: ApiClient) -> str:
    """A ready upload of alice's: a post's media_ids name ready uploads."""
    return ready_media(aws.settings)


@pytest.fixture
def channel(alice: ApiClient) -> str:
    return alice.create_channel()


@pytest.fixture
def post(alice: ApiClient, channel: str) -> dict:
    return alice.schedule(FAR, [channel])


def _path(post: dict) -> str:
    return f"/v1/scheduled-posts/{post['schedule_id']}"


def test_patch_post_content_bumps_version_and_etag(alice: ApiClient, post: dict) -> None:
    answer = alice.patch(_path(post), {"content": "edited"}, headers={"If-Match": '"1"'})
    assert answer.status == 200
    assert answer.json["version"] == 2
    assert answer.json["content"] == "edited"
    assert answer.headers["ETag"] == '"2"'


def test_patch_post_content_only_rewrites_entry_version(
    alice: ApiClient, post: dict, tables
) -> None:
    alice.patch(_path(post), {"content": "edited"})
    [entry] = tables.due_items()
    assert entry["version"] == 2
    assert entry["due"].startswith("2026-11-30T09:30:00.000Z#")


def test_patch_post_publish_at_moves_due_entry(alice: ApiClient, post: dict, tables) -> None:
    answer = alice.patch(_path(post), {"publish_at": LATER})
    [entry] = tables.due_items()
    assert answer.json["publish_at"] == "2026-11-30T14:00:00.000Z"
    assert entry["bucket"].startswith("2026-11-30T14#")
    assert entry["version"] == 2
    assert tables.post_item(post["schedule_id"])["gsi1sk"].startswith("2026-11-30T14:00")


def test_patch_post_into_lookahead_promotes_new_version(
    alice: ApiClient, post: dict, tables, promoted: RecordingPromoter
) -> None:
    alice.patch(_path(post), {"publish_at": "2026-11-29T12:01:00Z"})
    assert [(e.schedule_id, e.version) for e in promoted.entries] == [(post["schedule_id"], 2)]
    assert sorted(e["bucket"][:5] for e in tables.due_items()) == ["2026-", "LATE#"]


def test_patch_post_clearing_media_removes_them_from_the_stored_post(
    m1: str, alice: ApiClient, channel: str, tables
) -> None:
    # Given a post with media and a language (both stored only when set, issue 16 W10)
    created = alice.post(
        "/v1/scheduled-posts",
        {"content": "hi", "publish_at": FAR, "channel_ids": [channel], "media_ids": [m1],
         "language": "de"},
    ).json  # fmt: skip
    assert tables.post_item(created["schedule_id"])["media_ids"] == [m1]
    # When the media are cleared
    answer = alice.patch(_path(created), {"media_ids": []})
    # Then the stored post has none, and the next read says so
    assert answer.status == 200 and answer.json["media_ids"] == []
    assert "media_ids" not in tables.post_item(created["schedule_id"])
    assert alice.get(_path(created)).json["media_ids"] == []
    assert tables.post_item(created["schedule_id"])["language"] == "de"


def test_patch_post_a_thread_made_single_without_its_comment_stores_neither(
    alice: ApiClient, channel: str, tables
) -> None:
    # Given a scheduled thread with a first comment
    created = alice.post(
        "/v1/scheduled-posts",
        {"content": "one", "publish_at": FAR, "channel_ids": [channel],
         "parts": [{"content": "two"}], "first_comment": {"content": "c"}},
    ).json  # fmt: skip
    # When the edit gives no parts ([]) and removes the comment (null)
    answer = alice.patch(_path(created), {"parts": [], "first_comment": None})
    # Then the stored post has neither, and the next read says so
    assert answer.status == 200, answer.json
    item = tables.post_item(created["schedule_id"])
    assert "parts" not in item and "first_comment" not in item
    read = alice.get(_path(created)).json
    assert (read["parts"], read["first_comment"]) == ([], None)


def test_patch_post_of_an_item_written_before_w10_drops_its_copies_of_the_keys(
    alice: ApiClient, post: dict, tables
) -> None:
    # Given a post item that still carries schedule_id and owner attributes
    legacy = {"schedule_id": post["schedule_id"], "owner": alice.sub}
    tables.set_post(post["schedule_id"], **legacy)
    # When it is edited, Then the copies are gone and the post reads the same
    assert alice.patch(_path(post), {"content": "v2"}).status == 200
    item = tables.post_item(post["schedule_id"])
    assert "schedule_id" not in item and "owner" not in item
    assert alice.get(_path(post)).json["content"] == "v2"


def test_patch_post_out_of_lookahead_deletes_old_marker(
    alice: ApiClient, channel: str, tables
) -> None:
    near = alice.schedule("2026-11-29T12:01:00Z", [channel])
    alice.patch(_path(near), {"publish_at": FAR})
    assert [e["bucket"][:5] for e in tables.due_items()] == ["2026-"]


def test_patch_post_channels_rebuilds_deliveries(alice: ApiClient, post: dict) -> None:
    second = alice.create_channel("second")
    answer = alice.patch(_path(post), {"channel_ids": [second]})
    assert [d["channel_id"] for d in answer.json["deliveries"]] == [second]


def test_patch_post_stale_if_match_is_412_and_changes_nothing(
    alice: ApiClient, post: dict, tables
) -> None:
    alice.patch(_path(post), {"content": "v2"})
    answer = alice.patch(_path(post), {"content": "v3"}, headers={"If-Match": '"1"'})
    assert answer.status == 412
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert tables.post_item(post["schedule_id"])["content"] == "v2"
    assert tables.due_items()[0]["version"] == 2


def test_patch_post_claimed_by_worker_is_409(alice: ApiClient, post: dict, tables) -> None:
    tables.set_post(post["schedule_id"], status="publishing")
    answer = alice.patch(_path(post), {"content": "late edit"}, headers={"If-Match": '"1"'})
    assert answer.status == 409


def test_patch_post_409_wins_over_412(alice: ApiClient, post: dict, tables) -> None:
    tables.set_post(post["schedule_id"], status="publishing")
    answer = alice.patch(_path(post), {"content": "x"}, headers={"If-Match": '"7"'})
    assert answer.status == 409


def test_patch_post_past_publish_at_is_422(alice: ApiClient, post: dict, tables) -> None:
    answer = alice.patch(_path(post), {"publish_at": "2026-11-29T11:00:00Z"})
    assert answer.status == 422
    assert tables.post_item(post["schedule_id"])["version"] == 1


def test_patch_post_claim_between_read_and_write_is_409(
    alice: ApiClient, post: dict, tables, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker claims after the API read the post: the transaction's condition fails."""
    from scheduled_posts.data.posts import PostRepository

    original = PostRepository.replace

    def claim_then_replace(self, old, new, **kwargs):  # type: ignore[no-untyped-def]
        tables.set_post(old.schedule_id, status="publishing")
        return original(self, old, new, **kwargs)

    monkeypatch.setattr(PostRepository, "replace", claim_then_replace)
    answer = alice.patch(_path(post), {"content": "x"})
    assert answer.status == 409
    assert tables.post_item(post["schedule_id"])["content"] == "hello"
    assert tables.due_items()[0]["version"] == 1


def test_cancel_post_deletes_entry_and_releases(alice: ApiClient, post: dict, tables) -> None:
    answer = alice.delete(_path(post))
    assert answer.status == 200
    assert answer.json["status"] == "cancelled"
    assert answer.json["version"] == 2
    assert tables.due_items() == []
    released = tables.posts.query(
        KeyConditionExpression="pk = :pk AND begins_with(sk, :r)",
        ExpressionAttributeValues={":pk": "OWNER#alice", ":r": "PENDING#RELEASED#"},
    )["Items"]
    assert sum(i["released"] for i in released) == 1


def test_cancel_post_twice_is_200_again(alice: ApiClient, post: dict) -> None:
    alice.delete(_path(post))
    answer = alice.delete(_path(post))
    assert answer.status == 200
    assert answer.json["version"] == 2


@pytest.mark.parametrize("status", ["publishing", "published", "failed", "missed"])
def test_cancel_post_not_scheduled_is_409(
    alice: ApiClient, post: dict, tables, status: str
) -> None:
    tables.set_post(post["schedule_id"], status=status)
    assert alice.delete(_path(post)).status == 409
    assert len(tables.due_items()) == 1


def test_patch_cancelled_post_is_409(alice: ApiClient, post: dict) -> None:
    alice.delete(_path(post))
    assert alice.patch(_path(post), {"content": "x"}).status == 409
