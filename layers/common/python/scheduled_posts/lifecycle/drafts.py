"""The arrows of a draft (decision "Drafts"): ``edit_draft`` (``draft -> draft``) and
``schedule_draft`` (``draft -> scheduled``), each a :class:`~.arrows.PostChange` guarded by
``status = draft AND version = v``. ``create_draft`` and ``delete_draft`` write or delete the
whole item (``data/drafts.py``); their source is checked here too. Nothing here does I/O.
"""

from __future__ import annotations

from scheduled_posts.lifecycle.arrows import PostChange, check, replace_post
from scheduled_posts.lifecycle.states import PostStatus
from scheduled_posts.models.post import Post


def edit_draft(old: Post, new: Post) -> PostChange:
    """A draft edited (``new`` is still a draft, version + 1).

    Raises
    ------
    TransitionRefused
        ``old`` is not a draft, or ``new`` is not one.
    """
    return replace_post("edit_draft", old, new, expect=PostStatus.DRAFT)


def schedule_draft(old: Post, new: Post) -> PostChange:
    """A draft given its ``publish_at`` (``new`` is ``scheduled``, version + 1).

    Raises
    ------
    TransitionRefused
        ``old`` is not a draft, or ``new`` is not ``scheduled``.
    """
    return replace_post("schedule_draft", old, new, expect=PostStatus.DRAFT)


def check_delete_draft(post: Post) -> None:
    """Raise :class:`~.arrows.TransitionRefused` unless ``post`` is a draft (only a draft is
    deleted; a scheduled post is cancelled)."""
    check("delete_draft", post.status)
