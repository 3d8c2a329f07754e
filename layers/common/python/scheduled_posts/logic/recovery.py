"""Recovery actions: deliver a finished post's owed channels again (decision "Retry resets the
failed channels' attempts budget").

* ``POST /v1/scheduled-posts/{id}/retry`` (:func:`retry_post`): a ``failed`` or
  ``partially_published`` post, still within ``MISFIRE_GRACE_SECONDS`` of its ``publish_at``,
  goes back to ``publishing`` for the channels whose delivery ``failed`` (never a ``published``
  or ``skipped`` one), with those channels' attempts budget reset to ``MAX_ATTEMPTS``.
* ``make redrive`` (``logic/redrive.py``) reopens a post the worker turned ``failed`` only
  because its message was being dead-lettered (:attr:`StatusReason.DEAD_LETTERED`), for the channels
  that failed that way, keeping their attempt counts.

Both use :func:`redeliver`: one conditional update ``status = :current AND version = :v`` to
``publishing`` with a new lease (so two recoveries, or a recovery racing anything else, never
both win; the loser gets 409), the stored final failures of those channels removed from the
idempotency table, then one dispatch message carrying the new lease token. The deliveries keep
their Idempotency-Key ``<schedule_id>:<channel_id>``; a channel the destination already
accepted is never re-sent (its stored success replays as ``published``). If the message is lost
the lease expires and the watchdog re-dispatches the post.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from scheduled_posts.clock import Clock, SystemClock
from scheduled_posts.data.post_store import PostStore
from scheduled_posts.data.queue import DispatchQueue
from scheduled_posts.data.reconcile import ReconcileStore
from scheduled_posts.errors import PostNotFoundError, QueueSendError, StateConflictError
from scheduled_posts.keys import new_lease_token
from scheduled_posts.lifecycle import transitions
from scheduled_posts.lifecycle.metric_names import Metric
from scheduled_posts.lifecycle.reasons import DeliveryError, StatusReason
from scheduled_posts.models.messages import DispatchMessage, DispatchReason
from scheduled_posts.models.post import Delivery, DeliveryStatus, Post, PostStatus
from scheduled_posts.observability import logger, metrics, tracer
from scheduled_posts.settings import Settings

#: ``status_reason`` the worker writes when it fails a post whose message is about to be
#: dead-lettered (``logic/dead_letter.py``): the lifecycle's enum member, not a copy.
DEAD_LETTERED_REASON = StatusReason.DEAD_LETTERED
#: Prefix of ``last_error`` of the deliveries failed that way.
DEAD_LETTERED_ERROR_PREFIX = DeliveryError.DEAD_LETTERED_PREFIX.value
RETRYABLE_STATUSES = frozenset({PostStatus.FAILED, PostStatus.PARTIALLY_PUBLISHED})


@dataclass
class RecoveryDeps:
    """Collaborators of the recovery actions (production defaults from ``settings``)."""

    settings: Settings
    clock: Clock = field(default_factory=SystemClock)
    dispatch: PostStore | None = None
    store: ReconcileStore | None = None
    queue: DispatchQueue | None = None

    def __post_init__(self) -> None:
        s = self.settings
        self.dispatch = self.dispatch or PostStore(s.POSTS_TABLE_NAME)
        self.store = self.store or ReconcileStore(s.POSTS_TABLE_NAME, s.IDEMPOTENCY_TABLE_NAME)
        self.queue = self.queue or DispatchQueue.from_settings(s)


def within_grace(post: Post, deps: RecoveryDeps) -> bool:
    """True while ``now <= publish_at + MISFIRE_GRACE_SECONDS``."""
    grace = timedelta(seconds=deps.settings.MISFIRE_GRACE_SECONDS)
    return deps.clock.now() <= post.publish_at + grace


def redeliver(
    post: Post,
    channel_ids: list[str],
    *,
    deps: RecoveryDeps,
    reset_attempts: bool,
    status_reason: StatusReason,
    reason: DispatchReason,
    expected_reason: StatusReason | None = None,
) -> Post | None:
    """Reopen the terminal ``post`` for ``channel_ids`` and dispatch it (module docstring).

    Returns the reopened post (``publishing``), or None when the conditional update lost
    (the post changed meanwhile).
    """
    assert deps.store is not None and deps.queue is not None and deps.dispatch is not None
    now = deps.clock.now()
    reopened = deps.dispatch.apply(
        transitions.reopen(
            post,
            deliveries=_reopened_deliveries(post, channel_ids, reset_attempts=reset_attempts),
            lease_token=new_lease_token(),
            lease_expires_at=now + timedelta(seconds=deps.settings.LEASE_SECONDS),
            reason=status_reason,
            now=now,
            expected_reason=expected_reason,
        )
    )
    if reopened is None:
        return None
    for channel_id in channel_ids:
        deps.store.forget_failed_delivery(post.schedule_id, channel_id)
    _dispatch_reopened(reopened, reason, deps=deps)
    logger.info(
        "post reopened",
        extra={"schedule_id": post.schedule_id, "channels": channel_ids, "why": reason.value},
    )
    return reopened


def _reopened_deliveries(
    post: Post, channel_ids: list[str], *, reset_attempts: bool
) -> dict[str, Delivery]:
    """The ``channel_ids`` deliveries of ``post`` made pending again, with no wait left."""
    deliveries: dict[str, Delivery] = {}
    for channel_id in channel_ids:
        current = post.deliveries.get(channel_id) or Delivery(channel_id=channel_id)
        deliveries[channel_id] = current.model_copy(
            update={
                "status": DeliveryStatus.PENDING,
                # Numbers go on; the budget restarts (decision "A retried delivery's attempts
                # go on numbering").
                "attempts_before_retry": current.attempts
                if reset_attempts
                else current.attempts_before_retry,
                "destination_waits": 0 if reset_attempts else current.destination_waits,
                "next_attempt_at": None,
                "rate_slot": None,
            }
        )
    return deliveries


def _dispatch_reopened(reopened: Post, reason: DispatchReason, *, deps: RecoveryDeps) -> None:
    """Send the reopened post's dispatch message now; a failed send is logged only (the new
    lease expires and the watchdog re-dispatches). Counts ``Redelivered``."""
    assert deps.queue is not None
    message = DispatchMessage(
        schedule_id=reopened.schedule_id,
        version=reopened.version,
        publish_at=reopened.publish_at,
        lease_token=reopened.lease_token,
        reason=reason,
    )
    try:
        deps.queue.send(message, 0)
    except QueueSendError:  # the new lease expires and the watchdog re-dispatches
        logger.exception("recovery send failed", extra={"schedule_id": reopened.schedule_id})
    metrics.add_metric(name=Metric.REDELIVERED, unit=Metric.REDELIVERED.unit, value=1)


@tracer.capture_method
def retry_post(owner: str, schedule_id: str, *, deps: RecoveryDeps) -> Post:
    """``POST /v1/scheduled-posts/{id}/retry``: deliver the owed channels of a ``failed`` or
    ``partially_published`` post again (attempts budget reset, same Idempotency-Keys).

    Returns the post, now ``publishing``.

    Raises
    ------
    PostNotFoundError
        Missing, another user's, or past its retention (404).
    StateConflictError
        Not ``failed``/``partially_published``, past ``MISFIRE_GRACE_SECONDS``, no failed
        channel to retry, or changed meanwhile (a concurrent retry won) (409).
    """
    assert deps.dispatch is not None
    post = deps.dispatch.get_post(schedule_id)
    if post is None or post.owner != owner or post.is_expired(deps.clock.now()):
        raise PostNotFoundError("scheduled post not found")
    if post.status not in RETRYABLE_STATUSES:
        raise StateConflictError(
            f"the post is {post.status.value}; only a failed or partially_published post "
            "can be retried"
        )
    if not within_grace(post, deps):
        raise StateConflictError(
            "the post is past its misfire grace "
            f"(MISFIRE_GRACE_SECONDS={deps.settings.MISFIRE_GRACE_SECONDS} after publish_at)"
        )
    owed = [
        cid
        for cid in post.channel_ids
        if (post.deliveries.get(cid) or Delivery(channel_id=cid)).status == DeliveryStatus.FAILED
    ]
    if not owed:
        raise StateConflictError("no channel of this post failed; nothing to retry")
    reopened = redeliver(
        post,
        owed,
        deps=deps,
        reset_attempts=True,
        status_reason=StatusReason.RETRY_REQUESTED,
        reason=DispatchReason.RECOVERY,
    )
    if reopened is None:
        raise StateConflictError("the post changed meanwhile; read it again")
    return reopened
