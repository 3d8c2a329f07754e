"""Verification on the network (decision "Verification on the network"): a post published
through the real fire path to the reference PDS and the Mastodon stand-in is read back by
``POST /v1/scheduled-posts/{id}/verify``: ``verified_at`` while the network shows it,
``missing`` once it was deleted there, cleared when it is there again; another user's post is
404; webhooks are never read."""

from __future__ import annotations

from typing import Any

from local.bluesky import LocalPds, delete_post
from local.mastodon import MastodonStandIn
from scheduled_posts.clock import format_instant
from tests.integration.networks.conftest import NetworkFirePath
from tests.integration.networks.conftest import published_post as _published
from tests.support.api import ApiClient


def _deliveries(api: ApiClient, path: str) -> dict[str, dict[str, Any]]:
    answer = api.post(f"{path}/verify")
    assert answer.status == 200, answer.json
    return {d["channel_id"]: d for d in answer.json["deliveries"]}


def test_verify_published_deliveries_get_verified_at_then_missing_once_deleted(
    world: tuple[NetworkFirePath, ApiClient],
    stand_in: tuple[MastodonStandIn, str],
    local_pds: LocalPds,
    verification_findings: list[float],
) -> None:
    fire, api = world
    findings = verification_findings
    schedule_id, mastodon_id, bluesky_id, sky = _published(world, stand_in, local_pds, "verified")
    path = f"/v1/scheduled-posts/{schedule_id}"
    assert api.get(path).json["deliveries"][0]["verified_at"] is None

    first = _deliveries(api, path)
    assert first[bluesky_id]["verified_at"] == format_instant(fire.clock.now())
    assert first[mastodon_id]["verified_at"] == format_instant(fire.clock.now())
    assert first[bluesky_id]["verification"] is first[mastodon_id]["verification"] is None

    delete_post(local_pds.url, sky, first[bluesky_id]["remote_id"].rsplit("/", 1)[-1])
    [status] = stand_in[0].statuses
    stand_in[0].statuses.remove(status)
    fire.clock.advance(60)
    second = _deliveries(api, path)
    assert second[bluesky_id]["verification"] == "missing"
    assert second[mastodon_id]["verification"] == "missing"
    # verified_at keeps the last time the network showed it; the post stays published
    assert second[bluesky_id]["verified_at"] == first[bluesky_id]["verified_at"]
    assert second[bluesky_id]["status"] == "published"
    assert findings == [1, 1]  # one per finding ...
    fire.clock.advance(60)
    assert _deliveries(api, path)[bluesky_id]["verification"] == "missing"
    assert findings == [1, 1]  # ... not one per read


def test_verify_a_status_there_again_clears_the_finding(
    world: tuple[NetworkFirePath, ApiClient],
    stand_in: tuple[MastodonStandIn, str],
    local_pds: LocalPds,
) -> None:
    fire, api = world
    schedule_id, mastodon_id, _, _ = _published(world, stand_in, local_pds, "again")
    path = f"/v1/scheduled-posts/{schedule_id}"
    [status] = stand_in[0].statuses
    stand_in[0].statuses.remove(status)
    assert _deliveries(api, path)[mastodon_id]["verification"] == "missing"
    stand_in[0].statuses.append(status)  # a late answer: the status is there after all
    fire.clock.advance(60)
    again = _deliveries(api, path)[mastodon_id]
    assert again["verification"] is None
    assert again["verified_at"] == format_instant(fire.clock.now())


def test_verify_another_users_post_is_404(
    world: tuple[NetworkFirePath, ApiClient],
    stand_in: tuple[MastodonStandIn, str],
    local_pds: LocalPds,
) -> None:
    schedule_id, _, _, _ = _published(world, stand_in, local_pds, "notyours")
    answer = ApiClient("mallory").post(f"/v1/scheduled-posts/{schedule_id}/verify")
    assert answer.status == 404
