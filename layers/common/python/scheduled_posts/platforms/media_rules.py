"""What media each network takes, as data (:class:`MediaRules`, one per platform spec) and one
pure check (:func:`media_rule_errors`).

Sources, per platform (each spec's ``media_rules``):

- Mastodon: the instance's ``GET /api/v2/instance`` ``configuration.statuses.
  max_media_attachments`` and ``configuration.media_attachments`` (``supported_mime_types``,
  ``image_size_limit``, ``video_size_limit``, ``description_limit``), read by the credential
  check (:func:`mastodon_media_limits`); when the instance omits one, the default the
  documentation shows (https://docs.joinmastodon.org/entities/Instance/#media_attachments:
  4 attachments, 16,777,216-byte images, 103,809,024-byte videos, 1,500-character
  descriptions). A status may not mix a video with other attachments (Mastodon's
  ``PostStatusService#validate_media!``, "images_and_video").
- Bluesky: the lexicons ``app.bsky.embed.images`` (at most 4 ``image/*`` blobs of at most
  2,000,000 bytes each; ``alt`` a required string, empty allowed, no length cap: the Bluesky
  app caps it at 2,000) and ``app.bsky.embed.video`` (one ``video/mp4``); a post's embed is
  one of them, so images and a video never mix. A blob must also pass the PDS's upload limit:
  the reference PDS's ``PDS_BLOB_UPLOAD_LIMIT`` defaults to 5 MiB (5,242,880 bytes,
  ``@atproto/pds`` ``config.js``), under the video lexicon's 300,000,000.
- Webhooks: at most 10 items of any ready kind (decision "The media bucket, its limits per
  network, erasure").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from scheduled_posts.models.network import ChannelLimits
from scheduled_posts.platforms.base import PublishedMedia
from scheduled_posts.platforms.text_length import mastodon_limits

#: The kinds the probe accepts (a ``ready`` upload is one of them).
IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
VIDEO_TYPES = frozenset({"video/mp4"})

MASTODON_MAX_MEDIA_ATTACHMENTS = 4
MASTODON_IMAGE_SIZE_LIMIT = 16_777_216
MASTODON_VIDEO_SIZE_LIMIT = 103_809_024
MASTODON_DESCRIPTION_LIMIT = 1_500
BLUESKY_MAX_IMAGES = 4
BLUESKY_IMAGE_SIZE_LIMIT = 2_000_000
BLUESKY_VIDEO_SIZE_LIMIT = 5_242_880
BLUESKY_ALT_TEXT_LIMIT = 2_000
WEBHOOK_MAX_MEDIA = 10


@dataclass(frozen=True)
class MediaRules:
    """The media a post to one network may carry.

    ``max_items``: attachments per post; ``max_images``/``max_videos``: of each kind;
    ``mixing``: images and videos together; ``image_types``/``video_types``: MIME types taken;
    ``image_size_limit``/``video_size_limit``: bytes per item (``None``: no network limit);
    ``description_limit``: characters of alt text (``None``: no cap).
    """

    max_items: int
    max_images: int
    max_videos: int
    mixing: bool
    image_types: frozenset[str] = IMAGE_TYPES
    video_types: frozenset[str] = VIDEO_TYPES
    image_size_limit: int | None = None
    video_size_limit: int | None = None
    description_limit: int | None = None

    def limits(self) -> dict[str, Any]:
        """The media fields of :class:`ChannelLimits` (as ``GET /v1/channels`` shows them)."""
        return {
            "max_media_attachments": self.max_items,
            "image_size_limit": self.image_size_limit,
            "video_size_limit": self.video_size_limit,
            "description_limit": self.description_limit,
            "supported_mime_types": tuple(sorted(self.image_types | self.video_types)),
        }

    def with_limits(self, limits: ChannelLimits | None) -> MediaRules:
        """These rules with a channel's own limits in their place (a Mastodon instance's, from
        its credential check): its count of attachments (and so of images), sizes and
        description limit; its MIME types narrow the kinds. A field the channel does not hold
        keeps this rule's value."""
        if limits is None:
            return self
        types = limits.supported_mime_types
        count = limits.max_media_attachments
        return replace(
            self,
            max_items=count or self.max_items,
            max_images=count or self.max_images,
            image_types=self.image_types & set(types) if types is not None else self.image_types,
            video_types=self.video_types & set(types) if types is not None else self.video_types,
            image_size_limit=limits.image_size_limit or self.image_size_limit,
            video_size_limit=limits.video_size_limit or self.video_size_limit,
            description_limit=limits.description_limit or self.description_limit,
        )


MASTODON_MEDIA_RULES = MediaRules(
    max_items=MASTODON_MAX_MEDIA_ATTACHMENTS,
    max_images=MASTODON_MAX_MEDIA_ATTACHMENTS,
    max_videos=1,
    mixing=False,
    image_size_limit=MASTODON_IMAGE_SIZE_LIMIT,
    video_size_limit=MASTODON_VIDEO_SIZE_LIMIT,
    description_limit=MASTODON_DESCRIPTION_LIMIT,
)
BLUESKY_MEDIA_RULES = MediaRules(
    max_items=BLUESKY_MAX_IMAGES,
    max_images=BLUESKY_MAX_IMAGES,
    max_videos=1,
    mixing=False,
    image_size_limit=BLUESKY_IMAGE_SIZE_LIMIT,
    video_size_limit=BLUESKY_VIDEO_SIZE_LIMIT,
    description_limit=BLUESKY_ALT_TEXT_LIMIT,
)
WEBHOOK_MEDIA_RULES = MediaRules(
    max_items=WEBHOOK_MAX_MEDIA, max_images=WEBHOOK_MAX_MEDIA, max_videos=WEBHOOK_MAX_MEDIA,
    mixing=True,
)  # fmt: skip


