"""DynamoDB sizing rules of ``bench/units.py`` (DynamoDB Developer Guide, read/write operations)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from bench.units import item_size, query_read_units, read_units, value_size, write_units


def test_item_size_strings_counts_names_and_utf8_values() -> None:
    assert item_size({"pk": "é", "sk": "POST"}) == 2 + 2 + 2 + 4


def test_value_size_number_one_byte_per_two_digits_plus_one() -> None:
    assert value_size(Decimal("12345")) == 4
    assert value_size(100) == 2


def test_value_size_low_level_and_resource_forms_agree() -> None:
    resource = {"a": ["x", 1], "b": None}
    low = {"M": {"a": {"L": [{"S": "x"}, {"N": "1"}]}, "b": {"NULL": True}}}
    assert value_size(resource) == value_size(low)


def test_write_units_exactly_one_kilobyte_is_one_unit() -> None:
    assert write_units(1024) == 1


def test_write_units_one_byte_over_a_kilobyte_is_two_units() -> None:
    assert write_units(1025) == 2


def test_write_units_update_charged_on_larger_of_before_and_after() -> None:
    assert write_units(3000, 100) == 3


def test_write_units_in_transaction_doubled() -> None:
    assert write_units(500, transactional=True) == 2


def test_read_units_eventually_consistent_is_half() -> None:
    assert read_units(4096, consistent=False) == 0.5
    assert read_units(4097, consistent=True) == 2


def test_query_read_units_sums_items_before_rounding() -> None:
    # 40 items of 100 bytes: 4,000 bytes in one page is one unit, not forty.
    assert query_read_units([100] * 40, consistent=True) == 1


def test_value_size_unknown_type_raises() -> None:
    with pytest.raises(TypeError):
        value_size(object())


def test_poller_alternative_scan_reads_grow_with_pending_posts() -> None:
    from bench import cost

    small = cost.poller_alternative(1000.0, scan=True)
    original = cost.PENDING_POSTS
    cost.PENDING_POSTS = original * 10
    try:
        big = cost.poller_alternative(1000.0, scan=True)
    finally:
        cost.PENDING_POSTS = original
    assert big["read_units_per_poll"] > 9 * small["read_units_per_poll"]
