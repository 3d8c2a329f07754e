"""The last receive before the dead-letter queue (``docs/dispatch.md``, step 6).

A record about to fail on its ``MAX_RECEIVE_COUNT - 1``-th receive turns its post ``failed``
(best effort, :func:`scheduled_posts.lifecycle.transitions.fail_dead_lettered`) so nothing stays
non-terminal behind a poison message. DLQ redrive (``logic/redrive.py``) reopens exactly the
posts failed this way: it matches :attr:`StatusReason.DEAD_LETTERED`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from scheduled_posts.clock import Clock, epoch_seconds
from scheduled_posts.data.post_store import PostStore
from scheduled_posts.lifecycle import outcomes
from scheduled_posts.lifecycle.metric_names import Metric
from scheduled_posts.lifecycle.reasons import dead_lettered_error
from scheduled_posts.lifecycle.states import TERMINAL_POST_STATUSES, PostStatus
from scheduled_posts.models.messages import DispatchMessage
from scheduled_posts.models.post import Post
from scheduled_posts.observability import logger, metrics


def fail_dead_lettered(
    message: DispatchMessage,
    exc: Exception,
    *,
    store: PostStore,
    clock: Clock,
    retention_days: int,
    release_pending: Callable[[Post], None],
) -> bool:
    """Turn the message's post ``failed`` unless it moved on (terminal, another version, another
    lease holder). Never raises: a failure here is logged, SQS dead-letters the message anyway.
    Returns True when the post was failed."""
    try:
        post = store.get_post(message.schedule_id)
        if post is None or post.status in TERMINAL_POST_STATUSES:
            return False
        if post.version != message.version:
            return False
        if post.status == PostStatus.PUBLISHING and post.lease_token != message.lease_token:
            return False  # another holder is working on it; this message is superseded
        now = clock.now()
        error = dead_lettered_error(exc)
        failed = store.fail_post(
            post,
            last_error=error,
            deliveries=outcomes.dead_lettered(outcomes.current_deliveries(post), error),
            now=now,
            expires_at=epoch_seconds(now + timedelta(days=retention_days)),
        )
        if failed:
            if post.status == PostStatus.SCHEDULED:
                release_pending(post)
            metrics.add_metric(name=Metric.FAILED, unit=Metric.FAILED.unit, value=1)
        return failed
    except Exception:
        logger.exception(
            "dead-letter failure marking failed", extra={"schedule_id": message.schedule_id}
        )
        return False
