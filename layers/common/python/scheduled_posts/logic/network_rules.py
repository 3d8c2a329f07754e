"""The networks' rules applied to a post's (or a recurring schedule's) text and media when it is
created or edited (and again by the worker or the adapters at publish time): a 422 problem names
the channel, the rule, the count and the limit (each platform's ``length_rule``:
``platforms/registry.py``).

Media: each of a post's ``media_ids`` must be one of the caller's ``ready`` uploads
(:func:`ready_media_errors`; decision "Media uploads and the probe"), and they must fit each
channel's media rules (:func:`media_rule_violations`: the network's count, kinds, mixing, sizes
and alt-text length, ``platforms/media_rules.py``); a platform whose spec does not say
``publishes_media`` refuses media outright (decision "Media refused for network channels until
they can be published"), never publishing the text alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from scheduled_posts.data.channels import ChannelRepository
from scheduled_posts.data.media import MediaRepository
from scheduled_posts.logic.thread_rules import (
    comment_errors,
    part_length_errors,
    part_media_errors,
    part_media_ids,
)
from scheduled_posts.logic.variant_rules import Draft, field_loc, variant_errors
from scheduled_posts.models.api import ID_PATTERN
from scheduled_posts.models.media import MediaStatus
from scheduled_posts.models.post import Channel
from scheduled_posts.models.thread import FirstComment, Part
from scheduled_posts.models.variants import Effective, Variant, effective_for
from scheduled_posts.platforms.base import PublishedMedia
from scheduled_posts.platforms.media_rules import media_rule_errors
from scheduled_posts.platforms.registry import check_length, media_rules_of, spec_of


def length_errors(
    content: str,
    channels: Iterable[Channel],
    effective: Mapping[str, Effective] | None = None,
) -> list[dict[str, Any]]:
    """One ``{"loc": ["body", "content"], "msg", "type": "too_long"}`` per broken rule of each
    channel (webhooks have none), on the channel's effective text when ``effective`` gives it
    (``loc ["body", "variants", <channel_id>, "content"]`` when its variant sets the text)."""
    errors = []
    for channel in channels:
        found = (effective or {}).get(channel.channel_id)
        text, options = (found.content, found.options) if found else (content, None)
        for violation in check_length(channel.platform, text, channel.limits, options):
            errors.append(
                {
                    "loc": field_loc(found, channel.channel_id, "content"),
                    "msg": f"{violation.message(channel.name)} (channel_id {channel.channel_id})",
                    "type": "too_long",
                }
            )
    return errors


def refuses_media(platform: str) -> bool:
    """True for a platform whose adapter cannot publish media (``PlatformSpec.publishes_media``
    false; webhooks, Mastodon and Bluesky all publish them)."""
    return not spec_of(platform).publishes_media


def media_errors(
    media_ids: Sequence[str],
    channels: Iterable[Channel],
    effective: Mapping[str, Effective] | None = None,
) -> list[dict[str, Any]]:
    """One ``{"loc": ["body", "media_ids"], "msg", "type": "media_unsupported"}`` per channel of
    a platform that cannot publish media (:func:`refuses_media`) when its (effective)
    ``media_ids`` is not empty."""
    errors = []
    for channel in channels:
        found = (effective or {}).get(channel.channel_id)
        ids = found.media_ids if found else media_ids
        if ids and refuses_media(channel.platform):
            errors.append(
                {
                    "loc": field_loc(found, channel.channel_id, "media_ids"),
                    "msg": (
                        f"channel {channel.name} (channel_id {channel.channel_id}) is a "
                        f"{channel.platform} channel, which cannot publish media yet: "
                        f"the post has {len(ids)} media_ids, the limit is 0"
                    ),
                    "type": "media_unsupported",
                }
            )
    return errors


def ready_media_errors(
    owner: str, media_ids: Sequence[str], *, media: MediaRepository | None
) -> list[dict[str, Any]]:
    """One 422 error per entry of ``media_ids`` that is not one of ``owner``'s ``ready`` uploads
    (``loc ["body", "media_ids", i]``, type ``media_not_ready``); missing and another user's are
    described in the same words (one BatchGet). ``media=None``: no upload store to check
    against (a caller that checks other rules only)."""
    return _ready_media(owner, media_ids, media=media)[0]


def _shown(value: str) -> str:
    """``value`` as an error may quote it: itself when short and printable, else a stand-in."""
    return value if len(value) <= 64 and value.isprintable() else "this id"


def _ready_media(
    owner: str,
    media_ids: Sequence[str],
    *,
    media: MediaRepository | None,
    loc: Sequence[Any] = ("body", "media_ids"),
) -> tuple[list[dict[str, Any]], list[PublishedMedia]]:
    """:func:`ready_media_errors` (at ``loc``), and the uploads as the adapters see them when
    all are ready."""
    if not media_ids or media is None:
        return [], []
    # Only ids of the shape the service makes can name an upload (and fit in a key).
    found = media.get_many(owner, [m for m in media_ids if re.fullmatch(ID_PATTERN, m)])
    errors = []
    for i, media_id in enumerate(media_ids):
        item = found.get(media_id)
        if item is not None and item.status == MediaStatus.READY:
            continue
        state = "no ready upload of yours" if item is None else f"your upload is {item.status}"
        shown = _shown(media_id)
        errors.append(
            {
                "loc": [*loc, i],
                "msg": f"{shown!r}: {state}; media_ids must name your ready uploads "
                "(POST /v1/media, then complete)",
                "type": "media_not_ready",
            }
        )
    return errors, ([] if errors else [found[m].published() for m in media_ids])


def media_rule_violations(
    media: Sequence[PublishedMedia],
    channels: Iterable[Channel],
    per_channel: Mapping[str, tuple[Sequence[PublishedMedia], Effective]] | None = None,
) -> list[dict[str, Any]]:
    """One 422 error per network media rule (``platforms/media_rules.py``: count, kinds, mixing,
    sizes, alt text) a channel's limits refuse for ``media`` (``loc ["body", "media_ids"]``,
    type ``media_<rule>``, the message naming the channel, the value and the limit); a channel
    in ``per_channel`` is checked on its own effective uploads instead."""
    errors = []
    for channel in channels:
        uploads, found = (per_channel or {}).get(channel.channel_id, (media, None))
        rules = media_rules_of(channel.platform, channel.limits)
        if rules is None or not uploads:
            continue
        for violation in media_rule_errors(rules, uploads):
            errors.append(
                {
                    "loc": field_loc(found, channel.channel_id, "media_ids"),
                    "msg": f"{violation.message(channel.name)} (channel_id {channel.channel_id})",
                    "type": f"media_{violation.rule}",
                }
            )
    return errors


def channel_errors(
    owner: str,
    channel_ids: Sequence[str],
    *,
    channels: ChannelRepository,
    content: str,
    media_ids: Sequence[str],
    given: bool = True,
    media: MediaRepository | None = None,
    variants: Mapping[str, Variant] | None = None,
    variant_media: MediaRepository | Literal["same"] | None = "same",
    parts: Sequence[Part] = (),
    first_comment: FirstComment | None = None,
    part_media: MediaRepository | Literal["same"] | None = "same",
) -> list[dict[str, Any]]:
    """The channel rules of a post or a recurring schedule: each of ``channel_ids`` that is not
    ``owner``'s (``channel_not_found``, when the request ``given`` them), the ``variants``'
    targets and options (``logic/variant_rules.py``), then :func:`length_errors` and
    :func:`media_errors` of each channel's effective post (one BatchGet), then
    :func:`ready_media_errors` of ``media_ids`` (and of each variant's, against
    ``variant_media``, default ``media``), then, when every one is ready,
    :func:`media_rule_violations` of each channel's effective uploads; and the same rules on
    every part of each channel's effective thread (``parts``, or its variant's:
    ``logic/thread_rules.py``; their media against ``part_media``, default ``media``)."""
    found = channels.get_many(owner, channel_ids)
    missing = [
        {
            "loc": ["body", "channel_ids", i],
            "msg": f"no channel {_shown(channel_id)!r} of yours (by id; an import also by name)",
            "type": "channel_not_found",
        }
        for i, channel_id in enumerate(channel_ids)
        if given and channel_id not in found
    ]
    chosen = [found[c] for c in channel_ids if c in found]
    draft = Draft(content, list(media_ids), dict(variants or {}), list(parts))
    effective = {c.channel_id: effective_for(draft, c.channel_id) for c in chosen}
    errors = missing + variant_errors(draft.variants, channel_ids, found)
    errors += length_errors(content, chosen, effective) + media_errors(media_ids, chosen, effective)
    parts_store = media if part_media == "same" else part_media
    errors += part_length_errors(chosen, effective)
    errors += _part_media(owner, chosen, effective, parts_store)
    errors += comment_errors(first_comment, chosen)
    not_ready, uploads = _ready_media(owner, media_ids, media=media)
    by_id = {u.media_id: u for u in uploads}
    other = media if variant_media == "same" else variant_media
    for cid, variant in draft.variants.items():
        if variant.media_ids is not None and cid in effective:
            loc = ("body", "variants", cid, "media_ids")
            wrong, more = _ready_media(owner, variant.media_ids, media=other, loc=loc)
            not_ready += wrong
            by_id.update({u.media_id: u for u in more})
    per_channel = {  # checked only when every upload of the channel is ready
        cid: ([by_id[m] for m in eff.media_ids] if set(eff.media_ids) <= set(by_id) else [], eff)
        for cid, eff in effective.items()
    }
    return errors + not_ready + media_rule_violations(uploads, chosen, per_channel)


def composed_errors(
    owner: str, request: Any, *, channels: ChannelRepository, media: MediaRepository | None
) -> list[dict[str, Any]]:
    """:func:`channel_errors` of a create request (a post's, a draft's or a recurring
    schedule's): its ``channel_ids``, ``content``, ``media_ids``, ``variants`` and, when it has
    them, a thread's ``parts`` and ``first_comment``."""
    return channel_errors(
        owner,
        request.channel_ids,
        channels=channels,
        content=request.content,
        media_ids=request.media_ids,
        media=media,
        variants=request.variants,
        parts=getattr(request, "parts", None) or [],
        first_comment=getattr(request, "first_comment", None),
    )


def _part_media(
    owner: str,
    chosen: Sequence[Channel],
    effective: Mapping[str, Effective],
    media: MediaRepository | None,
) -> list[dict[str, Any]]:
    """The media rules of the threads' replies (none checked without an upload store)."""
    ids = [m for m in part_media_ids(effective) if re.fullmatch(ID_PATTERN, m)]
    if media is None or not part_media_ids(effective):
        return []
    found = media.get_many(owner, ids) if ids else {}
    ready = {m: i.published() for m, i in found.items() if i.status == MediaStatus.READY}
    return part_media_errors(chosen, effective, ready)


def _kept_uploads(
    owner: str, stored: Any, patch: Any, media: MediaRepository | None
) -> MediaRepository | None:
    """The upload store to check the stored ``media_ids`` with when ``patch`` changes the
    channels but not the media: the new channels' media rules (count, kinds, sizes, alt text)
    must hold for the media the post keeps, as on create, rather than failing at publish.
    None (not checked, as before) when the patch keeps the channels, or when a stored id is not
    a ready upload of ``owner`` (a post made before uploads existed keeps its opaque ids)."""
    kept = list(getattr(stored, "media_ids", []) or [])
    if media is None or patch.channel_ids is None or not kept:
        return None
    if not all(re.fullmatch(ID_PATTERN, m) for m in kept):
        return None
    found = media.get_many(owner, kept)
    ready = all((u := found.get(m)) is not None and u.status == MediaStatus.READY for m in kept)
    return media if ready else None


def patched_channel_errors(
    owner: str,
    stored: Any,
    patch: Any,
    *,
    channels: ChannelRepository,
    media: MediaRepository | None = None,
) -> list[dict[str, Any]]:
    """:func:`channel_errors` of ``stored`` (a post or a series) as ``patch`` (its PATCH model)
    leaves its ``content``, ``media_ids``, ``channel_ids`` and ``variants``; none when the patch
    changes none of them. Only channels the patch names are checked to exist, and only
    ``media_ids`` the patch gives (its own, or its variants') are checked to be ready uploads (a
    post made before uploads existed keeps its opaque ids through an edit of its text); the
    media of a thread's parts always are, as on create (parts came after uploads, so their ids
    always name uploads): a PATCH of ``parts`` alone is refused for another user's upload, one
    not ready, or one a channel's media rules refuse, at the part's ``loc``. A ``channel_ids``
    that drops a channel with a variant is refused with the variant named (decision "A text
    per channel: variants"). A ``first_comment`` the patch gives (``null`` too) replaces the
    stored one in the checks."""
    new_variants = getattr(patch, "variants", None)
    new_parts = getattr(patch, "parts", None)
    comment = getattr(patch, "first_comment", None)
    if (
        patch.channel_ids is None
        and patch.content is None
        and patch.media_ids is None
        and new_variants is None
        and new_parts is None
        and "first_comment" not in patch.model_fields_set
    ):
        return []
    return channel_errors(
        owner,
        list(patch.channel_ids if patch.channel_ids is not None else stored.channel_ids),
        channels=channels,
        content=patch.content if patch.content is not None else stored.content,
        media_ids=list(patch.media_ids if patch.media_ids is not None else stored.media_ids),
        given=patch.channel_ids is not None,
        media=media if patch.media_ids is not None else _kept_uploads(owner, stored, patch, media),
        variants=new_variants if new_variants is not None else getattr(stored, "variants", {}),
        variant_media=media if new_variants is not None else None,
        parts=new_parts if new_parts is not None else getattr(stored, "parts", []),
        first_comment=comment
        if "first_comment" in patch.model_fields_set
        else getattr(stored, "first_comment", None),
        part_media=media,
    )
