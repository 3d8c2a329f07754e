"""The failure table as data (issue 18): ``docs/dispatch.md`` shows exactly the rows the fault
suite's lateness invariant reads, and the invariant fails a post beyond its faults' bounds."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from pathlib import Path

from scheduled_posts.settings import Settings
from tests.support.faults import REFUSED_SEND_ROWS, THROTTLE_ROWS
from tests.support.fixtures import START
from tests.support.lag_bounds import BY_KEY, UNTOUCHED_SECONDS, Timing, render_table
from tests.support.lateness import (
    Delivered,
    Touch,
    lateness_problems,
    lost_slots,
    rate_limit_wait_seconds,
    schedule_id_in,
)

DISPATCH_MD = Path(__file__).resolve().parents[2] / "docs" / "dispatch.md"
SID = "0b5f0c55-7a4e-4d3b-9f6a-2f1d3c4b5a69"
TIMING = Timing.of(Settings(), worker_timeout_seconds=60)


def _post(lag_seconds: float) -> dict[str, Delivered]:
    return {SID: Delivered(START, START + timedelta(seconds=lag_seconds))}


def test_dispatch_md_failure_table_is_the_rendered_rows() -> None:
    assert render_table() in DISPATCH_MD.read_text()


def test_lag_bounds_rows_named_by_the_harness_exist() -> None:
    named = {*THROTTLE_ROWS.values(), *REFUSED_SEND_ROWS.values()}
    named |= {"worker_crash", "crash_after_2xx", "record_redelivered", "in_progress"}
    named |= {"destination_retry", "destination_429", "sweeper_outage"}
    assert named <= set(BY_KEY)


def test_lag_bounds_default_takeover_is_lease_plus_watchdog_plus_poll() -> None:
    bound = BY_KEY["worker_crash"].bound
    assert bound is not None
    assert bound(TIMING) == 60 + 60 + TIMING.poll


def test_lateness_untouched_post_within_a_few_seconds_passes() -> None:
    totals: Counter[str] = Counter()
    assert lateness_problems(_post(UNTOUCHED_SECONDS), [], TIMING, totals) == []
    assert totals["late"] == 0


def test_lateness_refused_send_beyond_one_sweep_fails_and_names_the_fault() -> None:
    # Given a post whose sweeper send was refused once
    touch = Touch("sweeper_send_refused", "send_refused_sweeper", START, SID)
    totals: Counter[str] = Counter()
    # When it is delivered later than one sweep interval plus a few seconds
    problems = lateness_problems(_post(60 + UNTOUCHED_SECONDS + 1), [touch], TIMING, totals)
    # Then the seed fails, saying which fault explained how much
    assert totals["late"] == 1
    assert "send_refused_sweeper" in problems[0] and "+60 s" in problems[0]


def test_lateness_destination_waits_add_their_recorded_seconds() -> None:
    touches = [
        Touch("destination_retry", "answer_500", START, SID, 30.0),
        Touch("destination_429", "answer_429", START, SID, 12.0),
    ]
    totals: Counter[str] = Counter()
    assert lateness_problems(_post(42 + UNTOUCHED_SECONDS), touches, TIMING, totals) == []
    assert lateness_problems(_post(43 + UNTOUCHED_SECONDS), touches, TIMING, totals) != []


def test_lateness_fault_of_no_post_touches_only_posts_in_flight() -> None:
    # Given a throttled sweeper Query long after the post was delivered
    later = START + timedelta(hours=2)
    touch = Touch("sweeper_incomplete", "throttle_sweeper", later, None)
    totals: Counter[str] = Counter()
    # Then it explains none of that post's lag
    assert lateness_problems(_post(30), [touch], TIMING, totals) != []


def test_schedule_id_in_takes_the_first_uuid_of_a_key() -> None:
    channel = "11111111-2222-4333-8444-555555555555"
    assert schedule_id_in(f"POST#{SID}/POST") == SID
    assert schedule_id_in(f"{SID}:{channel}") == SID
    assert schedule_id_in("query:by_lease") is None


def test_rate_limited_bound_counts_requests_ahead_and_slots_lost_to_faults() -> None:
    # Given a channel limited to 2 a minute, a post due at START, 3 requests ahead of it, and
    # two of the channel's other posts whose workers crashed after taking a slot (one 10 min
    # before START, when a reservation may lie after START) and one fault 20 min before
    other = "9c131081-ffc8-4ca3-8ae3-f1e00c383a63"
    touches = [
        Touch("worker_crash", "crash_before_final_write", START - timedelta(minutes=10), other),
        Touch("record_redelivered", "record_failed", START + timedelta(seconds=30), other),
        Touch("worker_crash", "crash_mid_delivery", START - timedelta(minutes=20), other),
        Touch("sweeper_incomplete", "throttle_sweeper", START, other),
        Touch("worker_crash", "crash_mid_delivery", START, SID),
    ]
    delivered = START + timedelta(minutes=4)
    # When the slots lost ahead of it are counted
    lost = lost_slots(touches, {other}, START, delivered)
    # Then only the slot-losing faults of other posts within reach count, each one more slot
    assert lost == 2
    assert rate_limit_wait_seconds(3, 0, 2) == 60 * (2 + 1)
    assert rate_limit_wait_seconds(3, lost, 2) == 60 * (3 + 1)
