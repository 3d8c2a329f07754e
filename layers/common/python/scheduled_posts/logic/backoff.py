"""Moved to :mod:`scheduled_posts.lifecycle.backoff` (the pure core owns its retry waits); this
name stays for ``logic/delivery.py`` until its import moves."""

from scheduled_posts.lifecycle.backoff import Uniform, backoff_bound, full_jitter

__all__ = ["Uniform", "backoff_bound", "full_jitter"]
