"""The platform-adapter interface every destination implements (``webhook`` first).

The worker calls :meth:`PlatformAdapter.deliver` inside Powertools idempotency keyed on
``(schedule_id, channel_id)``: the adapter returns only final outcomes (a 2xx, or a permanent
failure) and raises :class:`scheduled_posts.errors.RetryableDeliveryError` on anything worth
retrying, so a 503 is never stored and replayed as a result.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

from scheduled_posts.models.link_card import LinkCard
from scheduled_posts.models.post import Channel
from scheduled_posts.models.receipt import Receipt
from scheduled_posts.models.thread import CommentOutcome, FirstComment, PublishedPart
from scheduled_posts.models.variants import NetworkOptions


class PublishedMedia(BaseModel):
    """One ``ready`` upload of a post as the adapters see it (``models/media.py`` holds the
    resource): the probed facts, never the declared ones.

    ``content_type`` is the type read from the bytes (``image/jpeg``, ``image/png``,
    ``image/gif``, ``image/webp``, ``video/mp4``); ``size`` in bytes; ``sha256`` lowercase hex
    of the bytes; ``width``/``height`` in pixels; ``duration_seconds`` for video; ``alt_text``
    the creator's description (``None``: none given); ``object_key`` the S3 key in the media
    bucket (read through :class:`MediaObjects`)."""

    model_config = ConfigDict(frozen=True)

    media_id: str
    content_type: str
    size: int
    sha256: str
    width: int | None = None
    height: int | None = None
    duration_seconds: float | None = None
    alt_text: str | None = None
    object_key: str

    @property
    def is_video(self) -> bool:
        return self.content_type.startswith("video/")


class MediaObjects(Protocol):
    """The bytes of the media bucket, for the adapters (``data/media_objects.py``: on S3).

    ``read`` returns the object's bytes (raises ``RetryableDeliveryError`` when S3 cannot answer
    now); ``download_url`` a pre-signed ``GET`` URL valid ``expires_seconds``."""

    def read(self, media: PublishedMedia) -> bytes: ...

    def download_url(self, media: PublishedMedia, *, expires_seconds: int) -> str: ...


class NetworkMediaIds(Protocol):
    """The network's ids of a delivery's uploaded media (``data/network_media.py``): a network
    without idempotent uploads (Mastodon) stores each id before the post uses it, so a retry
    never uploads the same item twice.

    ``known(idempotency_key)`` gives ``{media_id: network_id}``; ``remember(idempotency_key,
    media_id, network_id, now=)`` stores one unless stored and returns the stored one. Both
    raise ``RetryableDeliveryError`` when the store cannot answer now."""

    def known(self, idempotency_key: str) -> dict[str, str]: ...

    def remember(
        self, idempotency_key: str, media_id: str, network_id: str, *, now: datetime
    ) -> str: ...


class PartRef(BaseModel):
    """A published part as the network named it: ``remote_id`` (Mastodon status id; Bluesky
    ``at://`` URI), ``remote_url``, on Bluesky the record's ``cid`` (a reply's strongRef
    needs it), and the part's whole :class:`Receipt` (Bluesky ``cid`` and ``rev``, Mastodon
    ``created_at``), so a thread finished in a later round still reports part 1's receipt."""

    model_config = ConfigDict(frozen=True)

    remote_id: str
    remote_url: str | None = None
    cid: str | None = None
    #: When this service stored the part (UTC; None in refs stored before it was kept).
    published_at: datetime | None = None
    #: The network's receipt of the part (None in refs stored before it was kept).
    receipt: Receipt | None = None


class ThreadProgress(Protocol):
    """The published parts of a delivery's thread (``data/thread_parts.py``): each part's
    :class:`PartRef` is stored as soon as the network answered it, before the next part is
    sent, so a retry continues at the first unpublished part and never sends an earlier one
    again (the pattern of :class:`NetworkMediaIds`).

    ``known(idempotency_key)`` gives ``{index: PartRef}``; ``remember(idempotency_key, index,
    ref, now=)`` stores one unless stored and returns the stored one. Both raise
    ``RetryableDeliveryError`` when the store cannot answer now."""

    def known(self, idempotency_key: str) -> dict[int, PartRef]: ...

    def remember(
        self, idempotency_key: str, index: int, ref: PartRef, *, now: datetime
    ) -> PartRef: ...


class ThreadPart(BaseModel):
    """One reply of a thread as the adapters see it: its text and ready uploads."""

    model_config = ConfigDict(frozen=True)

    content: str
    media_ids: tuple[str, ...] = ()
    media: tuple[PublishedMedia, ...] = ()


