"""The capacity model's invariants (``bench/capacity_sim.py``): small sizes, no timing."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.capacity_sim import (
    BASELINE,
    LIMITS,
    SCALED,
    Assumptions,
    Config,
    _SecondBins,
    simulate,
)

SMALL = Config(write_shards=4, sweeper_parallelism=2)


def test_simulate_every_post_delivered_exactly_once() -> None:
    result = simulate(2000, SMALL, seed=3)
    assert result.delivered == 2000


def test_simulate_no_post_delivered_before_publish_at() -> None:
    result = simulate(2000, SMALL, seed=3)
    assert result.early == 0
    assert result.p50 >= 0


def test_simulate_same_seed_same_result() -> None:
    assert simulate(500, SMALL, seed=7).row() == simulate(500, SMALL, seed=7).row()


def test_simulate_lookahead_shorter_than_sweep_period_adds_lag() -> None:
    # Without lookahead cover, posts are only seen by a sweep after they fell due.
    short = simulate(500, replace(SMALL, lookahead_s=5), seed=1)
    long = simulate(500, replace(SMALL, lookahead_s=600), seed=1)
    assert short.p50 > long.p50 + 5


def test_simulate_slow_table_makes_lag_grow() -> None:
    slow = simulate(3000, replace(SMALL, table_write_units_per_s=200.0), seed=1)
    fast = simulate(3000, replace(SMALL, table_write_units_per_s=40_000.0), seed=1)
    assert slow.p99 > fast.p99


def test_simulate_feed_writes_share_the_posts_table_and_add_lag_when_it_binds() -> None:
    # Given a table whose write throughput binds; when the relay's feed writes are left out
    slow = replace(SMALL, table_write_units_per_s=300.0)
    no_feed = Assumptions(feed_write_units_before_send=0.0, feed_write_units_after_send=0.0)
    with_feed = simulate(3000, slow, seed=1)
    without = simulate(3000, slow, assumptions=no_feed, seed=1)
    # Then the posts wait longer with the feed items than without them
    assert with_feed.table_wait_s_total > without.table_wait_s_total
    assert with_feed.p99 > without.p99


def test_simulate_concurrency_never_exceeds_maximum_concurrency() -> None:
    result = simulate(5000, replace(SMALL, max_concurrency=20), seed=1)
    assert result.peak_concurrency <= 20


def test_simulate_lookahead_over_sqs_delay_limit_raises() -> None:
    with pytest.raises(ValueError, match="900"):
        simulate(10, replace(SMALL, lookahead_s=901))


def test_second_bins_full_second_pushes_request_to_next_second() -> None:
    bins = _SecondBins(units_per_s=10)
    assert bins.take(5.2, 10) == 5.2
    assert bins.take(5.5, 1) == 6.0


def test_limits_every_limit_names_its_source() -> None:
    assert all(limit.source for limit in LIMITS.values())


def test_simulate_a_short_sweep_sends_every_entry_in_its_first_run() -> None:
    # 10,000 posts over pages split per queue: a sweep of a few seconds is never cut short
    # (every entry of a page is planned, whatever the page's size over the queues and calls)
    for queues in (1, 3, 10):
        result = simulate(10_000, replace(BASELINE, dispatch_queues=queues))
        assert result.longest_sweep_s < 10
        assert result.notes == []


def test_simulate_a_slow_sweeper_is_stopped_at_its_timeout_and_later_runs_send_the_rest() -> None:
    # Given a sweeper with a small share of a vCPU (128 MB) and 100,000 posts
    slow = replace(SCALED, sweeper_memory_mb=128)
    result = simulate(100_000, slow)
    # Then runs stop at the timeout, and every post is still delivered once, none early
    assert any("stopped by the 50 s timeout" in n for n in result.notes)
    assert result.delivered == 100_000 and result.early == 0
    assert result.longest_sweep_s <= 50.0
