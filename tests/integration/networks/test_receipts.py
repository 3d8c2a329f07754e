"""Receipts (decision "Receipts"): a published delivery carries what the network returned,
equal to what the network itself shows: Bluesky's record CID (as ``getRecord`` answers it) and
the commit ``rev``, Mastodon's status ``created_at``, a webhook receiver's status and the
SHA-256 of the exact body it received."""

from __future__ import annotations

import hashlib
from datetime import timedelta

from local.bluesky import LocalPds
from local.mastodon import MastodonStandIn
from scheduled_posts.clock import format_instant
from scheduled_posts.platforms.bluesky import BlueskyClient
from scheduled_posts.platforms.http import OutboundHttp
from tests.integration.dispatch.conftest import FirePath
from tests.integration.networks.conftest import NetworkFirePath, make_channels
from tests.support.api import ApiClient


def _get_record(pds: LocalPds, uri: str) -> dict[str, object]:
    did, collection, rkey = uri.removeprefix("at://").split("/")
    http = OutboundHttp(allowed_origins=["http://127.0.0.1"], timeout_seconds=20)
    answer = BlueskyClient(http).http.request(
        "GET",
        f"{pds.url}/xrpc/com.atproto.repo.getRecord",
        query={"repo": did, "collection": collection, "rkey": rkey},
    )
    return answer.json_object()


def test_receipts_equal_what_get_record_and_the_stand_in_return(
    world: tuple[NetworkFirePath, ApiClient],
    stand_in: tuple[MastodonStandIn, str],
    local_pds: LocalPds,
) -> None:
    fire, api = world
    mastodon_id, bluesky_id, _, _sky = make_channels(api, stand_in, local_pds, "receipts")
    publish_at = fire.clock.now() + timedelta(seconds=125)
    created = api.post(
        "/v1/scheduled-posts",
        {
            "content": "Receipts, please",
            "publish_at": format_instant(publish_at),
            "channel_ids": [mastodon_id, bluesky_id],
        },
    )
    assert created.status == 201, created.json
    fire.driver.run_for(300)

    got = api.get(f"/v1/scheduled-posts/{created.json['schedule_id']}").json
    deliveries = {d["channel_id"]: d for d in got["deliveries"]}
    sky = deliveries[bluesky_id]
    record = _get_record(local_pds, sky["remote_id"])
    assert sky["receipt"]["cid"] == record["cid"]
    assert isinstance(sky["receipt"]["rev"], str) and len(sky["receipt"]["rev"]) == 13  # a TID
    [status] = stand_in[0].statuses
    toot = deliveries[mastodon_id]
    assert toot["remote_id"] == status.id
    assert toot["receipt"]["created_at"] == format_instant(status.created_at)


def test_webhook_receipt_is_the_receivers_status_and_the_signed_body_digest(
    fire: FirePath,
) -> None:
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(seconds=30), ["c1"])
    fire.driver.run_for(120)
    [request] = fire.receiver.requests_for(f"{post.schedule_id}:c1")
    receipt = fire.read(post).deliveries["c1"].receipt
    assert receipt is not None
    assert receipt.http_status == request.answer.status
    assert receipt.body_sha256 == hashlib.sha256(request.body).hexdigest()