class DeliveryRequest(BaseModel):
    """What to deliver: the channel's effective post (its variant applied: ``content``,
    ``media_ids``, ``language``, ``options``). ``idempotency_key`` is
    ``<schedule_id>:<channel_id>`` on every retry."""

    model_config = ConfigDict(frozen=True)

    schedule_id: str
    channel_id: str
    content: str
    media_ids: tuple[str, ...] = ()
    publish_at: datetime
    attempt: int
    idempotency_key: str
    #: When the first attempt of this delivery started (None on the first attempt): the
    #: network adapters use it to look for a post whose answer was lost.
    first_attempt_at: datetime | None = None
    #: BCP 47 language of the text, when the post gives one (Bluesky ``langs``).
    language: str | None = None
    #: The post's media in order, resolved from ``media_ids`` to ready uploads (empty: none;
    #: a webhook channel of a post made before uploads existed gets only ``media_ids``).
    media: tuple[PublishedMedia, ...] = ()
    #: The channel's network options (Mastodon ``visibility``, ``spoiler_text``, ``sensitive``;
    #: Bluesky ``langs``, ``tags``), from its variant; none set: the network's defaults.
    options: NetworkOptions = NetworkOptions()
    #: The post's frozen link card when the effective post has no media (Bluesky publishes it
    #: as ``app.bsky.embed.external``; other networks ignore it).
    link_card: LinkCard | None = None
    #: A thread's replies after ``content`` (part 1), in order (empty: a single post).
    parts: tuple[ThreadPart, ...] = ()
    #: A reply to part 1 by the same account, ``delay_seconds`` after ``publish_at``.
    first_comment: FirstComment | None = None

    @property
    def part_count(self) -> int:
        """The thread's parts in all (1 for a single post)."""
        return 1 + len(self.parts)

    def as_part(self, index: int) -> DeliveryRequest:
        """Part ``index`` (1..) as a single request: its text and media, no card, no parts."""
        part = self.parts[index - 1]
        return self.model_copy(
            update={
                "content": part.content,
                "media_ids": part.media_ids,
                "media": part.media,
                "link_card": None,
                "parts": (),
                "first_comment": None,
            }
        )

    def as_comment(self) -> DeliveryRequest:
        """The first comment as a single request: its text, no media, card or parts."""
        assert self.first_comment is not None
        return self.model_copy(
            update={
                "content": self.first_comment.content,
                "media_ids": (),
                "media": (),
                "link_card": None,
                "parts": (),
                "first_comment": None,
            }
        )


class DeliveryResult(BaseModel):
    """A final outcome: ``published`` (2xx) or ``failed`` (permanent, e.g. a 4xx other than 429).

    ``remote_id`` is the destination's id for the post when it returned one (webhook: the
    ``"id"`` of a JSON response body; Mastodon: the status id; Bluesky: the record's
    ``at://`` URI) and ``remote_url`` its public page. ``reason`` is a machine-readable cause of
    a failure (``reauthorization_required`` when the network refused the credentials: the
    channel needs new ones, retrying cannot help).
    """

    outcome: Literal["published", "failed"]
    http_status: int | None = None
    remote_id: str | None = None
    remote_url: str | None = None
    error: str | None = None
    reason: Literal["reauthorization_required", "too_long", "refused"] | None = None
    #: The network's ids of the post's media, in the post's order (Bluesky: the blob CIDs),
    #: each checked as the adapter read it; empty for a post without media.
    media_remote_ids: tuple[str, ...] = ()
    #: What the network returned, for the creator to check (``models/receipt.py``); None for a
    #: failure or an adapter that gives none.
    receipt: Receipt | None = None
    #: A thread's published parts, in order (part 1 first, index 0); for a failure, the parts
    #: published before it (never silently half-posted). Empty for a single post.
    parts: tuple[PublishedPart, ...] = ()
    #: The thread's parts in all (0: a single post).
    parts_total: int = 0
    #: The first comment's own outcome (None: the post has none).
    comment: CommentOutcome | None = None
    #: When the post itself was out, if before this answer (UTC): a thread whose first comment
    #: came in a later round. None: at this answer.
    published_at: datetime | None = None


class PlatformAdapter(Protocol):
    """One destination platform."""

    platform: str

    def deliver(
        self, channel: Channel, request: DeliveryRequest, *, now: datetime
    ) -> DeliveryResult:
        """Send ``request`` to ``channel`` at ``now`` (the worker's clock).

        Raises
        ------
        scheduled_posts.errors.RetryableDeliveryError
            On 5xx, 429 (with ``retry_after_seconds`` from ``Retry-After``), timeouts and
            connection errors.
        """
        ...
