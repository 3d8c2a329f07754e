"""A post's media at publish time: its ``media_ids`` resolved to the owner's ready uploads, in
order, checked again before any request (decision "Media are checked again before
publishing").

The API refuses a post whose media are not the caller's ready uploads, but an upload can change
between the post's create and its publish time (deleted in a race with the create, or a post
stored before uploads existed). So the worker resolves the ids once per attempt:

* every id a ``ready`` upload of the post's owner: the request carries them
  (:class:`~scheduled_posts.platforms.base.PublishedMedia`, probed facts and alt text);
* a platform that cannot publish media (``PlatformSpec.publishes_media`` false): the delivery
  fails ``media_unsupported``, never text alone;
* a webhook post none of whose ids is an upload (stored before uploads existed, when
  ``media_ids`` were free strings): sent as before, with ``media_ids`` only;
* otherwise (an id missing, pending or rejected): the delivery fails ``media_missing`` naming
  the id, and the network is not called.

A read that fails (DynamoDB throttled) raises :class:`RetryableDeliveryError`: retried like a
5xx, nothing sent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from botocore.exceptions import BotoCoreError, ClientError

from scheduled_posts.errors import RetryableDeliveryError
from scheduled_posts.lifecycle.reasons import DeliveryError
from scheduled_posts.models.post_fields import ID_PATTERN
from scheduled_posts.models.thread import Part
from scheduled_posts.models.variants import Effective
from scheduled_posts.platforms.base import PublishedMedia, ThreadPart


class MediaLookup(Protocol):
    """Reads uploads by id (``data/media.py`` ``MediaRepository`` implements it): ``media_id ->
    item`` for those of ``media_ids`` that are ``owner``'s, any status (another owner's ids are
    absent)."""

    def get_many(self, owner: str, media_ids: Sequence[str]) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class PostMedia:
    """What a delivery carries: ``media`` in the post's order, or ``refusal`` (the
    ``last_error`` of a delivery that must fail without a request)."""

    media: tuple[PublishedMedia, ...] = ()
    refusal: str | None = None


def resolve(
    owner: str, media_ids: Sequence[str], platform: str, lookup: Callable[[], MediaLookup]
) -> PostMedia:
    """The media of a post of ``owner`` with ``media_ids`` for a ``platform`` channel (see the
    module docstring for the cases); ``lookup()`` gives the reader, only when there are ids.

    Raises
    ------
    RetryableDeliveryError
        When the uploads cannot be read now.
    """
    if not media_ids:
        return PostMedia()
    # the registry loads every platform's spec: only a post with media needs it
    from scheduled_posts.platforms.registry import spec_of

    spec = spec_of(platform)
    if not spec.publishes_media:
        return PostMedia(refusal=DeliveryError.MEDIA_UNSUPPORTED.value)
    try:
        # only ids shaped like the service's own are looked up (a free string from before
        # uploads cannot be one, and may be no valid key)
        shaped = [m for m in media_ids if re.fullmatch(ID_PATTERN, m)]
        found: Mapping[str, Any] = lookup().get_many(owner, shaped) if shaped else {}
    except (BotoCoreError, ClientError) as exc:
        raise RetryableDeliveryError(f"media could not be read: {exc}") from exc
    if not found and platform == "webhook":
        return PostMedia()  # a webhook post from before uploads: media_ids only, as then
    for media_id in media_ids:
        item = found.get(media_id)
        status = getattr(getattr(item, "status", None), "value", getattr(item, "status", None))
        if item is None or status != "ready":
            state = "missing" if item is None else str(status)
            return PostMedia(refusal=f"{DeliveryError.MEDIA_MISSING.value} ({media_id}: {state})")
    return PostMedia(media=tuple(found[media_id].published() for media_id in media_ids))


def resolve_parts(
    owner: str, parts: Sequence[Part], platform: str, lookup: Callable[[], MediaLookup]
) -> tuple[tuple[ThreadPart, ...], str | None]:
    """A thread's replies with their media resolved as :func:`resolve` does for part 1:
    ``(parts, None)``, or ``((), refusal)`` naming the first part whose media cannot be
    published (part 2 is ``parts[0]``).

    Raises
    ------
    RetryableDeliveryError
        When the uploads cannot be read now.
    """
    resolved = []
    for number, part in enumerate(parts, start=2):
        media = resolve(owner, list(part.media_ids), platform, lookup)
        if media.refusal is not None:
            return (), f"{media.refusal} (part {number})"
        resolved.append(
            ThreadPart(content=part.content, media_ids=tuple(part.media_ids), media=media.media)
        )
    return tuple(resolved), None


def resolve_effective(
    owner: str, effective: Effective, platform: str, lookup: Callable[[], MediaLookup]
) -> tuple[PostMedia, tuple[ThreadPart, ...]]:
    """Part 1's media (:func:`resolve`) and the thread's replies (:func:`resolve_parts`) of a
    channel's effective post; the refusal of either is the returned ``PostMedia``'s."""
    media = resolve(owner, list(effective.media_ids), platform, lookup)
    parts, refusal = resolve_parts(owner, effective.parts, platform, lookup)
    if media.refusal is None and refusal is not None:
        return PostMedia(refusal=refusal), ()
    return media, parts
