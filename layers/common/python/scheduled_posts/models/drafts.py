"""The edit body that can schedule a draft (decision "Drafts").

:class:`PostEditBody` is ``PATCH /v1/scheduled-posts/{schedule_id}``'s body: the fields of
:class:`~scheduled_posts.models.api.PostPatch`, with a ``publish_at`` that may also be ``"now"``
or ``"next_free_slot"`` (``models/post_fields.CreatePublishAt``), the words a create takes.
``logic/drafts.py`` turns a word into an instant (or a queue slot) before any other post logic
sees the patch, which therefore always holds an instant or nothing.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from scheduled_posts.models.api import NotNull, PostPatch
from scheduled_posts.models.post_fields import CreatePublishAt


class PostEditBody(PostPatch):
    """``PATCH /v1/scheduled-posts/{schedule_id}`` body (at least one field, none ``null``)."""

    # A wider publish_at than PostPatch's: the words are resolved by logic/drafts.py, which
    # hands the rest of the post logic a PostPatch with an instant (:meth:`with_instant`).
    publish_at: Annotated[CreatePublishAt | None, NotNull] = None  # type: ignore[assignment]

    def word(self) -> str | None:
        """``"now"`` or ``"next_free_slot"`` when ``publish_at`` is one of them, else None."""
        return self.publish_at if isinstance(self.publish_at, str) else None

    def with_instant(self, publish_at: datetime | None) -> PostPatch:
        """This patch with ``publish_at`` replaced by an instant (None: left out)."""
        values = {name: getattr(self, name) for name in self.model_fields_set}
        values.pop("publish_at", None)
        if publish_at is not None:
            values["publish_at"] = publish_at
        return PostPatch.model_construct(_fields_set=set(values), **values)
