"""A thread, one part after the other, exactly once per part (decision "A thread's parts are
stored as they are published"), for every network adapter.

:func:`deliver_thread` walks the parts in order. A part already in the delivery's
:class:`~scheduled_posts.platforms.base.ThreadProgress` is never sent again; any other part is
written by the network's ``write`` (which finds a part an earlier attempt wrote but whose
answer was lost: Bluesky by its record key, Mastodon by its ``Idempotency-Key``), and its
:class:`PartRef` stored before the next part is sent. Part ``i`` replies to part ``i - 1`` (its
parent) in the thread of part 1 (its root).

- A retryable error of a part (5xx, timeout, 429) is raised: the next round continues at that
  part (after part 1, its error word is ``thread_partial``: something was published).
- A part refused for good ends the delivery ``failed``, its error naming the part, with the
  parts published before it listed (``DeliveryResult.parts``): the thread is never silently
  half-posted. A channel refused before any request (it needs new credentials:
  :func:`deliver_refused`) lists the parts an earlier round published in the same way.
- All parts written: ``published`` with part 1's id and page as the delivery's, and every
  part's in ``parts``.
- A first comment not due yet, or a retryable error of the comment, raises
  :class:`CommentRetry`: the next round tries the comment alone; when the delivery's budget
  (attempts, destination waits, misfire window) is spent, the delivery ends ``published`` with
  the comment ``failed`` (``lifecycle/outcomes.py``), never a published thread ``failed``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.models.receipt import Receipt
from scheduled_posts.models.thread import COMMENT_INDEX, CommentOutcome, PublishedPart
from scheduled_posts.platforms.base import (
    DeliveryRequest,
    DeliveryResult,
    PartRef,
    ThreadProgress,
)


class CommentRetry(RetryableDeliveryError):
    """The post (every part) is published; its first comment is to be tried again later.

    ``published`` is the delivery's result without the comment, for the round that gives up on
    the comment. Its error word is ``comment_wait`` or ``comment_retry``, never an HTTP status
    nor a word that means nothing was published (``lifecycle/reach.py``): the post is out."""

    def __init__(
        self,
        message: str,
        *,
        published: DeliveryResult,
        retry_after_seconds: float | None = None,
        rate_limited: bool = False,
    ) -> None:
        super().__init__(
            message, retry_after_seconds=retry_after_seconds, rate_limited=rate_limited
        )
        self.published = published


#: ``write(index, part_request, root, parent)``: the part's result and, when published, its
#: ref (``root``/``parent`` are None for part 1). Raises ``RetryableDeliveryError`` to retry.
PartWriter = Callable[
    [int, DeliveryRequest, PartRef | None, PartRef | None],
    tuple[DeliveryResult, PartRef | None],
]


def _published(refs: list[PartRef]) -> tuple[PublishedPart, ...]:
    return tuple(
        PublishedPart(index=i, remote_id=r.remote_id, remote_url=r.remote_url)
        for i, r in enumerate(refs)
    )


def part_error(index: int, total: int, result: DeliveryResult) -> str:
    """The error of a thread refused at part ``index`` (0-based) of ``total``."""
    error = result.error or f"http_{result.http_status}"
    return f"part {index + 1} of {total}: {error}"


def each_part(request: DeliveryRequest) -> list[DeliveryRequest]:
    """Every part of ``request`` as a single request (part 1 is ``request`` itself)."""
    return [request, *(request.as_part(i) for i in range(1, request.part_count))]


def refused_part(
    request: DeliveryRequest, check: Callable[[DeliveryRequest], DeliveryResult | None]
) -> DeliveryResult | None:
    """The first part ``check`` refuses (a length or media rule), its error naming the part
    when the post is a thread; None when every part passes. Nothing is sent before it."""
    for index, part in enumerate(each_part(request)):
        refused = check(part)
        if refused is not None and request.parts:
            total = request.part_count
            return refused.model_copy(
                update={"error": part_error(index, total, refused), "parts_total": total}
            )
        if refused is not None:
            return refused
    return None


def deliver_thread(
    request: DeliveryRequest,
    write: PartWriter,
    *,
    progress: ThreadProgress | None,
    now: datetime,
) -> DeliveryResult:
    """Publish ``request`` (part 1, then each of ``request.parts``, then its first comment)
    with ``write`` (outcomes: module docstring). A single post without a comment is
    ``write(0, request, None, None)``'s result.

    Raises
    ------
    RetryableDeliveryError
        From ``write`` or the progress store (the parts stored so far stay stored);
        :class:`CommentRetry` for a first comment not due yet or not written yet.
    """
    if not request.parts and request.first_comment is None:
        return write(0, request, None, None)[0]
    known = progress.known(request.idempotency_key) if progress is not None else {}
    done, refs = _walk(request, write, known, progress, now=now)
    if done.outcome != "published" or request.first_comment is None:
        return done
    comment = _comment(request, write, done, refs[0], known=known, progress=progress, now=now)
    return done.model_copy(update={"comment": comment})


def deliver_refused(
    request: DeliveryRequest,
    refused: DeliveryResult,
    *,
    progress: ThreadProgress | None,
    now: datetime,
) -> DeliveryResult:
    """``refused`` (the final result of a channel refused before any request: one that needs
    new credentials) as the delivery's, nothing sent. When an earlier round published parts of
    the thread they are still listed (``parts``), and a published post's pending first comment
    ends ``failed`` with that error while the post stays ``published`` (fault seed 27: a thread
    refused at part 2 by a revoked channel listed no part while part 1 was on Bluesky).

    Raises
    ------
    RetryableDeliveryError
        From the progress store.
    """
    if progress is None or (not request.parts and request.first_comment is None):
        return refused
    if not progress.known(request.idempotency_key):
        return refused  # nothing is out: the refusal as it is

    def write(
        index: int, part: DeliveryRequest, root: PartRef | None, parent: PartRef | None
    ) -> tuple[DeliveryResult, PartRef | None]:
        return refused, None

    return deliver_thread(request, write, progress=progress, now=now)


def _walk(
    request: DeliveryRequest,
    write: PartWriter,
    known: dict[int, PartRef],
    progress: ThreadProgress | None,
    *,
    now: datetime,
) -> tuple[DeliveryResult, list[PartRef]]:
    total = request.part_count
    shown = total if request.parts else 0  # a single post (with a comment) shows no parts
    refs: list[PartRef] = []
    first: DeliveryResult | None = None
    for index in range(total):
        ref = known.get(index)
        if ref is None:
            part = request if index == 0 else request.as_part(index)
            try:
                result, ref = write(
                    index, part, refs[0] if refs else None, refs[-1] if refs else None
                )
                if result.outcome == "published" and ref is None:
                    raise _unusable(f"part {index + 1} of {total}")
            except RetryableDeliveryError as exc:
                if not refs:
                    raise
                raise _after_published(exc, index, total) from exc
            if result.outcome != "published" or ref is None:
                failed: dict[str, object] = {"outcome": "failed", "remote_id": None}
                failed["remote_url"] = None
                if shown:
                    failed |= {"error": part_error(index, total, result)}
                    failed |= {"parts": _published(refs), "parts_total": total}
                return result.model_copy(update=failed), refs
            ref = ref.model_copy(update={"published_at": now})
            if progress is not None:
                ref = progress.remember(request.idempotency_key, index, ref, now=now)
            first = result if index == 0 else first
        refs.append(ref)
    root = refs[0]
    done = first or DeliveryResult(outcome="published", http_status=200, receipt=_receipt(root))
    update: dict[str, object] = {"remote_id": root.remote_id, "remote_url": root.remote_url}
    if all(index in known for index in range(total)):  # out in an earlier round
        update["published_at"] = max((r.published_at for r in refs if r.published_at), default=None)
    if shown:
        update |= {"parts": _published(refs), "parts_total": total}
    return done.model_copy(update=update), refs


def _receipt(root: PartRef) -> Receipt | None:
    """Part 1's receipt when it went out in an earlier round: the one its stored ref keeps, or
    (a ref stored before receipts were kept) its record CID alone. The delivery's receipt must
    carry it: the verifier compares the CID (a replaced record is "changed")."""
    if root.receipt is not None:
        return root.receipt
    return Receipt(cid=root.cid) if root.cid else None


def _unusable(what: str) -> RetryableDeliveryError:
    """``what`` (a part, the comment) published, its answer giving no ref to reply to or
    store (an id the adapter could not keep): the next round finds it again (Bluesky by its
    record key, Mastodon by its ``Idempotency-Key``) rather than failing what is on the
    network."""
    return RetryableDeliveryError(f"unusable_answer: {what} is published, its answer gave no id")


def _after_published(exc: RetryableDeliveryError, index: int, total: int) -> RetryableDeliveryError:
    """A retry of part ``index`` once earlier parts are published: its error word says so
    (``thread_partial``), never one of the words (or HTTP statuses) that mean nothing was
    published (``lifecycle/reach.py``), so the post is not editable while it waits."""
    return RetryableDeliveryError(
        f"thread_partial: part {index + 1} of {total} not yet published: {exc}",
        retry_after_seconds=exc.retry_after_seconds,
        rate_limited=exc.rate_limited,
    )


def _comment(
    request: DeliveryRequest,
    write: PartWriter,
    done: DeliveryResult,
    root: PartRef,
    *,
    known: dict[int, PartRef],
    progress: ThreadProgress | None,
    now: datetime,
) -> CommentOutcome:
    """The first comment, a reply to part 1 (root and parent), once it is due
    (``publish_at + delay_seconds``): its own outcome, never the post's (a refused comment
    leaves the post published; ``done`` is the post's result). Raises :class:`CommentRetry`
    while it is not due (``comment_wait``, a destination wait: no attempt used) and on a
    retryable error of its write (``comment_retry``, one attempt)."""
    assert request.first_comment is not None
    ref = known.get(COMMENT_INDEX)
    if ref is None:
        due = request.publish_at + timedelta(seconds=request.first_comment.delay_seconds)
        if now < due:
            raise CommentRetry(
                "comment_wait: the post is published; its first comment is due at "
                f"{due.isoformat()}",
                published=done,
                rate_limited=True,
                retry_after_seconds=(due - now).total_seconds(),
            )
        try:
            result, ref = write(COMMENT_INDEX, request.as_comment(), root, root)
            if result.outcome == "published" and ref is None:
                raise _unusable("the first comment")
        except RetryableDeliveryError as exc:
            raise CommentRetry(
                f"comment_retry: the post is published; its first comment was not: {exc}",
                published=done,
                retry_after_seconds=exc.retry_after_seconds,
                rate_limited=exc.rate_limited,
            ) from exc
        if result.outcome != "published" or ref is None:
            return CommentOutcome(
                status="failed", error=result.error or f"http_{result.http_status}"
            )
        if progress is not None:
            ref = progress.remember(request.idempotency_key, COMMENT_INDEX, ref, now=now)
    return CommentOutcome(status="published", remote_id=ref.remote_id, remote_url=ref.remote_url)
