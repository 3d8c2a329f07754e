"""Bluesky link cards through the API and the real fire path to the reference PDS (decision
"Bluesky link cards, frozen at scheduling time"): the card is fetched from a loopback page when
the post is created, frozen on the post (a page changed afterwards changes nothing), published
as ``app.bsky.embed.external`` with its thumb blob; ``link_card: null`` removes it; a page
that cannot be fetched leaves the post valid, without a card, with a warning."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from local.bluesky import LocalPds
from local.mastodon import MastodonStandIn
from scheduled_posts.clock import format_instant
from scheduled_posts.platforms.link_preview import MAX_PAGE_BYTES
from tests.integration.networks import test_media_fire_path as media_fire_path
from tests.integration.networks.test_bluesky_media import get_blob
from tests.integration.networks.test_media_fire_path import MediaFirePath, upload
from tests.integration.networks.test_network_fire_path import bluesky_posts, make_channels
from tests.support.api import ApiClient, ApiResponse
from tests.support.link_site import LinkSite, og_page
from tests.support.media import png

World = tuple[MediaFirePath, ApiClient]
world = media_fire_path.world  # the media fire path's fixtures, shared


@pytest.fixture
def site() -> Iterator[LinkSite]:
    with LinkSite().serving() as served:
        yield served


def _channels(api: ApiClient, stand: Any, pds: LocalPds) -> tuple[str, str, Any]:
    mastodon_id, bluesky_id, _, sky = make_channels(api, stand, pds, f"card{uuid.uuid4().hex[:8]}")
    return mastodon_id, bluesky_id, sky


def _create(
    fire: MediaFirePath, api: ApiClient, content: str, channels: list[str], **extra: Any
) -> ApiResponse:
    body = {
        "content": content,
        "publish_at": format_instant(fire.clock.now() + timedelta(seconds=125)),
        "channel_ids": channels,
        **extra,
    }
    return api.post("/v1/scheduled-posts", body)


def test_a_card_is_frozen_at_creation_and_published_unchanged_after_the_page_changes(
    world: World, stand_in: tuple[MastodonStandIn, str], local_pds: LocalPds, site: LinkSite
) -> None:
    fire, api = world
    mastodon_id, bluesky_id, sky = _channels(api, stand_in, local_pds)
    image = png(60, 30)
    site.html("/article", og_page("Original title", "Original description", "/thumb.png"))
    site.pages["/thumb.png"] = (200, {"Content-Type": "image/png"}, image)
    link = site.url("/article")

    created = _create(fire, api, f"Read this {link}", [mastodon_id, bluesky_id])

    assert created.status == 201, created.json
    card = created.json["link_card"]
    assert (card["uri"], card["title"], card["description"]) == (
        link,
        "Original title",
        "Original description",
    )
    assert (card["thumb"]["content_type"], card["thumb"]["size"]) == ("image/png", len(image))
    assert created.json["warnings"] == []
    # the thumb is one of the creator's uploads, ready and kept (probed like an upload)
    thumb = api.get(f"/v1/media/{card['thumb']['media_id']}").json
    assert (thumb["status"], thumb["width"], thumb["height"]) == ("ready", 60, 30)

    # the page changes before publish time: nothing is fetched again
    site.html("/article", og_page("Changed title", "Changed description", "/other.png"))
    fire.driver.run_for(300)

    got = api.get(f"/v1/scheduled-posts/{created.json['schedule_id']}").json
    assert got["status"] == "published", [d["last_error"] for d in got["deliveries"]]
    [record] = bluesky_posts(local_pds, sky.did)
    embed = record["value"]["embed"]
    assert embed["$type"] == "app.bsky.embed.external"
    external = embed["external"]
    assert (external["uri"], external["title"], external["description"]) == (
        link,
        "Original title",
        "Original description",
    )
    assert get_blob(local_pds, sky.did, external["thumb"]["ref"]["$link"]) == image
    assert site.hits["/article"] == 1 and site.hits["/thumb.png"] == 1
    # Mastodon builds its own cards: its status is the text alone
    [status] = stand_in[0].statuses
    assert not status.media_ids and link in status.text


def test_link_card_null_removes_the_card_and_nothing_is_embedded(
    world: World, stand_in: tuple[MastodonStandIn, str], local_pds: LocalPds, site: LinkSite
) -> None:
    fire, api = world
    _, bluesky_id, sky = _channels(api, stand_in, local_pds)
    site.html("/a", og_page("A title", "A description", None))
    created = _create(fire, api, f"See {site.url('/a')}", [bluesky_id])
    assert created.json["link_card"]["title"] == "A title"

    removed = api.patch(f"/v1/scheduled-posts/{created.json['schedule_id']}", {"link_card": None})
    assert removed.status == 200, removed.json
    assert removed.json["link_card"] is None
    # an edit that keeps the URL does not fetch it back
    again = api.patch(
        f"/v1/scheduled-posts/{created.json['schedule_id']}",
        {"content": f"See this {site.url('/a')}"},
    )
    assert again.json["link_card"] is None and site.hits["/a"] == 1
    fire.driver.run_for(300)

    [record] = bluesky_posts(local_pds, sky.did)
    assert "embed" not in record["value"]


def test_an_explicit_card_with_an_uploaded_thumb_is_published_as_given(
    world: World, stand_in: tuple[MastodonStandIn, str], local_pds: LocalPds
) -> None:
    fire, api = world
    _, bluesky_id, sky = _channels(api, stand_in, local_pds)
    image = png(30, 30, (10, 200, 10))
    media = upload(api, image, "image/png", "a green square")
    card = {
        "uri": "https://example.org/given",
        "title": "Given",
        "description": "By hand",
        "thumb_media_id": media["media_id"],
    }
    created = _create(fire, api, "No link in the text", [bluesky_id], link_card=card)
    assert created.status == 201, created.json
    assert created.json["link_card"]["thumb"]["media_id"] == media["media_id"]
    fire.driver.run_for(300)

    [record] = bluesky_posts(local_pds, sky.did)
    external = record["value"]["embed"]["external"]
    assert (external["uri"], external["title"]) == ("https://example.org/given", "Given")
    assert get_blob(local_pds, sky.did, external["thumb"]["ref"]["$link"]) == image


@pytest.mark.parametrize(
    ("path", "word"),
    [
        ("/json", "not_html"),
        ("/huge", "too_large"),
        ("/to-private", "destination_refused"),
        ("/missing", "http_404"),
    ],
)
def test_a_page_that_cannot_be_read_leaves_the_post_without_a_card_and_with_a_warning(
    world: World,
    stand_in: tuple[MastodonStandIn, str],
    local_pds: LocalPds,
    site: LinkSite,
    path: str,
    word: str,
) -> None:
    fire, api = world
    _, bluesky_id, _ = _channels(api, stand_in, local_pds)
    site.pages["/json"] = (200, {"Content-Type": "application/json"}, b'{"a": 1}')
    site.pages["/huge"] = (200, {"Content-Type": "text/html"}, b"<p>" * MAX_PAGE_BYTES)
    site.pages["/to-private"] = (302, {"Location": "https://192.168.1.1/"}, b"")
    link = site.url(path)

    created = _create(fire, api, f"Look {link}", [bluesky_id])

    assert created.status == 201, created.json
    assert created.json["link_card"] is None
    [warning] = created.json["warnings"]
    assert warning["type"] == "link_card_unavailable" and warning["url"] == link
    assert warning["detail"].startswith(word), warning


def test_a_private_url_gets_a_warning_and_no_request(
    world: World, stand_in: tuple[MastodonStandIn, str], local_pds: LocalPds
) -> None:
    fire, api = world
    _, bluesky_id, _ = _channels(api, stand_in, local_pds)
    created = _create(fire, api, "Look https://10.1.2.3/internal", [bluesky_id])
    assert created.status == 201, created.json
    assert created.json["link_card"] is None
    [warning] = created.json["warnings"]
    assert warning["url"] == "https://10.1.2.3/internal"
    assert warning["detail"].startswith("destination_refused"), warning


def test_a_draft_gets_its_card_when_it_is_scheduled_and_publishes_it(
    world: World, stand_in: tuple[MastodonStandIn, str], local_pds: LocalPds, site: LinkSite
) -> None:
    fire, api = world
    _, bluesky_id, sky = _channels(api, stand_in, local_pds)
    site.html("/draft", og_page("Draft title", "Draft description", None))
    body = {"content": f"Soon {site.url('/draft')}", "channel_ids": [bluesky_id]}
    draft = api.post("/v1/scheduled-posts", body)
    assert draft.status == 201 and draft.json["status"] == "draft", draft.json

    at = format_instant(fire.clock.now() + timedelta(seconds=125))
    scheduled = api.patch(f"/v1/scheduled-posts/{draft.json['schedule_id']}", {"publish_at": at})

    assert scheduled.status == 200, scheduled.json
    assert scheduled.json["link_card"]["title"] == "Draft title"
    fire.driver.run_for(300)
    [record] = bluesky_posts(local_pds, sky.did)
    assert record["value"]["embed"]["external"]["title"] == "Draft title"
