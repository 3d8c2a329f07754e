"""A post scheduled through the API reaches Mastodon (the stand-in) and Bluesky (the reference
PDS) once each through the real fire path (sweeper -> SQS -> worker), with ``remote_url`` in
``GET`` and in the attempts; revoked credentials end as ``reauthorization_required`` and the
channel says so (issue 12)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from local.bluesky import LocalPds
from local.mastodon import MastodonStandIn
from scheduled_posts.clock import format_instant
from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.logic.network_delivery import network_collaborators
from scheduled_posts.logic.publish import Publisher
from scheduled_posts.platforms.registry import get_adapter
from scheduled_posts.platforms.transport import TransportResponse, Urllib3Transport
from tests.integration.networks.conftest import NetworkFirePath, bluesky_posts, make_channels
from tests.support.api import ApiClient


def test_post_reaches_mastodon_and_bluesky_once_with_remote_urls(
    world: tuple[NetworkFirePath, ApiClient],
    stand_in: tuple[MastodonStandIn, str],
    local_pds: LocalPds,
) -> None:
    fire, api = world
    mastodon_id, bluesky_id, _, sky = make_channels(api, stand_in, local_pds, "both")
    publish_at = fire.clock.now() + timedelta(seconds=125)
    created = api.post(
        "/v1/scheduled-posts",
        {
            "content": "Launch day! #release",
            "publish_at": format_instant(publish_at),
            "channel_ids": [mastodon_id, bluesky_id],
            "language": "en",
        },
    )
    assert created.status == 201, created.json
    post = created.json
    fire.driver.run_for(300)

    got = api.get(f"/v1/scheduled-posts/{post['schedule_id']}").json
    assert got["status"] == "published", got
    deliveries = {d["channel_id"]: d for d in got["deliveries"]}
    [status] = stand_in[0].statuses
    assert status.created_at >= publish_at  # never early
    assert deliveries[mastodon_id]["remote_url"] == (f"https://mastodon.local/@both/{status.id}")
    assert status.language == "en"
    [record] = bluesky_posts(local_pds, sky.did)
    assert record["value"]["langs"] == ["en"]
    assert record["value"]["facets"][0]["features"][0]["tag"] == "release"
    rkey = record["uri"].rsplit("/", 1)[-1]
    assert deliveries[bluesky_id]["remote_url"] == (
        f"https://bsky.app/profile/{sky.did}/post/{rkey}"
    )
    assert deliveries[bluesky_id]["remote_id"] == record["uri"]
    attempts = api.get(f"/v1/scheduled-posts/{post['schedule_id']}/attempts").json["items"]
    assert {a["channel_id"]: a["remote_url"] for a in attempts} == {
        mastodon_id: deliveries[mastodon_id]["remote_url"],
        bluesky_id: deliveries[bluesky_id]["remote_url"],
    }


def test_revoked_token_fails_reauthorization_required_and_marks_the_channel(
    world: tuple[NetworkFirePath, ApiClient],
    stand_in: tuple[MastodonStandIn, str],
    local_pds: LocalPds,
) -> None:
    fire, api = world
    mastodon_id, bluesky_id, token, _ = make_channels(api, stand_in, local_pds, "revoked")
    stand_in[0].revoke(token)
    post = api.schedule(
        format_instant(fire.clock.now() + timedelta(seconds=125)), [mastodon_id, bluesky_id]
    )
    fire.driver.run_for(300)

    got = api.get(f"/v1/scheduled-posts/{post['schedule_id']}").json
    deliveries = {d["channel_id"]: d for d in got["deliveries"]}
    assert deliveries[mastodon_id]["status"] == "failed"
    assert deliveries[mastodon_id]["attempts"] == 1  # not retried
    assert deliveries[mastodon_id]["last_error"].startswith("reauthorization_required: ")
    assert deliveries[bluesky_id]["status"] == "published"
    channel = api.get(f"/v1/channels/{mastodon_id}").json
    assert channel["status"] == "needs_reauthorization"
    assert "The access token is invalid" in channel["status_reason"]
    assert stand_in[0].statuses == []


class EchoingInstance(Urllib3Transport):
    """The stand-in, except that ``POST /api/v1/statuses`` answers 401 quoting the request's
    ``Authorization`` header, as some instances and proxies do."""

    def send(self, destination: Any, address: str, body: bytes, headers: Any, timeout: float,
             *, method: str = "POST") -> TransportResponse:  # fmt: skip
        if destination.target.startswith("/api/v1/statuses"):
            auth = next(v for k, v in headers.items() if k.lower() == "authorization")
            echo = json.dumps({"error": f"invalid token: {auth}"}).encode()
            return TransportResponse(status=401, body=echo)
        return super().send(destination, address, body, headers, timeout, method=method)


def test_token_echoed_in_a_refusal_reaches_no_error_reason_or_export(
    world: tuple[NetworkFirePath, ApiClient], stand_in: tuple[MastodonStandIn, str]
) -> None:
    # Given a Mastodon channel whose instance quotes the bearer token in its 401
    fire, api = world
    token = stand_in[0].add_account("echo").token
    channel = api.post(
        "/v1/channels",
        {"platform": "mastodon", "name": "t", "instance_url": stand_in[1], "access_token": token},
    ).json
    collaborators = network_collaborators(
        fire.settings, channels=ChannelRepository(posts_table_name=fire.settings.POSTS_TABLE_NAME)
    )
    adapter = get_adapter(
        "mastodon", settings=fire.settings, transport=EchoingInstance(), **collaborators
    )
    fire.build_publisher = lambda: Publisher(  # type: ignore[method-assign]
        fire.settings, store=fire.store, queue=fire.queue, adapters={"mastodon": adapter},
        clock=fire.clock,
    )  # fmt: skip
    # When a post to it is delivered
    post = api.schedule(
        format_instant(fire.clock.now() + timedelta(seconds=125)), [channel["channel_id"]]
    )
    fire.driver.run_for(300)
    # Then the refusal is quoted everywhere without the token
    got = api.get(f"/v1/scheduled-posts/{post['schedule_id']}").json
    [delivery] = got["deliveries"]
    reason = api.get(f"/v1/channels/{channel['channel_id']}").json["status_reason"]
    attempts = api.get(f"/v1/scheduled-posts/{post['schedule_id']}/attempts").json
    export = api.get("/v1/me/export").raw["body"]
    assert delivery["last_error"].startswith("reauthorization_required: ")
    assert "invalid token: Bearer [redacted]" in delivery["last_error"]
    assert "invalid token: Bearer [redacted]" in reason
    for text in (json.dumps(got), reason, json.dumps(attempts), export):
        assert token not in text


def test_each_network_receives_its_own_text_and_options_from_a_variant(
    world: tuple[NetworkFirePath, ApiClient],
    stand_in: tuple[MastodonStandIn, str],
    local_pds: LocalPds,
) -> None:
    """Decision "A text per channel: variants": a 420-grapheme text goes to Mastodon, its
    280-grapheme Bluesky variant to the PDS, each with its own network options."""
    fire, api = world
    mastodon_id, bluesky_id, _, sky = make_channels(api, stand_in, local_pds, "variants")
    long_text = " ".join(["toot"] * 84) + "!"  # 420 graphemes
    short_text = "sky " * 69 + "end!"  # 280 graphemes
    created = api.post(
        "/v1/scheduled-posts",
        {
            "content": long_text,
            "publish_at": format_instant(fire.clock.now() + timedelta(seconds=125)),
            "channel_ids": [mastodon_id, bluesky_id],
            "language": "en",
            "variants": {
                mastodon_id: {"visibility": "unlisted", "spoiler_text": "long read"},
                bluesky_id: {"content": short_text, "langs": ["en", "de"], "tags": ["launch"]},
            },
        },
    )
    assert created.status == 201, created.json
    fire.driver.run_for(300)

    got = api.get(f"/v1/scheduled-posts/{created.json['schedule_id']}").json
    assert got["status"] == "published", got
    [status] = stand_in[0].statuses
    assert (status.text, status.visibility, status.spoiler_text) == (
        long_text,
        "unlisted",
        "long read",
    )
    assert status.sensitive  # a content warning marks the status sensitive, as Mastodon does
    assert status.language == "en"
    [record] = bluesky_posts(local_pds, sky.did)
    assert record["value"]["text"] == short_text
    assert record["value"]["langs"] == ["en", "de"]
    assert record["value"]["tags"] == ["launch"]
