"""Threads and first comments (decision "Threads: content is part 1, parts are the replies").

A post's ``content`` and ``media_ids`` are the thread's first part; its optional ``parts`` are
the replies after it, in order, each ``{content, media_ids}``: a thread has 2 to
:data:`MAX_THREAD_PARTS` parts in all (``parts`` holds 1 to 24). A channel's variant may give
its own ``parts`` (``models/variants.py``), which replace the post's for that channel only.

A ``first_comment`` (``{content, delay_seconds}``) is a reply by the same account to part 1,
published ``delay_seconds`` (0 to :data:`MAX_FIRST_COMMENT_DELAY_SECONDS`) after the post.

Every part's text and media are checked against each channel's length and media rules on the
channel's effective thread (``logic/thread_rules.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt
from pydantic_core import PydanticCustomError

from scheduled_posts.models.post_fields import Content, MediaIds

#: Most parts of a thread, ``content`` included (Buffer's and Typefully's thread cap is 25).
MAX_THREAD_PARTS = 25
#: Longest wait of a first comment after its post: one hour, within the delivery's retry
#: horizon (``logic/delivery.py``'s idempotency records outlive it).
MAX_FIRST_COMMENT_DELAY_SECONDS = 3600


class Part(BaseModel):
    """One reply of a thread (request, storage and answer): its text and media."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: Content
    media_ids: MediaIds = Field(default_factory=list)

    def to_item(self) -> dict[str, Any]:
        """The stored map (``media_ids`` left out when empty)."""
        item: dict[str, Any] = {"content": self.content}
        if self.media_ids:
            item["media_ids"] = list(self.media_ids)
        return item

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Part:
        return cls(content=str(item["content"]), media_ids=list(item.get("media_ids") or []))


def _within_thread_cap(parts: list[Part]) -> list[Part]:
    """``parts`` when the thread (``content`` and ``parts``) has at most
    :data:`MAX_THREAD_PARTS` parts; the error counts the thread's parts, not the replies.

    Raises
    ------
    pydantic_core.PydanticCustomError
        ``too_long`` (a 422 naming ``parts``).
    """
    if len(parts) > MAX_THREAD_PARTS - 1:
        raise PydanticCustomError(
            "too_long",
            "a thread has at most {max_parts} parts in all (content and up to {max_replies} "
            "in parts), not {given}",
            {
                "max_parts": MAX_THREAD_PARTS,
                "max_replies": MAX_THREAD_PARTS - 1,
                "given": len(parts) + 1,
            },
        )
    return parts


#: The replies' cap in the JSON schema (the check itself is :func:`_within_thread_cap`).
_MAX_REPLIES_SCHEMA = {"maxItems": MAX_THREAD_PARTS - 1}

Parts = Annotated[
    list[Part],
    Field(
        min_length=1,
        json_schema_extra=_MAX_REPLIES_SCHEMA,
        description=f"A thread: the replies after content (part 1), in order; 2 to "
        f"{MAX_THREAD_PARTS} parts in all. Each part is checked against every channel's length "
        "and media rules",
    ),
    AfterValidator(_within_thread_cap),
]

#: A ``PATCH``'s ``parts``: ``[]`` makes the thread a single post again.
PatchParts = Annotated[
    list[Part],
    Field(json_schema_extra=_MAX_REPLIES_SCHEMA, description="A thread's replies after content"),
    AfterValidator(_within_thread_cap),
]


class FirstComment(BaseModel):
    """A reply by the same account to part 1, ``delay_seconds`` after the post."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: Content
    delay_seconds: StrictInt = Field(
        0,
        ge=0,
        le=MAX_FIRST_COMMENT_DELAY_SECONDS,
        description=f"Seconds after the post (0 to {MAX_FIRST_COMMENT_DELAY_SECONDS})",
    )

    def to_item(self) -> dict[str, Any]:
        return {"content": self.content, "delay_seconds": self.delay_seconds}

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> FirstComment:
        return cls(content=str(item["content"]), delay_seconds=int(item.get("delay_seconds", 0)))


#: The part index of a first comment's identity (its Bluesky key, its Idempotency-Key, its
#: stored ref): past every part's, so it never meets one.
COMMENT_INDEX = MAX_THREAD_PARTS


class CommentOutcome(BaseModel):
    """A first comment's own state on its delivery: ``published`` (the network's id and page)
    or ``failed`` (its error; the post stays published)."""

    model_config = ConfigDict(frozen=True)

    status: Literal["published", "failed"]
    remote_id: str | None = None
    remote_url: str | None = None
    error: str | None = None

    def to_item(self) -> dict[str, Any]:
        return {k: v for k, v in self.model_dump().items() if v is not None}

    @classmethod
    def from_item(cls, item: Mapping[str, Any] | None) -> CommentOutcome | None:
        return cls.model_validate(dict(item)) if item else None


class PublishedPart(BaseModel):
    """Where one published part landed: its index (0: part 1), the network's id and page."""

    model_config = ConfigDict(frozen=True)

    index: int
    remote_id: str | None = None
    remote_url: str | None = None

    def to_item(self) -> dict[str, Any]:
        item: dict[str, Any] = {"index": self.index}
        item.update(
            {k: v for k, v in (("remote_id", self.remote_id), ("remote_url", self.remote_url)) if v}
        )
        return item

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> PublishedPart:
        return cls(
            index=int(item["index"]),
            remote_id=item.get("remote_id"),
            remote_url=item.get("remote_url"),
        )
