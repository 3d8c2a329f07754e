"""The series arrows of ``lifecycle/series_transitions.py``: each starts only where the diagram
lets it, bumps the version, records the old series and names the occurrences' cancel reason
(pure: no moto)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from scheduled_posts.lifecycle import series_transitions as st
from scheduled_posts.lifecycle.reasons import OccurrenceCancelReason
from scheduled_posts.models.series import Series, SeriesStatus

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
EARLIER = NOW - timedelta(days=1)


def series(status: SeriesStatus = SeriesStatus.ACTIVE, **update: object) -> Series:
    base = Series(
        series_id="s1",
        owner="u1",
        status=status,
        content="hi",
        channel_ids=["c1"],
        timezone="UTC",
        cron="0 9 * * *",
        starts_at=EARLIER,
        version=3,
        created_at=EARLIER,
        updated_at=EARLIER,
        materialized_through=EARLIER,
        extend_at=EARLIER,
    )
    return base.model_copy(update=update)


ARROWS = {
    "pause": lambda s: st.pause(s, now=NOW),
    "resume": lambda s: st.resume(s, now=NOW),
    "delete": lambda s: st.delete(s, now=NOW),
    "edit": lambda s: st.edit(s, {"content": "new"}, now=NOW, retimed=False),
}


@pytest.mark.parametrize("arrow", sorted(ARROWS))
@pytest.mark.parametrize("status", list(SeriesStatus))
def test_each_owner_arrow_starts_only_where_the_table_lets_it(
    arrow: str, status: SeriesStatus
) -> None:
    allowed = {source for source, _ in st.SERIES_ARROWS[arrow]}
    if status in allowed:
        change = ARROWS[arrow](series(status))
        assert (status, change.new.status) in st.SERIES_ARROWS[arrow]
        assert change.new.version == 4
        assert change.new.superseded == series(status).snapshot()
        assert change.new.extend_at == NOW
    else:
        with pytest.raises(st.SeriesTransitionRefused) as refused:
            ARROWS[arrow](series(status))
        assert refused.value.status == 409
        assert refused.value.series_status == status


def test_reasons_name_what_cancelled_the_occurrences() -> None:
    assert st.pause(series(), now=NOW).reason == OccurrenceCancelReason.SERIES_PAUSED
    paused = series(SeriesStatus.PAUSED)
    assert st.resume(paused, now=NOW).reason == OccurrenceCancelReason.SERIES_EDITED
    assert st.delete(paused, now=NOW).reason == OccurrenceCancelReason.SERIES_DELETED


def test_resume_and_a_new_timing_materialize_from_now_never_the_past() -> None:
    resumed = st.resume(series(SeriesStatus.PAUSED), now=NOW).new
    assert resumed.materialized_through == NOW - timedelta(milliseconds=1)
    retimed = st.edit(series(), {}, now=NOW, retimed=True).new
    assert retimed.materialized_through == NOW - timedelta(milliseconds=1)
    kept = st.edit(series(), {"content": "x"}, now=NOW, retimed=False).new
    assert kept.materialized_through == EARLIER


def test_the_materializer_ends_a_series_with_no_next_extension() -> None:
    assert st.extended(series(), extend_at=NOW).status == SeriesStatus.ACTIVE
    assert st.extended(series(), extend_at=None).status == SeriesStatus.ENDED
    with pytest.raises(st.SeriesTransitionRefused):
        st.extended(series(SeriesStatus.PAUSED), extend_at=NOW)


def test_no_op_arrows_and_the_counter_rule() -> None:
    assert st.unchanged("pause", series(SeriesStatus.PAUSED))
    assert st.unchanged("delete", series(SeriesStatus.ENDED))
    assert not st.unchanged("edit", series())
    assert st.closes(series(), series(SeriesStatus.CANCELLED))
    assert not st.closes(series(SeriesStatus.ENDED), series(SeriesStatus.CANCELLED))
    assert st.save_guard(series())["version"] == 3


def test_create_starts_at_version_one() -> None:
    assert st.create(series(version=1)).version == 1
    with pytest.raises(st.SeriesTransitionRefused):
        st.create(series(version=2))
