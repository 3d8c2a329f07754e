"""DLQ redrive: move dead-lettered dispatch messages back, reopening only what may still publish.

Per message of the dispatch DLQ (``data/dlq.py``; a message is handled then deleted, so a
crash half-way leaves the rest in the DLQ for the next run):

==================================  =========================================================
the post                            what redrive does
==================================  =========================================================
unparseable body                    left in the DLQ (shown; inspect it by hand)
missing / past retention            dropped (deleted)
edited since (other version)        dropped: the current version has its own due entry
``scheduled``                       moved back (a fresh message, reason ``redrive``)
``publishing``, message holds the   moved back: the lease holder's message continues it
current lease token
``publishing``, other token         dropped: another holder is working on it (the watchdog
                                    covers it if that holder dies)
``failed`` by dead-lettering        reopened (``logic/recovery.redeliver``) for the channels
(:attr:`StatusReason.DEAD_LETTERED`),     that failed that way, attempt counts kept, and dispatched
within ``MISFIRE_GRACE_SECONDS``    again; the message itself is deleted
any other terminal state            dropped: ``published``, ``partially_published``,
                                    ``cancelled``, ``missed``, a ``failed`` with another
                                    reason, or past the grace; ``POST .../retry`` is the path
                                    for a creator who wants a failed post tried again
==================================  =========================================================

Each message yields one :class:`RedriveLine` saying what was done and why it was in the DLQ
(its reason, attempt, receive count and the post's own ``status_reason``/last errors).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pydantic import ValidationError

from scheduled_posts.data.dlq import DeadLetter, DeadLetterQueue
from scheduled_posts.lifecycle.reasons import StatusReason
from scheduled_posts.logic.recovery import (
    DEAD_LETTERED_ERROR_PREFIX,
    RecoveryDeps,
    redeliver,
    within_grace,
)
from scheduled_posts.models.messages import DispatchMessage, DispatchReason
from scheduled_posts.models.post import DeliveryStatus, Post, PostStatus
from scheduled_posts.observability import logger


@dataclass(frozen=True)
class RedriveLine:
    """What redrive did with one DLQ message.

    ``action`` is ``moved``, ``reopened``, ``dropped`` or ``left`` (prefixed ``would-`` in a
    dry run); ``why_there`` explains why the message was dead-lettered, ``detail`` the decision.
    """

    message_id: str
    schedule_id: str | None
    action: str
    why_there: str
    detail: str

    def render(self) -> str:
        """One human line for the CLI."""
        return (
            f"{self.action:<10} {self.schedule_id or '-'}  message {self.message_id}\n"
            f"           in DLQ because: {self.why_there}\n"
            f"           decision: {self.detail}"
        )


def _why_there(letter: DeadLetter, message: DispatchMessage, post: Post | None) -> str:
    parts = [
        f"{message.reason.value} message (attempt {message.attempt}) that kept failing "
        f"(ApproximateReceiveCount {letter.receive_count})"
    ]
    if post is not None:
        parts.append(f"post is {post.status.value}")
        if post.status_reason:
            parts.append(f"status_reason: {post.status_reason}")
        errors = sorted(
            {f"{cid}: {d.last_error}" for cid, d in post.deliveries.items() if d.last_error}
        )
        if errors:
            parts.append("last errors: " + "; ".join(errors)[:300])
    return "; ".join(parts)


class Redriver:
    """Moves DLQ messages back (module docstring).

    Parameters
    ----------
    deps:
        The recovery collaborators (post store, idempotency records, dispatch queue, clock).
    dlq:
        The dead-letter queue (default: ``Settings.DISPATCH_DLQ_URL``).
    dry_run:
        Decide and report only: nothing is sent, reopened or deleted.
    """

    def __init__(
        self, deps: RecoveryDeps, *, dlq: DeadLetterQueue | None = None, dry_run: bool = False
    ) -> None:
        self.deps = deps
        self.dlq = dlq or DeadLetterQueue(deps.settings.DISPATCH_DLQ_URL)
        self.dry_run = dry_run

    def run(
        self, *, max_messages: int = 1000, report: Callable[[RedriveLine], None] | None = None
    ) -> list[RedriveLine]:
        """Handle up to ``max_messages`` DLQ messages; calls ``report(line)`` for each.

        Messages left in the DLQ (unparseable, or every one in a dry run) stay hidden while the
        run goes on, so one run sees each message at most once, and are made visible again at
        its end (so a real run can follow a dry run at once).
        """
        lines: list[RedriveLine] = []
        kept: list[DeadLetter] = []
        try:
            while len(lines) < max_messages:
                letters = self.dlq.receive()
                if not letters:
                    break
                for index, letter in enumerate(letters):
                    if len(lines) >= max_messages:
                        kept += letters[index:]
                        break
                    line = self.handle(letter)
                    lines.append(line)
                    if line.action.startswith("would-") or line.action == "left":
                        kept.append(letter)
                    if report is not None:
                        report(line)
        finally:
            for letter in kept:
                self.dlq.release(letter)
        return lines

    def handle(self, letter: DeadLetter) -> RedriveLine:
        """Decide for one message, act (unless a dry run), delete it unless left."""
        try:
            message = DispatchMessage.model_validate_json(letter.body)
        except ValidationError:
            return RedriveLine(
                letter.message_id,
                None,
                "left",
                f"not a dispatch message (ApproximateReceiveCount {letter.receive_count})",
                "left in the DLQ; inspect it by hand",
            )
        assert self.deps.dispatch is not None and self.deps.queue is not None
        post = self.deps.dispatch.get_post(message.schedule_id)
        why = _why_there(letter, message, post)
        action, detail = self._decide(message, post)
        if not self.dry_run:
            if action == "moved":
                back = message.model_copy(update={"reason": DispatchReason.REDRIVE})
                self.deps.queue.send(back, 0)
            elif action == "reopened":
                assert post is not None
                if not self._reopen(post):
                    action, detail = "dropped", "the post changed while redriving; left as it is"
            if action != "left":
                self.dlq.delete(letter)
        line = RedriveLine(
            letter.message_id,
            message.schedule_id,
            f"would-{action}" if self.dry_run else action,
            why,
            detail,
        )
        logger.info("redrive", extra={"schedule_id": message.schedule_id, "action": line.action})
        return line

    def _decide(self, message: DispatchMessage, post: Post | None) -> tuple[str, str]:
        if post is None or post.is_expired(self.deps.clock.now()):
            return "dropped", "the post no longer exists"
        if post.version != message.version:
            return "dropped", f"stale: the post was edited (now version {post.version})"
        if post.status == PostStatus.SCHEDULED:
            return "moved", "the post is still scheduled: sent back to the dispatch queue"
        if post.status == PostStatus.PUBLISHING:
            if message.lease_token is not None and message.lease_token == post.lease_token:
                return "moved", "carries the current lease: sent back to continue the post"
            return "dropped", "another lease holder is working on the post"
        if post.status == PostStatus.FAILED and post.status_reason == StatusReason.DEAD_LETTERED:
            if not within_grace(post, self.deps):
                return "dropped", "failed by dead-lettering but past MISFIRE_GRACE_SECONDS"
            if not _dead_lettered_channels(post):
                return "dropped", "no channel failed by dead-lettering"
            return "reopened", "failed only because its message was dead-lettered: reopened"
        return "dropped", f"the post is {post.status.value} (terminal); POST .../retry if owed"

    def _reopen(self, post: Post) -> bool:
        reopened = redeliver(
            post,
            _dead_lettered_channels(post),
            deps=self.deps,
            reset_attempts=False,
            status_reason=StatusReason.REOPENED_BY_REDRIVE,
            reason=DispatchReason.REDRIVE,
            expected_reason=StatusReason.DEAD_LETTERED,
        )
        return reopened is not None


def _dead_lettered_channels(post: Post) -> list[str]:
    return [
        cid
        for cid, d in sorted(post.deliveries.items())
        if d.status == DeliveryStatus.FAILED
        and (d.last_error or "").startswith(DEAD_LETTERED_ERROR_PREFIX)
    ]
