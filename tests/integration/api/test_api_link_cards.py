"""``link_card`` through the API without a network: a given card is stored and answered, its
thumb checked; bad cards are 422s naming the field; a post with no Bluesky channel gets no card
and fetches nothing (decision "Bluesky link cards, frozen at scheduling time")."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.api import ApiClient
from tests.support.fixtures import AwsResources
from tests.support.media import ready_media

FAR = "2026-11-30T09:30:00Z"


@pytest.fixture
def channel(alice: ApiClient) -> str:
    return alice.create_channel()


def create(alice: ApiClient, channel: str, **extra: Any) -> Any:
    body = {"content": "hello", "publish_at": FAR, "channel_ids": [channel], **extra}
    return alice.post("/v1/scheduled-posts", body)


def test_a_given_card_with_a_ready_thumb_is_stored_and_answered(
    aws: AwsResources, alice: ApiClient, channel: str
) -> None:
    thumb = ready_media(aws.settings)
    card = {"uri": "https://example.org/x", "title": "T", "thumb_media_id": thumb}
    created = create(alice, channel, link_card=card)
    assert created.status == 201, created.json
    answered = created.json["link_card"]
    assert (answered["uri"], answered["title"], answered["description"]) == (
        "https://example.org/x",
        "T",
        "",
    )
    assert (answered["thumb"]["media_id"], answered["thumb"]["width"]) == (thumb, 3)
    assert set(answered["thumb"]) == {
        "media_id",
        "content_type",
        "size",
        "sha256",
        "width",
        "height",
    }  # the storage key is the service's own (docs/api.md)
    path = f"/v1/scheduled-posts/{created.json['schedule_id']}"
    assert alice.get(path).json["link_card"] == answered

    edited = alice.patch(path, {"link_card": {"uri": "https://example.org/y"}})
    assert edited.status == 200, edited.json
    assert edited.json["link_card"] == {
        "uri": "https://example.org/y",
        "title": "",
        "description": "",
        "thumb": None,
    }
    removed = alice.patch(path, {"link_card": None})
    assert removed.json["link_card"] is None and alice.get(path).json["link_card"] is None


@pytest.mark.parametrize(
    ("card", "loc"),
    [
        ({"uri": "https://example.org/", "thumb_media_id": "nope"}, "thumb_media_id"),
        ({"uri": "ftp://example.org/file"}, "uri"),
        ({"uri": "https://example.org/", "title": "t" * 301}, "title"),
        ({"uri": "https://example.org/", "extra": 1}, "extra"),
    ],
)
def test_a_bad_card_is_a_422_naming_its_field(
    alice: ApiClient, channel: str, card: dict[str, Any], loc: str
) -> None:
    answer = create(alice, channel, link_card=card)
    assert answer.status == 422, answer.json
    locs = [error["loc"] for error in answer.json["errors"]]
    assert ["body", "link_card", loc] in locs, locs


def test_a_post_without_a_bluesky_channel_gets_no_card_and_no_warning(
    alice: ApiClient, channel: str
) -> None:
    answer = create(alice, channel, content="see https://10.0.0.1/private and https://a.example/")
    assert answer.status == 201, answer.json
    assert (answer.json["link_card"], answer.json["warnings"]) == (None, [])
