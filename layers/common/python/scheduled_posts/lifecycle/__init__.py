"""The post lifecycle, pure (no boto3, no clock, no I/O): where a post changes state.

* :mod:`.states` -- post and delivery states, the terminal sets.
* :mod:`.reasons` -- :class:`~.reasons.StatusReason`, every fixed ``status_reason`` text.
* :mod:`.transitions` -- one function per arrow of the state diagram in ``docs/dispatch.md``,
  each returning a :class:`~.transitions.PostChange` (the attribute changes and the guarding
  condition as plain data) or raising :class:`~.transitions.TransitionRefused`;
  :data:`~.transitions.ARROWS` is the table the diagram is tested against.
* :mod:`.outcomes` -- the pure decisions of one delivery round (published, failed, retry,
  in progress, skipped, the post's completion).
* :mod:`.metric_names` -- every CloudWatch metric name, used by the code and by
  ``infra/monitoring.py``.

The store that applies the changes is ``scheduled_posts.data.post_store.PostStore``.

This ``__init__`` imports nothing on purpose: ``models.post`` imports :mod:`.states`, and the
other modules import ``models.post``.
"""
