"""The Bluesky adapter publishes a frozen link card as ``app.bsky.embed.external`` and a repeat
or a retry after a lost ``putRecord`` answer builds the byte-identical record: the PDS keeps one
record (decision "Bluesky link cards, frozen at scheduling time")."""

from __future__ import annotations

import pytest

from local.bluesky import LocalPds, PdsAccount
from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.models.link_card import CardThumb, LinkCard
from scheduled_posts.platforms.base import DeliveryRequest
from tests.integration.networks import test_bluesky_media as bluesky_media
from tests.integration.networks.test_bluesky_contract import (
    PUBLISH_AT,
    channel,
    make_request,
    posts_on_pds,
)
from tests.integration.networks.test_bluesky_media import (
    PUT,
    UPLOAD,
    FaultyTransport,
    get_blob,
    make_adapter,
)
from tests.support.media import MemoryMediaObjects, png

account = bluesky_media.account  # the media tests' fixtures, shared
transport = bluesky_media.transport
objects = bluesky_media.objects


def with_card(request: DeliveryRequest, media: MemoryMediaObjects) -> DeliveryRequest:
    thumb = media.add(png(48, 24), media_id="t1", width=48, height=24)
    card = LinkCard(
        uri="https://example.org/article",
        title="A title",
        description="A description",
        thumb=CardThumb(**thumb.model_dump(exclude={"alt_text", "duration_seconds"})),
    )
    return request.model_copy(update={"link_card": card})


def test_bluesky_card_is_an_external_embed_with_its_thumb_blob(
    local_pds: LocalPds,
    account: PdsAccount,
    transport: FaultyTransport,
    objects: MemoryMediaObjects,
) -> None:
    adapter = make_adapter(local_pds, account, transport, objects)
    result = adapter.deliver(channel(), with_card(make_request("card"), objects), now=PUBLISH_AT)
    assert result.outcome == "published", result
    [post] = posts_on_pds(local_pds, account)
    embed = post["value"]["embed"]
    assert embed["$type"] == "app.bsky.embed.external"
    external = embed["external"]
    assert (external["uri"], external["title"], external["description"]) == (
        "https://example.org/article",
        "A title",
        "A description",
    )
    assert get_blob(local_pds, account.did, external["thumb"]["ref"]["$link"]) == png(48, 24)
    assert result.media_remote_ids == ()  # a thumb is not one of the post's media


def test_bluesky_card_lost_answer_then_retry_and_a_repeat_keep_one_record(
    local_pds: LocalPds,
    account: PdsAccount,
    transport: FaultyTransport,
    objects: MemoryMediaObjects,
) -> None:
    adapter = make_adapter(local_pds, account, transport, objects)
    transport.lose[PUT] = 1
    request = with_card(make_request("card lost"), objects)
    with pytest.raises(RetryableDeliveryError, match="answer was lost"):
        adapter.deliver(channel(), request, now=PUBLISH_AT)
    [written] = posts_on_pds(local_pds, account)
    # a repeat that does not know of the write: the same record, taken as a no-op
    again = adapter.deliver(channel(), request, now=PUBLISH_AT)
    retry = adapter.deliver(
        channel(), with_card(make_request("card lost", retry=True), objects), now=PUBLISH_AT
    )
    assert again.outcome == retry.outcome == "published", (again, retry)
    [post] = posts_on_pds(local_pds, account)
    assert post["cid"] == written["cid"]
    assert transport.paths.count(UPLOAD) == 2
