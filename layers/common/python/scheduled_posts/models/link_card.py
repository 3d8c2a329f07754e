"""A Bluesky link card frozen on a post (decision "Bluesky link cards, frozen at scheduling
time"): what ``app.bsky.embed.external`` publishes, fixed when the post is created or edited.

Shapes:

- :class:`LinkCard` (stored on the post item under ``link_card``, answered as is)::

      {"uri": "https://...", "title": "...", "description": "...",
       "thumb": <CardThumb: a ready image upload> | null}

- :class:`LinkCardIn` (``link_card`` of a create or edit body): ``uri``, ``title``,
  ``description`` and an optional ``thumb_media_id`` (one of the caller's ready image uploads
  of at most :data:`MAX_THUMB_BYTES`); ``link_card: null`` removes the card.

Limits: lexicon ``app.bsky.embed.external#external`` (``uri`` format uri, ``title`` and
``description`` strings, ``thumb`` blob ``image/*`` ``maxSize: 1000000``); the title and
description are cut to :data:`MAX_TITLE_CHARS` / :data:`MAX_DESCRIPTION_CHARS` (our bound:
the item's size counts toward the post's 400 KB DynamoDB item limit).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictStr

from scheduled_posts.models.post_fields import MediaId, _clean_text

#: ``app.bsky.embed.external#external``: ``thumb`` blob ``maxSize: 1000000`` (bytes).
MAX_THUMB_BYTES = 1_000_000
#: Our bounds on the frozen title and description, in characters.
MAX_TITLE_CHARS = 300
MAX_DESCRIPTION_CHARS = 1000
#: Longest card URI, in characters (``url_policy.MAX_URL_LENGTH``).
MAX_URI_CHARS = 2048


def _http_uri(value: str) -> str:
    if not value.startswith(("https://", "http://")):
        raise ValueError("must be an http or https URL")
    return _clean_text(value)


CardUri = Annotated[
    StrictStr, Field(min_length=9, max_length=MAX_URI_CHARS), AfterValidator(_http_uri)
]
CardTitle = Annotated[StrictStr, Field(max_length=MAX_TITLE_CHARS), AfterValidator(_clean_text)]
CardDescription = Annotated[
    StrictStr, Field(max_length=MAX_DESCRIPTION_CHARS), AfterValidator(_clean_text)
]


class CardThumb(BaseModel):
    """The card's thumb: a ready image upload's probed facts (the fields of
    ``platforms.base.PublishedMedia``): ``content_type``, ``size`` (bytes), ``sha256`` (hex),
    ``width``/``height`` (pixels), ``object_key`` in the media bucket."""

    model_config = ConfigDict(frozen=True)

    media_id: str
    content_type: str
    size: int
    sha256: str
    width: int | None = None
    height: int | None = None
    object_key: str


class LinkCard(BaseModel):
    """The frozen card: ``uri``, ``title``, ``description`` (may be empty) and ``thumb`` (a
    ready image upload's probed facts, or ``None``)."""

    model_config = ConfigDict(frozen=True)

    uri: str
    title: str = ""
    description: str = ""
    thumb: CardThumb | None = None

    def to_item(self) -> dict[str, Any]:
        """The DynamoDB map (boto3 resource types; ``thumb`` absent when none)."""
        item: dict[str, Any] = {"uri": self.uri, "title": self.title}
        item["description"] = self.description
        if self.thumb is not None:
            item["thumb"] = {k: v for k, v in self.thumb.model_dump().items() if v is not None}
        return item

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> LinkCard:
        thumb = item.get("thumb")
        return cls(
            uri=str(item["uri"]),
            title=str(item.get("title") or ""),
            description=str(item.get("description") or ""),
            thumb=CardThumb(**{k: (int(v) if k in _INTS else v) for k, v in thumb.items()})
            if thumb
            else None,
        )


class CardThumbOut(BaseModel):
    """The thumb as the API answers it: :class:`CardThumb` without its ``object_key`` (where the
    bytes are stored is the service's business; ``GET /v1/media/{media_id}`` reads the upload)."""

    media_id: str
    content_type: str
    size: int = Field(description="Bytes")
    sha256: str
    width: int | None = Field(default=None, description="Pixels")
    height: int | None = Field(default=None, description="Pixels")


class LinkCardOut(BaseModel):
    """The frozen card as the API answers it (``docs/api.md``, "Bluesky link cards")."""

    uri: str
    title: str = ""
    description: str = ""
    thumb: CardThumbOut | None = None

    @classmethod
    def of(cls, card: LinkCard | None) -> LinkCardOut | None:
        """The answer of the stored ``card`` (None for none)."""
        if card is None:
            return None
        thumb = card.thumb.model_dump(exclude={"object_key"}) if card.thumb else None
        return cls(uri=card.uri, title=card.title, description=card.description, thumb=thumb)


_INTS = frozenset({"size", "width", "height"})


class LinkCardIn(BaseModel):
    """A card the creator gives (``link_card`` of ``POST``/``PATCH /v1/scheduled-posts``)."""

    model_config = ConfigDict(extra="forbid")

    uri: CardUri
    title: CardTitle = ""
    description: CardDescription = ""
    thumb_media_id: Annotated[
        MediaId | None,
        Field(description="A ready image upload of at most 1,000,000 bytes (the card's thumb)"),
    ] = None
