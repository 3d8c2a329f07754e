"""Bluesky link cards, decided when a post is created or edited (decision "Bluesky link cards,
frozen at scheduling time").

:func:`decide_card` is the one hook of the post logic (``logic/posts.py``):

- ``link_card: null`` in the body: no card;
- a card in the body (:class:`~scheduled_posts.models.link_card.LinkCardIn`): that card, its
  ``thumb_media_id`` one of the caller's ready image uploads of at most 1,000,000 bytes (else
  422 at ``["body", "link_card", "thumb_media_id"]``);
- no ``link_card`` in the body: the first URL (the link facets Bluesky would make,
  ``platforms.atproto_text.detect_facets``) of the first Bluesky channel whose effective post
  has a URL and no media. On an edit, a card whose URL is still the one wanted is kept as it
  is (frozen; a removed card stays removed); otherwise the page is fetched
  (``platforms/link_preview.py``) and its title, description and image frozen, the image
  stored as an upload (probed like one, ``logic/media_probe.py``) and kept
  (``attach_media``). A fetch that fails gives no card and a warning; the post is valid.

The card is published on every Bluesky channel of the post whose effective post has no media
(``platforms/bluesky_card.py``); Mastodon builds its own cards: nothing is sent there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from scheduled_posts.errors import ValidationFailedError
from scheduled_posts.logic.media import MediaDeps
from scheduled_posts.logic.media_attach import attach_media
from scheduled_posts.logic.media_probe import probe
from scheduled_posts.models.api import PostCreate, PostPatch
from scheduled_posts.models.link_card import (
    MAX_DESCRIPTION_CHARS,
    MAX_THUMB_BYTES,
    MAX_TITLE_CHARS,
    CardThumb,
    LinkCard,
    LinkCardIn,
)
from scheduled_posts.models.media import MEDIA_KINDS, Media, MediaCreate, MediaStatus
from scheduled_posts.models.post import Post
from scheduled_posts.models.variants import Composed, effective_for
from scheduled_posts.observability import logger
from scheduled_posts.platforms.atproto_text import detect_facets
from scheduled_posts.platforms.link_preview import PagePreview, PreviewError

#: The platform whose posts carry cards.
BLUESKY = "bluesky"
_LINK = "app.bsky.richtext.facet#link"


class Previewer(Protocol):
    """``platforms.link_preview.LinkPreviewer``: ``page(url)`` and ``image(url) -> (bytes,
    content type)``, raising ``PreviewError``."""

    def page(self, url: str) -> PagePreview: ...

    def image(self, url: str) -> tuple[bytes, str]: ...


class ChannelLookup(Protocol):
    def get(self, owner: str, channel_id: str) -> Any: ...


@dataclass(frozen=True)
class LinkCardDeps:
    """Collaborators: the previewer, the uploads (items, bucket, clock, settings), a
    ``put_object(key, bytes, content_type)`` of the media bucket (``data/card_thumbs.py``)."""

    previewer: Previewer
    uploads: MediaDeps
    put_object: Callable[[str, bytes, str], None]


@dataclass(frozen=True)
class CardDecision:
    """The post's card (``None``: none) and the warnings of the answer (each
    ``{"type": "link_card_unavailable", "url", "detail"}``)."""

    card: LinkCard | None
    warnings: tuple[dict[str, str], ...] = ()


#: ``given`` of :func:`decide_card` when the body has no ``link_card``.
ABSENT: Any = object()


def card_url(
    owner: str, composed: Composed, channel_ids: Sequence[str], channels: ChannelLookup
) -> str | None:
    """The first URL of the first Bluesky channel (in ``channel_ids`` order) whose effective
    post has a URL and no media; ``None`` when no channel wants a card."""
    for channel_id in channel_ids:
        channel = channels.get(owner, channel_id)
        if channel is None or channel.platform != BLUESKY:
            continue
        effective = effective_for(composed, channel_id)
        if effective.media_ids:
            continue
        for facet in detect_facets(effective.content, lambda _handle: None):
            feature = facet["features"][0]
            if feature["$type"] == _LINK:
                return str(feature["uri"])
    return None


def decide_card(
    owner: str,
    wanted_url: str | None,
    *,
    given: Any,
    kept: tuple[str | None, LinkCard | None] | None = None,
    deps: LinkCardDeps | None,
) -> CardDecision:
    """The card of a post being written (rules: module docstring). ``wanted_url``:
    :func:`card_url` of the new post; ``given``: the body's ``link_card`` (:data:`ABSENT`,
    ``None`` or a :class:`LinkCardIn`); ``kept``: on an edit, ``(card_url of the post before,
    its card)``. ``deps`` None: cards are off (no fetch, a given card without thumb check).

    Raises
    ------
    ValidationFailedError
        A given ``thumb_media_id`` that is not a ready image upload of at most 1,000,000 bytes.
    """
    if given is None:
        return CardDecision(None)
    if isinstance(given, LinkCardIn):
        return CardDecision(_given(owner, given, deps))
    if kept is not None and kept[0] == wanted_url:
        return CardDecision(kept[1])
    if wanted_url is None or deps is None:
        return CardDecision(None)
    return _fetched(owner, wanted_url, deps)


def _thumb_error(msg: str) -> ValidationFailedError:
    loc = ["body", "link_card", "thumb_media_id"]
    return ValidationFailedError(
        "the link card's thumb is not usable", [{"loc": loc, "msg": msg, "type": "thumb_invalid"}]
    )


def _given(owner: str, given: LinkCardIn, deps: LinkCardDeps | None) -> LinkCard:
    thumb = None
    if given.thumb_media_id is not None:
        media = deps.uploads.media.get(owner, given.thumb_media_id) if deps else None
        if media is None or media.status != MediaStatus.READY or media.probed is None:
            raise _thumb_error("must be one of your ready uploads")
        if not media.probed.content_type.startswith("image/"):
            raise _thumb_error(f"is {media.probed.content_type}; a thumb must be an image")
        if media.probed.size > MAX_THUMB_BYTES:
            raise _thumb_error(
                f"is {media.probed.size} bytes, the limit is {MAX_THUMB_BYTES}"
                " (app.bsky.embed.external thumb maxSize)"
            )
        assert deps is not None
        attach_media(owner, [media.media_id], deps=deps.uploads)
        thumb = _thumb_of(media)
    return LinkCard(uri=given.uri, title=given.title, description=given.description, thumb=thumb)


def _warning(url: str, detail: str) -> dict[str, str]:
    return {"type": "link_card_unavailable", "url": url, "detail": detail}


def _fetched(owner: str, url: str, deps: LinkCardDeps) -> CardDecision:
    """The card of ``url``'s page, or none and a warning."""
    try:
        page = deps.previewer.page(url)
    except PreviewError as exc:
        logger.info("link card not fetched", extra={"url": url, "reason": str(exc)})
        return CardDecision(None, (_warning(url, str(exc)),))
    if not page.title and not page.description:
        return CardDecision(None, (_warning(url, "no_metadata: no title or description"),))
    warnings: tuple[dict[str, str], ...] = ()
    thumb = None
    if page.image is not None:
        try:
            thumb = _stored_thumb(owner, *deps.previewer.image(page.image), deps=deps)
        except PreviewError as exc:
            warnings = (_warning(page.image, f"no thumb: {exc}"),)
    card = LinkCard(
        uri=url,
        title=page.title[:MAX_TITLE_CHARS],
        description=page.description[:MAX_DESCRIPTION_CHARS],
        thumb=thumb,
    )
    return CardDecision(card, warnings)


