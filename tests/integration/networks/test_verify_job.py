"""Scheduled verification (decision "Scheduled verification"): the verifier's run, against the
reference PDS and the Mastodon stand-in, reads back what the fire path published in the window:
``verified_at`` after one run, a deletion reported ``missing`` once across two runs, a read
that raises for one tenant's post never stops another tenant's, and a full rate-limit minute
defers a read."""

from __future__ import annotations

from typing import Any

import pytest

from functions.verifier.handler import make_lambda_handler
from local.bluesky import LocalPds, delete_post
from local.emulation.lambda_runtime import LambdaContext
from local.mastodon import MastodonStandIn
from scheduled_posts import keys
from scheduled_posts.clock import format_instant
from scheduled_posts.data.rate_limit import RateLimitStore
from scheduled_posts.logic.rate_limit import minute_start
from scheduled_posts.logic.verify import PlannedRead, Reader, read_on_network
from scheduled_posts.logic.verify_job import VerifyJob, VerifyJobDeps, VerifyRunResult
from scheduled_posts.platforms.http import OutboundHttp
from scheduled_posts.platforms.readback import Seen
from tests.integration.networks.conftest import NetworkFirePath, published_post
from tests.support.api import ApiClient

World = tuple[NetworkFirePath, ApiClient]


def _run(fire: NetworkFirePath, reader: Reader | None = None) -> VerifyRunResult:
    return VerifyJob(
        fire.settings, VerifyJobDeps.from_settings(fire.settings, fire.clock), reader
    ).run()


def _deliveries(api: ApiClient, schedule_id: str) -> dict[str, dict[str, Any]]:
    answer = api.get(f"/v1/scheduled-posts/{schedule_id}")
    assert answer.status == 200, answer.json
    return {d["channel_id"]: d for d in answer.json["deliveries"]}


def test_verify_job_one_run_gives_published_deliveries_verified_at(
    world: World, stand_in: tuple[MastodonStandIn, str], local_pds: LocalPds
) -> None:
    fire, api = world
    schedule_id, mastodon_id, bluesky_id, _ = published_post(world, stand_in, local_pds, "jobrun")
    assert _deliveries(api, schedule_id)[bluesky_id]["verified_at"] is None

    result = _run(fire)

    deliveries = _deliveries(api, schedule_id)
    now = format_instant(fire.clock.now())
    assert deliveries[bluesky_id]["verified_at"] == deliveries[mastodon_id]["verified_at"] == now
    assert result.outcomes == {"present": 2}
    # verified within VERIFY_REVERIFY_SECONDS: the next run reads nothing
    fire.clock.advance(fire.settings.VERIFY_INTERVAL_SECONDS)
    assert _run(fire).outcomes == {}


def test_verify_job_a_deleted_record_is_missing_once_across_two_runs(
    world: World,
    stand_in: tuple[MastodonStandIn, str],
    local_pds: LocalPds,
    verification_findings: list[float],
) -> None:
    fire, api = world
    findings = verification_findings
    schedule_id, _, bluesky_id, sky = published_post(world, stand_in, local_pds, "goneaway")
    remote_id = _deliveries(api, schedule_id)[bluesky_id]["remote_id"]
    delete_post(local_pds.url, sky, remote_id.rsplit("/", 1)[-1])

    first = _run(fire)
    fire.clock.advance(fire.settings.VERIFY_INTERVAL_SECONDS)
    second = _run(fire)

    assert first.outcomes == {"missing": 1, "present": 1}
    assert second.outcomes == {"missing": 1}  # the Mastodon status was verified just now
    assert _deliveries(api, schedule_id)[bluesky_id]["verification"] == "missing"
    assert findings == [1]  # reported once, not once per run


def test_verify_job_a_read_that_raises_never_stops_another_tenants_post(
    world: World, stand_in: tuple[MastodonStandIn, str], local_pds: LocalPds
) -> None:
    fire, alice = world
    bob = ApiClient("bob")
    broken, _, _, _ = published_post(world, stand_in, local_pds, "broken")
    healthy, _, bob_sky, _ = published_post((fire, bob), stand_in, local_pds, "healthy")
    broken_channels = set(_deliveries(alice, broken))
    network = read_on_network(OutboundHttp.from_settings(fire.settings))

    def reader(planned: PlannedRead) -> Seen:
        if planned.channel_id in broken_channels:
            raise ConnectionResetError("the read broke")
        return network(planned)

    results: list[VerifyRunResult] = []

    def run() -> VerifyRunResult:
        results.append(_run(fire, reader))
        return results[-1]

    handler = make_lambda_handler(run)
    with pytest.raises(RuntimeError, match="1 post"):  # after the run: the Errors alarm
        handler({}, LambdaContext("verifier", 240, clock=fire.clock.seconds))

    assert results[0].failures == 1
    assert _deliveries(bob, healthy)[bob_sky]["verified_at"] == format_instant(fire.clock.now())
    assert all(d["verified_at"] is None for d in _deliveries(alice, broken).values())


def test_verify_job_a_full_rate_limit_minute_defers_the_read_to_a_later_run(
    world: World, stand_in: tuple[MastodonStandIn, str], local_pds: LocalPds
) -> None:
    fire, api = world
    schedule_id, mastodon_id, bluesky_id, _ = published_post(world, stand_in, local_pds, "limited")
    for channel_id in (mastodon_id, bluesky_id):
        patched = api.patch(f"/v1/channels/{channel_id}", {"rate_limit_per_minute": 1})
        assert patched.status == 200, patched.json
    minute = minute_start(fire.clock.now())
    slots = RateLimitStore(fire.settings.POSTS_TABLE_NAME)
    assert slots.take_slot(bluesky_id, keys.rate_minute(minute), limit=1, expires_at=0)

    first = _run(fire)

    assert (first.deferred, first.outcomes) == (1, {"present": 1, "unknown": 1})
    assert _deliveries(api, schedule_id)[bluesky_id]["verified_at"] is None
    assert slots.starts(mastodon_id, keys.rate_minute(minute)) == 1  # the read paid its slot
    fire.clock.advance(60)
    assert _run(fire).outcomes == {"present": 1}
    assert _deliveries(api, schedule_id)[bluesky_id]["verified_at"] is not None