class MediaViolation(BaseModel):
    """One broken media rule: ``rule``, a human ``description``, the offending ``value`` and
    the ``limit``; ``media_id`` of the item (``None`` for a rule of the whole post)."""

    model_config = ConfigDict(frozen=True)

    rule: Literal["count", "kind", "mixing", "size", "alt_text"]
    description: str
    value: int | str
    limit: int | str
    media_id: str | None = None

    def message(self, channel_name: str) -> str:
        """``channel <name>: <description>: <value>, the limit is <limit>`` (safe to show)."""
        item = f" (media {self.media_id})" if self.media_id else ""
        return (
            f"channel {channel_name}: {self.description}{item}: {self.value},"
            f" the limit is {self.limit}"
        )


def media_rule_errors(rules: MediaRules, media: Sequence[PublishedMedia]) -> list[MediaViolation]:
    """Every rule of ``rules`` that ``media`` (a post's ready uploads, in order) breaks; empty
    when the network takes them. Checked: the count of items and of each kind, the kinds, the
    mixing of images with videos, each item's size in bytes and its alt text's length in
    characters (sources: the module docstring)."""
    images = [m for m in media if m.content_type in rules.image_types]
    videos = [m for m in media if m.content_type in rules.video_types]
    found = _count_errors(rules, len(media), len(images), len(videos))
    taken = " or ".join(sorted(rules.image_types | rules.video_types))
    for item in media:
        if item.content_type not in rules.image_types | rules.video_types:
            found.append(
                _item("kind", "a kind the network does not take", item.content_type, taken, item)
            )
    if images and videos and not rules.mixing:
        found.append(
            MediaViolation(
                rule="mixing",
                description="images and a video in one post",
                value=f"{len(images)} images and {len(videos)} videos",
                limit="images or one video",
            )
        )
    sized = [(i, rules.image_size_limit) for i in images]
    for item, limit in sized + [(v, rules.video_size_limit) for v in videos]:
        if limit is not None and item.size > limit:
            found.append(
                _item("size", "a file over the size limit in bytes", item.size, limit, item)
            )
    for item in media:
        alt = len(item.alt_text or "")
        if rules.description_limit is not None and alt > rules.description_limit:
            found.append(
                _item(
                    "alt_text",
                    "an alt text over the limit in characters",
                    alt,
                    rules.description_limit,
                    item,
                )
            )
    return found


def _count_errors(rules: MediaRules, total: int, images: int, videos: int) -> list[MediaViolation]:
    counts = (
        ("attachments in one post", total, rules.max_items),
        ("images in one post", images, rules.max_images),
        ("videos in one post", videos, rules.max_videos),
    )
    found: list[MediaViolation] = []
    for what, count, limit in counts:
        # Five images for four attachments is one broken rule, not two.
        if count > limit and all((v.value, v.limit) != (count, limit) for v in found):
            found.append(MediaViolation(rule="count", description=what, value=count, limit=limit))
    return found


def _item(
    rule: Literal["kind", "size", "alt_text"],
    description: str,
    value: int | str,
    limit: int | str,
    item: PublishedMedia,
) -> MediaViolation:
    return MediaViolation(
        rule=rule, description=description, value=value, limit=limit, media_id=item.media_id
    )


def _positive(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def mastodon_media_limits(configuration: Mapping[str, Any] | None) -> dict[str, Any]:
    """The media fields of :class:`ChannelLimits` from an instance's ``/api/v2/instance``
    ``configuration`` (``statuses.max_media_attachments``, ``media_attachments.*``); a value
    missing or not a positive number (a list of strings for ``supported_mime_types``) takes
    the documented default of :data:`MASTODON_MEDIA_RULES`
    (https://docs.joinmastodon.org/entities/Instance/)."""
    configuration = configuration or {}
    statuses = configuration.get("statuses")
    media = configuration.get("media_attachments")
    statuses = statuses if isinstance(statuses, Mapping) else {}
    media = media if isinstance(media, Mapping) else {}
    types = media.get("supported_mime_types")
    given = {
        "max_media_attachments": _positive(statuses.get("max_media_attachments")),
        "image_size_limit": _positive(media.get("image_size_limit")),
        "video_size_limit": _positive(media.get("video_size_limit")),
        "description_limit": _positive(media.get("description_limit")),
        # Only the kinds the probe accepts: what a creator may upload for this channel.
        "supported_mime_types": (
            tuple(sorted({t for t in types if t in IMAGE_TYPES | VIDEO_TYPES}))
            if isinstance(types, list)
            else None
        ),
    }
    defaults = MASTODON_MEDIA_RULES.limits()
    defaults["supported_mime_types"] = None  # absent: every kind the rules take
    return {k: v if v is not None else defaults[k] for k, v in given.items()}


def mastodon_instance_limits(configuration: Mapping[str, Any]) -> ChannelLimits:
    """A Mastodon channel's length and media limits from its instance's ``/api/v2/instance``
    ``configuration`` (``statuses`` and ``media_attachments``; the documented defaults for
    what it omits: ``platforms/text_length.py`` and :func:`mastodon_media_limits`)."""
    statuses = configuration.get("statuses")
    statuses = statuses if isinstance(statuses, Mapping) else {}
    return mastodon_limits(
        statuses.get("max_characters"), statuses.get("characters_reserved_per_url")
    ).model_copy(update=mastodon_media_limits(configuration))
