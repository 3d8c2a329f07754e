"""Parsing of ``python -X importtime`` output (``bench/cold_start.py``)."""

from __future__ import annotations

from bench.cold_start import parse_importtime

SAMPLE = """\
import time: self [us] | cumulative | imported package
import time:       100 |        100 | _io
import time:        50 |         50 |   encodings.aliases
import time:       200 |        250 | encodings
import time:       300 |       1300 |     scheduled_posts.settings
import time:       400 |       2000 | functions.api.handler
"""


def test_parse_importtime_sums_top_level_cumulative_times() -> None:
    parsed = parse_importtime(SAMPLE, "functions.api.handler")
    assert parsed["total_ms"] == (100 + 250 + 2000) / 1000


def test_parse_importtime_reports_the_module_itself() -> None:
    parsed = parse_importtime(SAMPLE, "functions.api.handler")
    assert parsed["module_ms"] == 2.0
    assert parsed["modules"] == 5
