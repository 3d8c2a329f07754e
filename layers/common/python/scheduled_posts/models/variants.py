"""A text per channel: a post's optional ``variants``, keyed by channel id, each overriding the
post's ``content``, ``media_ids`` and ``language`` and setting network options for that channel
only (decision "A text per channel: variants"), and the effective post of each channel
(:func:`effective_for`), the one reading of them that validation, the worker and the API share.

Network options (each accepted only by the platforms whose spec names it,
``PlatformSpec.variant_options``):

- Mastodon (https://docs.joinmastodon.org/methods/statuses/#create): ``visibility``
  (``public``, ``unlisted``, ``private``, ``direct``), ``spoiler_text`` (the content warning,
  counted in the status length by the instance's ``StatusLengthValidator``), ``sensitive``.
- Bluesky (lexicon ``app.bsky.feed.post``,
  https://github.com/bluesky-social/atproto/blob/main/lexicons/app/bsky/feed/post.json):
  ``langs`` (``maxLength: 3``, ``format: language``) and ``tags`` (``maxLength: 8``; each
  ``maxLength: 640`` UTF-8 bytes and ``maxGraphemes: 64``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Protocol

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
    model_validator,
)

from scheduled_posts.models.post_fields import (
    MAX_CHANNELS_PER_POST,
    Content,
    Id,
    Language,
    MediaIds,
    _clean_text,
    _distinct,
    is_blank,
)
from scheduled_posts.models.thread import Part, Parts

#: Bluesky's lexicon limits on ``langs`` and ``tags``.
MAX_LANGS = 3
MAX_TAGS = 8
MAX_TAG_GRAPHEMES = 64
MAX_TAG_BYTES = 640

Visibility = Literal["public", "unlisted", "private", "direct"]


def _tag_rule(value: str) -> str:
    # imported here: ``platforms.text_length`` imports ``models``, which imports this module
    from scheduled_posts.platforms.text_length import grapheme_count

    _clean_text(value)
    if is_blank(value):
        raise ValueError("must not be blank")
    if grapheme_count(value) > MAX_TAG_GRAPHEMES:
        raise ValueError(f"must be at most {MAX_TAG_GRAPHEMES} graphemes (Bluesky lexicon)")
    if len(value.encode("utf-8")) > MAX_TAG_BYTES:
        raise ValueError(f"must be at most {MAX_TAG_BYTES} UTF-8 bytes (Bluesky lexicon)")
    return value


Tag = Annotated[StrictStr, Field(min_length=1), AfterValidator(_tag_rule)]
Tags = Annotated[
    list[Tag],
    Field(
        min_length=1,
        max_length=MAX_TAGS,
        description=f"Bluesky: at most {MAX_TAGS} extra hashtags (without #), each at most "
        f"{MAX_TAG_GRAPHEMES} graphemes and {MAX_TAG_BYTES} UTF-8 bytes",
    ),
    AfterValidator(_distinct),
]
Langs = Annotated[
    list[Language],
    Field(
        min_length=1,
        max_length=MAX_LANGS,
        description=f"Bluesky: at most {MAX_LANGS} BCP 47 languages of the text (default: "
        "[language])",
    ),
    AfterValidator(_distinct),
]
SpoilerText = Annotated[
    Content,
    Field(description="Mastodon: the content warning; counted in the status length"),
]


class NetworkOptions(BaseModel):
    """The network options of one channel's delivery; ``None``: the network's default."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    visibility: Visibility | None = Field(
        None, description="Mastodon: public, unlisted, private (followers only) or direct"
    )
    spoiler_text: SpoilerText | None = None
    sensitive: StrictBool | None = Field(None, description="Mastodon: mark the media sensitive")
    langs: Langs | None = None
    tags: Tags | None = None

    def given(self) -> dict[str, Any]:
        """The options set, by name (``{}`` when none)."""
        return {name: value for name, value in self if value is not None}


#: The network options' names, in the order the API documents them.
OPTION_FIELDS: tuple[str, ...] = tuple(NetworkOptions.model_fields)
#: The post fields a variant overrides.
OVERRIDE_FIELDS: tuple[str, ...] = ("content", "media_ids", "language", "parts")


