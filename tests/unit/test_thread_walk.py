"""The thread walk (``platforms/thread.py``), pure: a part refused for good fails the delivery
listing the parts published before it; a retry after part 1 never says nothing was published;
a first comment that keeps failing leaves the thread published and its comment failed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.lifecycle import outcomes
from scheduled_posts.lifecycle.reach import published_nothing
from scheduled_posts.lifecycle.retry import RetryPolicy
from scheduled_posts.lifecycle.states import DeliveryStatus, PostStatus
from scheduled_posts.models.post import Attempt, Delivery, Post
from scheduled_posts.models.receipt import Receipt
from scheduled_posts.models.thread import COMMENT_INDEX, FirstComment
from scheduled_posts.platforms.base import DeliveryRequest, DeliveryResult, PartRef, ThreadPart
from scheduled_posts.platforms.thread import CommentRetry, deliver_refused, deliver_thread

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


class _Progress:
    """An in-memory ``ThreadProgress``: the first stored ref of each part wins."""

    def __init__(self) -> None:
        self.refs: dict[int, PartRef] = {}

    def known(self, idempotency_key: str) -> dict[int, PartRef]:
        return dict(self.refs)

    def remember(self, idempotency_key: str, index: int, ref: PartRef, *, now: datetime) -> PartRef:
        return self.refs.setdefault(index, ref)


def _round(request, write, progress, delivery, attempt_no: int, now: datetime):
    """One delivery round as the worker plays it: the walk, then the outcome's decision."""
    started = Attempt(channel_id="c", attempt=attempt_no, started_at=now, outcome="started")
    post = Post(
        schedule_id="s",
        owner="alice",
        status=PostStatus.PUBLISHING,
        content="one",
        publish_at=NOW,
        channel_ids=["c"],
        created_at=NOW,
        updated_at=NOW,
    )
    try:
        result = deliver_thread(request, write, progress=progress, now=now)
    except RetryableDeliveryError as exc:
        return outcomes.retryable(
            post, delivery, started, exc, now=now, policy=POLICY, uniform=_no_jitter
        )
    return outcomes.final(post, delivery, started, result, now)


def _no_jitter(low: float, high: float) -> float:
    return low


POLICY = RetryPolicy(
    max_attempts=3, base_seconds=1, cap_seconds=10, misfire_grace_seconds=3600, lease_seconds=60
)


def test_a_first_comment_that_keeps_failing_leaves_the_thread_published_its_comment_failed() -> (
    None
):
    # Given a thread with a first comment whose every write answers 503
    request = _request().model_copy(update={"first_comment": FirstComment(content="link")})
    sent: list[int] = []

    def write(index: int, part: DeliveryRequest, root: PartRef | None, parent: PartRef | None):
        sent.append(index)
        if index == COMMENT_INDEX:
            raise RetryableDeliveryError("http_503", http_status=503)
        return DeliveryResult(outcome="published", remote_id=f"id{index}"), PartRef(
            remote_id=f"id{index}"
        )

    progress = _Progress()
    delivery = Delivery(channel_id="c", status=DeliveryStatus.PENDING)
    # When the worker plays its rounds until the delivery ends (each a second later)
    for number in range(1, 10):
        now = NOW + timedelta(seconds=number)
        delivery = _round(request, write, progress, delivery, number, now).delivery
        if delivery.status in (DeliveryStatus.PUBLISHED, DeliveryStatus.FAILED):
            break
    # Then the thread is published (at its first round), its comment failed with the reason,
    # and no part was sent twice: only the comment was tried again, MAX_ATTEMPTS times in all
    assert delivery.status == DeliveryStatus.PUBLISHED
    assert delivery.comment is not None and delivery.comment.status == "failed"
    assert "gave up after 3 attempts" in (delivery.comment.error or "")
    assert [p.remote_id for p in delivery.parts] == ["id0", "id1", "id2"]
    assert sent == [0, 1, 2, COMMENT_INDEX, COMMENT_INDEX, COMMENT_INDEX]
    assert delivery.published_at == NOW + timedelta(seconds=1)
    assert delivery.lag_seconds == 1.0


def test_a_comment_retry_never_says_nothing_was_published() -> None:
    request = _request().model_copy(update={"first_comment": FirstComment(content="link")})
    busy = RetryableDeliveryError("http_503", http_status=503)
    with pytest.raises(CommentRetry) as caught:
        deliver_thread(request, _writer(COMMENT_INDEX, busy), progress=None, now=NOW)

    assert str(caught.value).startswith("comment_retry:") and caught.value.http_status is None
    attempt = Attempt(
        channel_id="c", attempt=1, started_at=NOW, outcome="retryable", error=str(caught.value)
    )
    assert not published_nothing(attempt)


