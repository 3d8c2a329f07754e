"""The feed's reading rule (``feed_order.readable``): no gap is passed before it settled."""

from __future__ import annotations

from scheduled_posts.feed_order import (
    SETTLE_SECONDS,
    Placed,
    position_floor,
    position_key,
    readable,
)

NOW = 1_800_000_000.0


def _at(position: int, age: float = 0.0, first: bool = False) -> Placed:
    return Placed(position=position, taken_at=NOW - age, first=first)


def test_readable_contiguous_after_the_cursor_all() -> None:
    assert readable([_at(11), _at(12), _at(13)], after=10, now_epoch=NOW) == 3


def test_readable_stops_at_a_gap_that_has_not_settled() -> None:
    assert readable([_at(11), _at(13), _at(14)], after=10, now_epoch=NOW) == 1
    assert readable([_at(12)], after=10, now_epoch=NOW) == 0


def test_readable_passes_a_gap_once_the_item_after_it_settled() -> None:
    items = [_at(11), _at(13, age=SETTLE_SECONDS), _at(14)]
    assert readable(items, after=10, now_epoch=NOW) == 3
    assert readable([_at(13, age=SETTLE_SECONDS - 1)], after=10, now_epoch=NOW) == 0


def test_readable_without_cursor_starts_at_a_first_or_settled_item() -> None:
    assert readable([_at(5, first=True), _at(6)], after=None, now_epoch=NOW) == 2
    assert readable([_at(5), _at(6)], after=None, now_epoch=NOW) == 0
    assert readable([_at(5, age=SETTLE_SECONDS), _at(6)], after=None, now_epoch=NOW) == 2


def test_position_floor_of_a_later_counter_is_above_an_earlier_ones_positions() -> None:
    earlier = position_floor(NOW) + 999_999  # a million events within the same second
    assert position_floor(NOW + 1) > earlier
    assert position_key(earlier) < position_key(position_floor(NOW + 1))
    assert len(position_key(position_floor(NOW))) == 20


def test_settings_bus_event_types_default_outcomes_star_all_unknown_refused() -> None:
    import pytest
    from pydantic import ValidationError

    from scheduled_posts.settings import Settings

    assert Settings().bus_event_types == {
        "post.published",
        "post.partially_published",
        "post.failed",
        "post.missed",
        "delivery.failed",
    }
    assert Settings(BUS_EVENT_TYPES="*").bus_event_types is None
    assert Settings(BUS_EVENT_TYPES="").bus_event_types == frozenset()
    with pytest.raises(ValidationError, match="not an event type"):
        Settings(BUS_EVENT_TYPES="post.published,post.exploded")
