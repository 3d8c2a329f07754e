"""The thread walk (``platforms/thread.py``), pure: a part refused for good fails the delivery
listing the parts published before it; a retry after part 1 never says nothing was published."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.lifecycle.reach import published_nothing
from scheduled_posts.models.post import Attempt
from scheduled_posts.platforms.base import DeliveryRequest, DeliveryResult, PartRef, ThreadPart
from scheduled_posts.platforms.thread import deliver_thread

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def _request() -> DeliveryRequest:
    return DeliveryRequest(
        schedule_id="s",
        channel_id="c",
        content="one",
        parts=(ThreadPart(content="two"), ThreadPart(content="three")),
        publish_at=NOW,
        attempt=1,
        idempotency_key="s:c",
    )


def _writer(fail_at: int, failure: DeliveryResult | Exception):
    def write(index: int, part: DeliveryRequest, root: PartRef | None, parent: PartRef | None):
        if index == fail_at:
            if isinstance(failure, Exception):
                raise failure
            return failure, None
        ok = DeliveryResult(outcome="published", remote_id=f"id{index}")
        return ok, PartRef(remote_id=f"id{index}")

    return write


def test_thread_walk_refused_part_fails_listing_the_published_parts() -> None:
    refused = DeliveryResult(outcome="failed", http_status=422, error="http_422: no")

    result = deliver_thread(_request(), _writer(2, refused), progress=None, now=NOW)

    assert result.outcome == "failed"
    assert result.error == "part 3 of 3: http_422: no"
    assert [p.remote_id for p in result.parts] == ["id0", "id1"]
    assert (result.parts_total, result.remote_id) == (3, None)


def test_thread_walk_retry_after_part_1_is_never_a_nothing_published_word() -> None:
    wait = RetryableDeliveryError("media_processing: x", http_status=429, rate_limited=True)
    with pytest.raises(RetryableDeliveryError) as caught:
        deliver_thread(_request(), _writer(1, wait), progress=None, now=NOW)

    assert str(caught.value).startswith("thread_partial: part 2 of 3")
    assert caught.value.rate_limited and caught.value.http_status is None
    attempt = Attempt(
        channel_id="c", attempt=1, started_at=NOW, outcome="rate_limited", error=str(caught.value)
    )
    assert not published_nothing(attempt)


def test_thread_walk_retry_of_part_1_keeps_its_own_word() -> None:
    wait = RetryableDeliveryError("media_processing: x", rate_limited=True)
    with pytest.raises(RetryableDeliveryError, match=r"^media_processing"):
        deliver_thread(_request(), _writer(0, wait), progress=None, now=NOW)