def test_a_part_published_with_an_unusable_answer_is_found_again_not_failed() -> None:
    # Given part 2's write published, its answer's id dropped (a hostile answer: no ref)
    def write(index: int, part: DeliveryRequest, root: PartRef | None, parent: PartRef | None):
        if index == 1:
            return DeliveryResult(outcome="published", http_status=200), None
        return DeliveryResult(outcome="published", remote_id=f"id{index}"), PartRef(
            remote_id=f"id{index}"
        )

    # Then the round is retried (the next finds the part by its identity), never failed
    with pytest.raises(RetryableDeliveryError, match=r"^thread_partial: .*unusable_answer"):
        deliver_thread(_request(), write, progress=None, now=NOW)


def test_a_thread_finished_after_part_1_keeps_part_1s_cid_in_its_receipt() -> None:
    """Part 1 out in an earlier round, the rest in this one: the delivery's receipt still
    names part 1's record CID (the verifier tells a replaced record by it; fault seed 109)."""
    progress = _Progress()
    progress.refs[0] = PartRef(remote_id="at://did/app.bsky.feed.post/r0", cid="bafyroot")

    def write(index: int, part: DeliveryRequest, root: PartRef | None, parent: PartRef | None):
        answer = DeliveryResult(
            outcome="published", remote_id=f"id{index}", receipt=Receipt(cid=f"bafy{index}")
        )
        return answer, PartRef(remote_id=f"id{index}", cid=f"bafy{index}")

    result = deliver_thread(_request(), write, progress=progress, now=NOW)

    assert result.remote_id == "at://did/app.bsky.feed.post/r0"
    assert result.receipt is not None and result.receipt.cid == "bafyroot"


@pytest.mark.parametrize(
    "receipt",
    [Receipt(cid="bafyroot", rev="3kroot"), Receipt(created_at="2026-12-04T09:00:00.000Z")],
    ids=["bluesky", "mastodon"],
)
def test_a_thread_finished_in_a_later_round_reports_part_1s_whole_receipt(receipt) -> None:
    """Round 1 writes part 1 (its receipt: Bluesky cid and rev, or Mastodon created_at) and
    fails at part 2; round 2 writes the rest: the delivery's receipt is part 1's whole one,
    never a later part's nor a bare CID (docs/api.md, receipt table)."""
    progress = _Progress()
    rounds = {"n": 1}

    def write(index: int, part: DeliveryRequest, root: PartRef | None, parent: PartRef | None):
        if index == 1 and rounds["n"] == 1:
            raise RetryableDeliveryError("http_503")
        answer = receipt if index == 0 else Receipt(cid=f"bafy{index}", rev=f"3k{index}")
        result = DeliveryResult(outcome="published", remote_id=f"id{index}", receipt=answer)
        return result, PartRef(remote_id=f"id{index}", cid=answer.cid, receipt=answer)

    with pytest.raises(RetryableDeliveryError, match=r"^thread_partial"):
        deliver_thread(_request(), write, progress=progress, now=NOW)
    rounds["n"] = 2
    result = deliver_thread(_request(), write, progress=progress, now=NOW)

    assert result.outcome == "published" and result.remote_id == "id0"
    assert result.receipt == receipt


REAUTH = DeliveryResult(
    outcome="failed", reason="reauthorization_required", error="channel sky needs new credentials"
)


def test_a_channel_refused_after_part_1_went_out_lists_part_1_and_sends_nothing() -> None:
    """Round 1 published part 1, then the channel's credentials were refused (another post
    marked it): the refused round lists part 1, never "nothing on the network" (fault seed 27
    with the thread worlds)."""
    progress = _Progress()
    progress.refs[0] = PartRef(remote_id="id0")

    result = deliver_refused(_request(), REAUTH, progress=progress, now=NOW)

    assert (result.outcome, result.reason) == ("failed", "reauthorization_required")
    assert result.error == "part 2 of 3: channel sky needs new credentials"
    assert [p.remote_id for p in result.parts] == ["id0"]
    assert (result.parts_total, result.remote_id) == (3, None)
    assert progress.refs.keys() == {0}  # nothing more stored


def test_a_channel_refused_before_anything_went_out_is_the_refusal_as_it_is() -> None:
    assert deliver_refused(_request(), REAUTH, progress=_Progress(), now=NOW) == REAUTH


def test_a_channel_refused_with_only_the_comment_left_keeps_the_post_published() -> None:
    request = _request().model_copy(update={"first_comment": FirstComment(content="link")})
    progress = _Progress()
    progress.refs.update({i: PartRef(remote_id=f"id{i}") for i in range(3)})

    result = deliver_refused(request, REAUTH, progress=progress, now=NOW)

    assert (result.outcome, result.remote_id) == ("published", "id0")
    assert result.comment is not None and result.comment.status == "failed"
    assert result.comment.error == "channel sky needs new credentials"
