"""Which URL a post's Bluesky link card is for, and when a card is kept, given or removed
(``logic/link_cards.py``; decision "Bluesky link cards, frozen at scheduling time"). Pure: a
dict of channels, a previewer that records what it is asked."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

from scheduled_posts.logic.link_cards import ABSENT, card_url, decide_card
from scheduled_posts.models.link_card import CardThumb, LinkCard, LinkCardIn
from scheduled_posts.models.variants import Variant
from scheduled_posts.platforms.link_preview import PagePreview, PreviewError

CHANNELS = {
    "toot": SimpleNamespace(platform="mastodon"),
    "sky": SimpleNamespace(platform="bluesky"),
    "sky2": SimpleNamespace(platform="bluesky"),
}


class Channels:
    def get(self, owner: str, channel_id: str) -> Any:
        return CHANNELS.get(channel_id)


@dataclass
class Composed:
    content: str
    media_ids: list[str] = field(default_factory=list)
    variants: dict[str, Variant] = field(default_factory=dict)


def test_card_url_is_the_first_link_of_the_first_bluesky_channel_without_media() -> None:
    post = Composed(
        "Mastodon text https://a.example/1 and https://a.example/2.",
        variants={
            "sky": Variant(media_ids=["m1"]),
            "sky2": Variant(content="Sky https://b.example/x"),
        },
    )
    assert card_url("o", post, ["toot", "sky", "sky2"], Channels()) == "https://b.example/x"
    assert card_url("o", post, ["toot"], Channels()) is None  # Mastodon makes its own
    assert card_url("o", Composed("no link"), ["sky"], Channels()) is None
    # a trailing full stop is not part of the URL (the link facet's rule)
    assert card_url("o", Composed("see https://a.example/2."), ["sky"], Channels()) == (
        "https://a.example/2"
    )


@dataclass
class Previewer:
    asked: list[str] = field(default_factory=list)
    fail: bool = False

    def page(self, url: str) -> PagePreview:
        self.asked.append(url)
        if self.fail:
            raise PreviewError("timeout: no answer")
        return PagePreview("T", "D", None)

    def image(self, url: str) -> tuple[bytes, str]:
        raise AssertionError("no image in these pages")


def deps(previewer: Previewer) -> Any:
    return SimpleNamespace(previewer=previewer)


def test_decide_card_keeps_a_frozen_card_while_the_url_stays_and_fetches_a_new_one() -> None:
    frozen = LinkCard(uri="https://a.example/1", title="Old")
    previewer = Previewer()
    kept = decide_card(
        "o",
        "https://a.example/1",
        given=ABSENT,
        kept=("https://a.example/1", frozen),
        deps=deps(previewer),
    )
    assert kept.card == frozen and previewer.asked == []
    removed = decide_card(
        "o",
        "https://a.example/1",
        given=ABSENT,
        kept=("https://a.example/1", None),
        deps=deps(previewer),
    )
    assert removed.card is None and previewer.asked == []  # a removed card stays removed
    fresh = decide_card(
        "o",
        "https://a.example/2",
        given=ABSENT,
        kept=("https://a.example/1", frozen),
        deps=deps(previewer),
    )
    assert fresh.card == LinkCard(uri="https://a.example/2", title="T", description="D")
    assert previewer.asked == ["https://a.example/2"]


def test_decide_card_null_and_given_cards_never_fetch() -> None:
    previewer = Previewer()
    assert decide_card("o", "https://a.example/1", given=None, deps=deps(previewer)).card is None
    given = LinkCardIn(uri="https://c.example/", title="Mine")
    card = decide_card("o", "https://a.example/1", given=given, deps=deps(previewer)).card
    assert card == LinkCard(uri="https://c.example/", title="Mine")
    assert previewer.asked == []


def test_decide_card_a_failed_fetch_is_a_warning_not_an_error() -> None:
    decision = decide_card(
        "o", "https://a.example/1", given=ABSENT, deps=deps(Previewer(fail=True))
    )
    assert decision.card is None
    assert decision.warnings == (
        {
            "type": "link_card_unavailable",
            "url": "https://a.example/1",
            "detail": "timeout: no answer",
        },
    )


def test_link_card_item_round_trip_reads_dynamodb_numbers() -> None:
    thumb = CardThumb(
        media_id="m",
        content_type="image/png",
        size=10,
        sha256="ab",
        width=2,
        height=None,
        object_key="media/m",
    )
    card = LinkCard(uri="https://a.example/", title="T", description="", thumb=thumb)
    item = card.to_item()
    assert "height" not in item["thumb"]
    item["thumb"] = {k: Decimal(v) if isinstance(v, int) else v for k, v in item["thumb"].items()}
    assert LinkCard.from_item(item) == card
