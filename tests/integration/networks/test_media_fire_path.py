"""A post with an uploaded image (``POST /v1/media``, the pre-signed upload, ``complete``) reaches
the Mastodon stand-in, the reference PDS and a webhook through the real fire path, each once
with its image and alt text; a Mastodon video goes through 202 -> 206 -> 200 between rounds, no
Lambda waiting on it (decisions "Mastodon media: uploaded once, waited for between rounds",
"Publishing media to Bluesky and webhooks")."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import boto3
import pytest
import requests
from moto import mock_aws

from local.bluesky import LocalPds
from local.mastodon import MastodonStandIn
from scheduled_posts.clock import format_instant
from scheduled_posts.data.media_objects import S3MediaObjects, s3_client
from scheduled_posts.logic.network_delivery import default_adapters
from scheduled_posts.logic.publish import Publisher
from scheduled_posts.platforms.bluesky import BlueskyClient
from scheduled_posts.platforms.http import OutboundHttp
from scheduled_posts.platforms.webhook import WebhookAdapter
from tests.integration.dispatch.conftest import build_fire_path
from tests.integration.networks.conftest import (
    NetworkFirePath,
    bluesky_posts,
    make_channels,
)
from tests.support.api import ApiClient, install_api, uninstall_api
from tests.support.clock import SimClock
from tests.support.media import png
from tests.unit.media.test_media_probe import mp4


class MediaFirePath(NetworkFirePath):
    """The production adapters of the networks, the fake receiver's webhook adapter."""

    def build_publisher(self) -> Publisher:
        adapters = {**default_adapters(self.settings), "webhook": self.adapter}
        return Publisher(
            self.settings, store=self.store, queue=self.queue, adapters=adapters, clock=self.clock
        )


@pytest.fixture
def stand_in() -> Iterator[tuple[MastodonStandIn, str]]:
    state = MastodonStandIn()
    with state.serving() as base:
        yield state, base


@pytest.fixture
def world(clock: SimClock) -> Iterator[tuple[MediaFirePath, ApiClient]]:
    with mock_aws():
        base = build_fire_path(
            clock,
            OUTBOUND_ALLOWED_ORIGINS="http://127.0.0.1",
            WRITE_SHARD_COUNT=2,
            RETRY_BASE_SECONDS=2.0,
            RETRY_CAP_SECONDS=60.0,
        )
        boto3.client("s3", region_name="us-east-1").create_bucket(
            Bucket=base.settings.MEDIA_BUCKET_NAME
        )
        s3_client.cache_clear()
        # the webhook adapter of the fire path's fake receiver, with the media bucket
        hooks = WebhookAdapter(
            base.settings,
            transport=base.receiver,
            resolver=base.receiver.resolver,
            media=S3MediaObjects(base.settings.MEDIA_BUCKET_NAME),
        )
        fire = MediaFirePath(
            aws=base.aws,
            clock=clock,
            receiver=base.receiver,
            adapter=hooks,
            store=base.store,
            queue=base.queue,
            due_index=base.due_index,
        )
        install_api(fire.settings, clock)
        yield fire, ApiClient("alice")
        uninstall_api()


def upload(api: ApiClient, data: bytes, content_type: str, alt_text: str) -> dict[str, Any]:
    """Create, upload (the pre-signed POST form, as ``curl -F``) and complete one upload."""
    created = api.post(
        "/v1/media", {"content_type": content_type, "size": len(data), "alt_text": alt_text}
    )
    assert created.status == 201, created.json
    form = created.json["upload"]
    sent = requests.post(form["url"], data=form["fields"], files={"file": ("f", data)}, timeout=5)
    assert sent.status_code == 204
    done = api.post(f"/v1/media/{created.json['media_id']}/complete")
    assert done.status == 200 and done.json["status"] == "ready", done.json
    return dict(done.json)


