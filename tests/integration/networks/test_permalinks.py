"""Permalinks before publishing (decision "Permalinks before publishing"): a scheduled Bluesky
delivery shows ``planned_remote_url``, and once the real fire path has published it to the
reference PDS its ``remote_url`` is that URL; Mastodon chooses its ids, so it plans none."""

from __future__ import annotations

from datetime import timedelta

from local.bluesky import LocalPds
from local.mastodon import MastodonStandIn
from scheduled_posts.clock import format_instant
from tests.integration.networks.conftest import NetworkFirePath, bluesky_posts, make_channels
from tests.support.api import ApiClient


def test_scheduled_bluesky_delivery_plans_the_url_it_is_published_at(
    world: tuple[NetworkFirePath, ApiClient],
    stand_in: tuple[MastodonStandIn, str],
    local_pds: LocalPds,
) -> None:
    fire, api = world
    mastodon_id, bluesky_id, _, sky = make_channels(api, stand_in, local_pds, "planned")
    created = api.post(
        "/v1/scheduled-posts",
        {
            "content": "Known address",
            "publish_at": format_instant(fire.clock.now() + timedelta(seconds=125)),
            "channel_ids": [mastodon_id, bluesky_id],
        },
    )
    assert created.status == 201, created.json
    path = f"/v1/scheduled-posts/{created.json['schedule_id']}"
    before = {d["channel_id"]: d for d in api.get(path).json["deliveries"]}
    planned = before[bluesky_id]["planned_remote_url"]
    assert planned.startswith(f"https://bsky.app/profile/{sky.did}/post/")
    assert before[mastodon_id]["planned_remote_url"] is None

    fire.driver.run_for(300)

    after = {d["channel_id"]: d for d in api.get(path).json["deliveries"]}
    assert after[bluesky_id]["status"] == "published"
    assert after[bluesky_id]["remote_url"] == planned
    assert after[bluesky_id]["planned_remote_url"] is None  # final: the remote_url says it
    [record] = bluesky_posts(local_pds, sky.did)
    assert planned.endswith("/post/" + record["uri"].rsplit("/", 1)[-1])
