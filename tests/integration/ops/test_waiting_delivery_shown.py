"""Issue 17 item 6: a delivery waiting on a ``Retry-After`` or a rate limit shows when it is sent
next (``next_attempt_at``) in ``GET``."""

from __future__ import annotations

from datetime import timedelta

import pytest

from scheduled_posts.clock import format_instant, parse_instant
from tests.integration.dispatch.conftest import FirePath
from tests.integration.ops.conftest import set_rate_limit
from tests.support.api import ApiClient
from tests.support.receiver import Answer


@pytest.mark.parametrize(
    "answer", [Answer.rate_limited("120"), Answer.error(503, retry_after="120")]
)
def test_get_post_waiting_on_retry_after_shows_next_attempt_at(api_fire, answer: Answer) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    fire.channel("c1")
    fire.receiver.script(answer, url="https://hooks.example.com/c1")
    post = fire.post(fire.clock.now() + timedelta(seconds=5), ["c1"])
    fire.driver.run_for(10)

    delivery = (
        ApiClient("alice").get(f"/v1/scheduled-posts/{post.schedule_id}").json["deliveries"][0]
    )

    assert delivery["status"] == "retry_scheduled"
    waited = parse_instant(delivery["next_attempt_at"]) - fire.clock.now()
    assert timedelta(seconds=100) < waited <= timedelta(seconds=120)


def test_get_post_waiting_on_rate_limit_shows_next_attempt_at(api_fire) -> None:  # type: ignore[no-untyped-def]
    fire: FirePath = api_fire()
    fire.channel("c1")
    set_rate_limit(fire, "c1", 1)
    at = fire.clock.now().replace(second=0, microsecond=0) + timedelta(minutes=1, seconds=10)
    first = fire.post(at, ["c1"])
    second = fire.post(at, ["c1"])
    fire.clock.advance_to(at - timedelta(seconds=5))
    fire.driver.run_for(10)

    shown = [
        ApiClient("alice").get(f"/v1/scheduled-posts/{p.schedule_id}").json["deliveries"][0]
        for p in (first, second)
    ]

    waiting = [d for d in shown if d["status"] != "published"]
    assert len(waiting) == 1
    next_minute = at.replace(second=0) + timedelta(minutes=1)
    assert waiting[0]["next_attempt_at"] == format_instant(next_minute)