def _stored_thumb(owner: str, data: bytes, content_type: str, *, deps: LinkCardDeps) -> CardThumb:
    """``data`` probed (as an upload is), stored in the media bucket as one of ``owner``'s
    uploads and kept; raises :class:`PreviewError` when the probe refuses it."""
    uploads = deps.uploads
    outcome = probe(
        data,
        declared_type=content_type,
        declared_size=len(data),
        declared_sha256=None,
        max_pixels=uploads.settings.MEDIA_MAX_PIXELS,
    )
    probed = outcome.probed
    if outcome.reason is not None or probed is None:
        reason = outcome.reason.value if outcome.reason else "unsupported_type"
        raise PreviewError(f"refused by the probe: {reason}")
    if content_type not in MEDIA_KINDS or not content_type.startswith("image/"):
        raise PreviewError(f"refused by the probe: {content_type} is not an image kind")
    now = uploads.clock.now()
    media = Media.new(
        owner,
        MediaCreate(content_type=content_type, size=len(data), sha256=probed.sha256),
        now,
    )
    uploads.media.put_new(media)
    deps.put_object(media.object_key, data, content_type)
    ready = uploads.media.mark_probed(owner, media.media_id, probed=probed, reason=None, now=now)
    attach_media(owner, [ready.media_id], deps=uploads)
    return _thumb_of(ready)


def _thumb_of(media: Media) -> CardThumb:
    published = media.published()
    return CardThumb(
        media_id=published.media_id,
        content_type=published.content_type,
        size=published.size,
        sha256=published.sha256,
        width=published.width,
        height=published.height,
        object_key=published.object_key,
    )


def frozen_on_create(
    post: Post, request: PostCreate, *, channels: ChannelLookup, deps: LinkCardDeps | None
) -> Post:
    """``post`` (about to be created from ``request``) with its card and warnings."""
    given = request.link_card if "link_card" in request.model_fields_set else ABSENT
    wanted = None if given is not ABSENT else card_url(post.owner, post, post.channel_ids, channels)
    return _with(post, decide_card(post.owner, wanted, given=given, deps=deps))


#: Fields of an edit that can change which URL a card is wanted for.
_TEXT_FIELDS = frozenset({"content", "media_ids", "channel_ids", "variants"})


def frozen_on_edit(
    before: Post,
    after: Post,
    patch: PostPatch,
    *,
    channels: ChannelLookup,
    deps: LinkCardDeps | None,
) -> Post:
    """``after`` (``before`` with ``patch`` applied) with its card and warnings: the given
    card, or the kept one while the wanted URL stays, or a new fetch."""
    owner = before.owner
    if "link_card" in patch.model_fields_set:
        decision = decide_card(owner, None, given=patch.link_card, deps=deps)
    elif not patch.model_fields_set & _TEXT_FIELDS:
        decision = CardDecision(before.link_card)
    else:
        wanted = card_url(owner, after, after.channel_ids, channels)
        kept = (card_url(owner, before, before.channel_ids, channels), before.link_card)
        decision = decide_card(owner, wanted, given=ABSENT, kept=kept, deps=deps)
    return _with(after, decision)


def _with(post: Post, decision: CardDecision) -> Post:
    return post.model_copy(update={"link_card": decision.card, "warnings": list(decision.warnings)})
