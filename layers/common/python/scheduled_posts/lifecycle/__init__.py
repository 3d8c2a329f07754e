"""The post lifecycle, pure (no boto3, no clock, no I/O): where a post changes state.

* :mod:`.states` -- post and delivery states, the terminal sets.
* :mod:`.reasons` -- :class:`~.reasons.StatusReason`, every fixed ``status_reason`` text.
* :mod:`.arrows` -- :data:`~.arrows.ARROWS`, the table the diagram in ``docs/dispatch.md`` is
  tested against, and the vocabulary of a transition: :class:`~.arrows.PostChange` (the
  attribute changes and the guarding condition as plain data), :class:`~.arrows.Guard`,
  :class:`~.arrows.TransitionRefused`.
* :mod:`.transitions` -- one function per arrow of that diagram, each returning a
  :class:`~.arrows.PostChange` or raising :class:`~.arrows.TransitionRefused`; the arrows of a
  post waiting for its next attempt (cancel, edit) are in :mod:`.waiting`.
* :mod:`.series_transitions` -- the recurring-series arrows and guards (``docs/recurring.md``).
* :mod:`.outcomes` -- the pure decisions of one delivery round (published, failed, retry,
  in progress, skipped, the post's completion); the retry rule itself is :mod:`.retry`, its
  full-jitter waits :mod:`.backoff`.
* :mod:`.metric_names` -- every CloudWatch metric name, used by the code and by
  ``infra/monitoring.py``.

The store that applies the changes is ``scheduled_posts.data.post_store.PostStore``.

This ``__init__`` imports nothing on purpose: ``models.post`` imports :mod:`.states`, and the
other modules import ``models.post``.
"""