def test_a_png_with_alt_text_reaches_mastodon_bluesky_and_a_webhook_once_each(
    world: tuple[MediaFirePath, ApiClient],
    stand_in: tuple[MastodonStandIn, str],
    local_pds: LocalPds,
) -> None:
    fire, api = world
    mastodon_id, bluesky_id, _, sky = make_channels(
        api, stand_in, local_pds, f"pics{uuid.uuid4().hex[:8]}"
    )
    fire.channel("hook", owner="alice")
    image = png(40, 30)
    media = upload(api, image, "image/png", "A red square on white")
    post = api.post(
        "/v1/scheduled-posts",
        {
            "content": "Look at this",
            "publish_at": format_instant(fire.clock.now() + timedelta(seconds=125)),
            "channel_ids": [mastodon_id, bluesky_id, "hook"],
            "media_ids": [media["media_id"]],
        },
    )
    assert post.status == 201, post.json
    fire.driver.run_for(300)

    got = api.get(f"/v1/scheduled-posts/{post.json['schedule_id']}").json
    assert got["status"] == "published", [d["last_error"] for d in got["deliveries"]]
    # Mastodon: one status, one attachment with the alt text as its description, one upload
    [status] = stand_in[0].statuses
    [attachment] = [stand_in[0].media.items[i] for i in status.media_ids]
    assert attachment.description == "A red square on white"
    assert stand_in[0].media.upload_count(image) == 1
    # Bluesky: one record with the image, its alt and aspect ratio; the blob reads back
    [record] = bluesky_posts(local_pds, sky.did)
    embed = record["value"]["embed"]
    assert embed["$type"] == "app.bsky.embed.images"
    [entry] = embed["images"]
    assert (entry["alt"], entry["aspectRatio"]) == (
        "A red square on white",
        {"width": 40, "height": 30},
    )
    http = OutboundHttp(allowed_origins=["http://127.0.0.1"], timeout_seconds=20)
    blob = BlueskyClient(http).http.request(
        "GET",
        f"{local_pds.url}/xrpc/com.atproto.sync.getBlob",
        query={"did": sky.did, "cid": entry["image"]["ref"]["$link"]},
    )
    assert blob.body == image
    # the webhook: the body lists the item with a working link to the same bytes
    [request] = fire.receiver.requests_for(f"{post.json['schedule_id']}:hook")
    assert request.payload is not None
    [item] = request.payload["media"]
    assert (item["sha256"], item["alt_text"]) == (
        hashlib.sha256(image).hexdigest(),
        "A red square on white",
    )
    assert requests.get(item["url"], timeout=5).content == image  # moto's S3 answers it


def test_a_mastodon_video_is_waited_for_between_rounds_and_published_once(
    world: tuple[MediaFirePath, ApiClient],
    stand_in: tuple[MastodonStandIn, str],
    local_pds: LocalPds,
) -> None:
    fire, api = world
    stand_in[0].media.processing_polls = 2  # 202, then 206, then 200
    mastodon_id, _, _, _ = make_channels(api, stand_in, local_pds, f"clip{uuid.uuid4().hex[:8]}")
    video = mp4()
    media = upload(api, video, "video/mp4", "A short clip")
    created = api.post(
        "/v1/scheduled-posts",
        {
            "content": "Watch",
            "publish_at": format_instant(fire.clock.now() + timedelta(seconds=125)),
            "channel_ids": [mastodon_id],
            "media_ids": [media["media_id"]],
        },
    )
    assert created.status == 201, created.json
    post = created.json
    fire.driver.run_for(400)

    got = api.get(f"/v1/scheduled-posts/{post['schedule_id']}").json
    assert got["status"] == "published", [d["last_error"] for d in got["deliveries"]]
    [status] = stand_in[0].statuses
    [attachment] = [stand_in[0].media.items[i] for i in status.media_ids]
    assert attachment.polls >= 2 and attachment.description == "A short clip"
    assert stand_in[0].media.upload_count(video) == 1
    attempts = api.get(f"/v1/scheduled-posts/{post['schedule_id']}/attempts").json["items"]
    waits = [a for a in attempts if (a["error"] or "").startswith("media_processing: ")]
    assert waits and all(a["outcome"] == "rate_limited" for a in waits)
    assert [a["outcome"] for a in attempts][-1] == "published"
    assert got["deliveries"][0]["attempts"] == 1  # the waits used no attempt
