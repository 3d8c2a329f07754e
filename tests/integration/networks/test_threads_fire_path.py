"""A thread scheduled through the API reaches Mastodon (the stand-in) and Bluesky (the reference
PDS) through the real fire path, each part once and chained, with ``parts_published`` and every
part's id in the answer; the API refuses an empty part, 26 parts and a part over its channel's
limit with a 422 naming the part and the channel."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from local.bluesky import LocalPds
from local.mastodon import MastodonStandIn
from scheduled_posts.clock import format_instant
from tests.integration.networks.conftest import NetworkFirePath, bluesky_posts, make_channels
from tests.support.api import ApiClient

TEXTS = ["1/3 A thread about threads.", "2/3 Each part once.", "3/3 Chained right."]


def _thread(fire: NetworkFirePath, channel_ids: list[str], **extra: Any) -> dict[str, Any]:
    return {
        "content": TEXTS[0],
        "parts": [{"content": t} for t in TEXTS[1:]],
        "publish_at": format_instant(fire.clock.now() + timedelta(seconds=65)),
        "channel_ids": channel_ids,
        **extra,
    }


def test_thread_reaches_both_networks_once_per_part_chained(
    world: tuple[NetworkFirePath, ApiClient],
    stand_in: tuple[MastodonStandIn, str],
    local_pds: LocalPds,
) -> None:
    fire, api = world
    mastodon_id, bluesky_id, _, sky = make_channels(api, stand_in, local_pds, "thrchained")
    comment = {"content": "The link: https://example.com/thread", "delay_seconds": 0}
    created = api.post(
        "/v1/scheduled-posts", _thread(fire, [mastodon_id, bluesky_id], first_comment=comment)
    )
    assert created.status == 201, created.json
    assert [p["content"] for p in created.json["parts"]] == TEXTS[1:]
    assert created.json["first_comment"] == comment

    fire.driver.run_for(200)

    got = api.get(f"/v1/scheduled-posts/{created.json['schedule_id']}").json
    assert got["status"] == "published", got
    deliveries = {d["channel_id"]: d for d in got["deliveries"]}
    *statuses, reply = stand_in[0].statuses
    assert [s.text for s in statuses] == TEXTS
    assert [s.in_reply_to_id for s in statuses] == [None, statuses[0].id, statuses[1].id]
    assert (reply.text, reply.in_reply_to_id) == (comment["content"], statuses[0].id)
    toots = deliveries[mastodon_id]
    assert toots["parts_published"] == "3/3"
    assert [p["remote_id"] for p in toots["published_parts"]] == [s.id for s in statuses]
    assert toots["remote_id"] == statuses[0].id
    assert toots["first_comment"]["status"] == "published"
    assert toots["first_comment"]["remote_id"] == reply.id
    *records, last = sorted(bluesky_posts(local_pds, sky.did), key=lambda r: r["uri"])
    assert [r["value"]["text"] for r in records] == TEXTS
    assert records[2]["value"]["reply"]["parent"]["uri"] == records[1]["uri"]
    assert records[2]["value"]["reply"]["root"]["uri"] == records[0]["uri"]
    assert last["value"]["reply"]["parent"]["uri"] == records[0]["uri"]  # the comment
    skeets = deliveries[bluesky_id]
    assert skeets["parts_published"] == "3/3"
    assert [p["remote_id"] for p in skeets["published_parts"]] == [r["uri"] for r in records]
    assert skeets["first_comment"]["remote_id"] == last["uri"]


def test_thread_a_bluesky_variant_replaces_the_parts_for_that_channel_only(
    world: tuple[NetworkFirePath, ApiClient],
    stand_in: tuple[MastodonStandIn, str],
    local_pds: LocalPds,
) -> None:
    fire, api = world
    mastodon_id, bluesky_id, _, sky = make_channels(api, stand_in, local_pds, "thrvariant")
    body = _thread(
        fire,
        [mastodon_id, bluesky_id],
        content="x" * 420,
        parts=[{"content": "y" * 420}],
        variants={bluesky_id: {"content": "a" * 280, "parts": [{"content": "b" * 280}]}},
    )
    created = api.post("/v1/scheduled-posts", body)
    assert created.status == 201, created.json
    shown = {d["channel_id"]: d for d in created.json["deliveries"]}
    assert shown[bluesky_id]["parts"] == [{"content": "b" * 280, "media_ids": []}]

    fire.driver.run_for(200)

    assert [s.text for s in stand_in[0].statuses] == ["x" * 420, "y" * 420]
    texts = sorted(r["value"]["text"] for r in bluesky_posts(local_pds, sky.did))
    assert texts == ["a" * 280, "b" * 280]


def test_thread_bad_parts_are_422_naming_the_part_and_the_channel(
    world: tuple[NetworkFirePath, ApiClient],
    stand_in: tuple[MastodonStandIn, str],
    local_pds: LocalPds,
) -> None:
    fire, api = world
    mastodon_id, bluesky_id, _, _ = make_channels(api, stand_in, local_pds, "thrrefused")
    channels = [mastodon_id, bluesky_id]

    empty = api.post("/v1/scheduled-posts", _thread(fire, channels, parts=[{"content": " "}]))
    assert empty.status == 422
    assert [e["loc"] for e in empty.json["errors"]] == [["body", "parts", 0, "content"]]

    many = api.post(
        "/v1/scheduled-posts",
        _thread(fire, channels, parts=[{"content": f"part {i}"} for i in range(25)]),
    )
    assert many.status == 422
    assert [e["loc"] for e in many.json["errors"]] == [["body", "parts"]]
    assert "24" in many.json["errors"][0]["msg"]

    long = api.post(
        "/v1/scheduled-posts",
        _thread(fire, channels, parts=[{"content": "fine"}, {"content": "z" * 301}]),
    )
    assert long.status == 422, long.json
    [error] = long.json["errors"]
    assert error["loc"] == ["body", "parts", 1, "content"]
    assert error["type"] == "too_long"
    assert "part 3 of 3" in error["msg"] and bluesky_id in error["msg"]
    assert api.get("/v1/scheduled-posts").json["items"] == []  # nothing stored
