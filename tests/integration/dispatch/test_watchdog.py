"""The watchdog: expired leases are taken over once and re-dispatched with the new token."""

from __future__ import annotations

import json
from datetime import timedelta

from scheduled_posts.logic.watchdog import rescue_expired_leases
from tests.integration.dispatch.conftest import FirePath


def test_watchdog_expired_lease_taken_over_once_with_new_token(fire: FirePath) -> None:
    fire.channel("c1")
    post = fire.post(fire.clock.now(), ["c1"])
    now = fire.clock.now()
    claimed = fire.store.claim(
        post, lease_token="old", lease_expires_at=now + timedelta(seconds=60), now=now
    )
    assert claimed is not None
    fire.clock.advance(30)
    early = rescue_expired_leases(fire.settings, clock=fire.clock)
    assert early.taken_over == []  # lease still valid
    fire.clock.advance(31)
    first = rescue_expired_leases(fire.settings, clock=fire.clock)
    second = rescue_expired_leases(fire.settings, clock=fire.clock)
    assert first.taken_over == [post.schedule_id]
    assert second.taken_over == []  # the new lease is fresh
    token = fire.read(post).lease_token
    assert token not in (None, "old")
    messages = fire.driver.receive(10)
    assert [json.loads(m["Body"])["lease_token"] for m in messages] == [token]
