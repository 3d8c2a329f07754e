"""Lag tells the truth: ``published_at``, ``publish_lag_seconds`` and the attempt's
``finished_at`` are stamped when the destination's answer arrives, not before the request
(decision "Lag is stamped when the answer arrives")."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from scheduled_posts.clock import parse_instant
from scheduled_posts.models.post import PostStatus
from tests.integration.dispatch.conftest import FirePath
from tests.support.receiver import Answer

SLOW_ANSWER_SECONDS = 6.0


def test_round_slow_webhook_answer_counts_in_lag_and_finished_at(fire: FirePath) -> None:
    # Given a webhook that answers 6 s after the request arrives (on the simulated clock)
    fire.channel("c1")
    post = fire.post(fire.clock.now() + timedelta(seconds=30), ["c1"])

    def slow(url: str, key: str | None, payload: dict[str, Any] | None) -> Answer | None:
        fire.clock.advance(SLOW_ANSWER_SECONDS)
        return None  # then the usual 200

    fire.receiver.responder = slow

    # When the post is delivered
    fire.driver.run_for(120)

    # Then its lag and publish time include the 6 s the destination took to answer
    got = fire.read(post)
    assert got.status == PostStatus.PUBLISHED
    assert got.publish_lag_seconds is not None
    assert got.publish_lag_seconds >= SLOW_ANSWER_SECONDS
    assert got.published_at is not None
    assert got.published_at >= post.publish_at + timedelta(seconds=SLOW_ANSWER_SECONDS)
    (attempt,) = fire.attempts(post)
    started, finished = parse_instant(attempt["started_at"]), parse_instant(attempt["finished_at"])
    assert finished >= started + timedelta(seconds=SLOW_ANSWER_SECONDS)
    assert attempt["lag_seconds"] >= SLOW_ANSWER_SECONDS