class Variant(NetworkOptions):
    """One channel's variant (request, storage and answer): what it overrides of the post
    (``content``, ``media_ids``, ``language``, ``parts``: a thread's replies, replacing the
    post's; a field left out or ``null`` keeps the post's) and its network options. At least
    one field."""

    content: Content | None = None
    media_ids: MediaIds | None = None
    language: Language | None = None
    parts: Parts | None = None

    @model_validator(mode="after")
    def _something(self) -> Variant:
        if all(value is None for _, value in self):
            raise ValueError("give at least one field (content, media_ids, language or options)")
        return self

    def options(self) -> NetworkOptions:
        """The variant's network options alone."""
        return NetworkOptions(**{name: getattr(self, name) for name in OPTION_FIELDS})

    def to_item(self) -> dict[str, Any]:
        """The stored map: fields that are ``None`` are left out (every byte counts toward the
        post item's 1 KB write unit)."""
        return {name: value for name, value in self.model_dump().items() if value is not None}

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Variant:
        plain = {name: _plain(value) for name, value in item.items()}
        if plain.get("parts") is not None:
            plain["parts"] = [Part.from_item(p) for p in plain["parts"]]
        return cls.model_validate(plain)


def _plain(value: Any) -> Any:
    """DynamoDB lists come back as lists, sets never (variants store lists)."""
    return list(value) if isinstance(value, list | tuple) else value


Variants = Annotated[
    dict[Id, Variant],
    Field(
        max_length=MAX_CHANNELS_PER_POST,
        description="A text per channel: by channel id (one of channel_ids), what that channel "
        "publishes instead of the post's content, media_ids and language, and its network "
        "options",
    ),
]


@dataclass(frozen=True)
class Effective:
    """What one channel publishes: the post's fields with its variant applied. ``overrides``
    names the fields the variant set (for the ``loc`` of an error)."""

    content: str
    media_ids: tuple[str, ...]
    language: str | None
    options: NetworkOptions
    overrides: frozenset[str] = frozenset()
    #: The thread's replies after ``content`` (empty: a single post).
    parts: tuple[Part, ...] = ()


class Composed(Protocol):
    """A post, a recurring schedule's template or a request: the text fields and variants."""

    @property
    def content(self) -> str: ...

    @property
    def media_ids(self) -> Sequence[str]: ...

    @property
    def variants(self) -> Mapping[str, Variant]: ...


def effective_for(composed: Composed, channel_id: str) -> Effective:
    """The effective post of ``channel_id``: ``composed``'s ``content``, ``media_ids`` and
    ``language`` (``None`` when it has none) and ``parts`` overridden by the channel's
    variant, if any, and the variant's network options. Pure."""
    variant = composed.variants.get(channel_id)
    language = getattr(composed, "language", None)
    parts = tuple(getattr(composed, "parts", None) or ())
    if variant is None:
        return Effective(
            composed.content, tuple(composed.media_ids), language, NetworkOptions(), parts=parts
        )
    return Effective(
        content=variant.content if variant.content is not None else composed.content,
        media_ids=tuple(variant.media_ids if variant.media_ids is not None else composed.media_ids),
        language=variant.language if variant.language is not None else language,
        options=variant.options(),
        overrides=frozenset(f for f in OVERRIDE_FIELDS if getattr(variant, f) is not None),
        parts=tuple(variant.parts) if variant.parts is not None else parts,
    )


#: Where a request names an upload (its ``loc``) and the upload's id.
Named = tuple[list[Any], str]


def named_media(composed: object) -> list[Named]:
    """Every upload a post, recurring template, request or patch names, with where: its own
    ``media_ids``, each thread part's, each variant's and each variant part's (fields absent or
    None name nothing), in that order. A thread's or a variant's media is kept like the post's
    own: otherwise its upload would expire a day after it was made and the post would be
    published without it."""
    body: list[Any] = ["body"]
    named: list[Named] = []

    def add(where: list[Any], ids: Any) -> None:
        named.extend(([*where, "media_ids", i], m) for i, m in enumerate(ids or ()))

    def add_parts(where: list[Any], parts: Any) -> None:
        for j, part in enumerate(parts or ()):
            add([*where, "parts", j], part.media_ids)

    add(body, getattr(composed, "media_ids", None))
    add_parts(body, getattr(composed, "parts", None))
    for channel_id, variant in (getattr(composed, "variants", None) or {}).items():
        add([*body, "variants", channel_id], variant.media_ids)
        add_parts([*body, "variants", channel_id], variant.parts)
    return named
