"""The one-image post's prices and per-post arithmetic (``bench/media_cost.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from bench.media_cost import GB, media_cost, s3_requests
from bench.prices import s3_request_cost


def test_s3_request_tiers() -> None:
    million = 1e6
    assert s3_request_cost("PutObject", million) == pytest.approx(5.0)
    assert s3_request_cost("PostObject", million) == pytest.approx(5.0)
    assert s3_request_cost("GetObject", million) == pytest.approx(0.4)
    assert s3_request_cost("HeadObject", million) == pytest.approx(0.4)
    assert s3_request_cost("DeleteObjectTagging", million) == pytest.approx(0.4)
    assert s3_request_cost("DeleteObject", million) == 0.0


def _model(wu: float, ru: float, total: float) -> dict[str, Any]:
    usd = {"api_gateway": 1.0, "lambda": 2.0, "dynamodb": 3.0, "outbox": 0.0, "sqs": 0.0,
           "scheduler": 0.0, "total": total}  # fmt: skip
    return {
        "write_units_per_post": wu,
        "outbox_write_units_per_post": 0.0,
        "read_units_per_post": ru,
        "per_post": {"relay_read_units": 0.0},
        "usd_per_million_posts": usd,
        "fixed_usd_per_month": 0.0,
    }


def _row(phase: str, service: str, op: str, calls: int, wu: float = 0, ru: float = 0) -> Any:
    return {"phase": phase, "service": service, "operation": op, "calls": calls,
            "billed_requests": calls, "write_units": wu, "read_units": ru}  # fmt: skip


def test_media_cost_per_post_arithmetic() -> None:
    posts = 2
    rows = [
        _row("setup", "s3", "CreateBucket", 1),
        _row("media-create", "dynamodb", "PutItem", 2, wu=2),
        _row("upload", "s3", "PutObject", 2),
        _row("media-complete", "s3", "HeadObject", 2),
        _row("media-complete", "s3", "GetObject", 2),
        _row("media-complete", "dynamodb", "UpdateItem", 2, wu=2, ru=2),
    ]
    stats = {"image_bytes": GB // 1000, "probe_median_s": 0.0}
    out = media_cost(
        _model(8, 2, 6.0), _model(9, 2.5, 6.0), rows, posts, stats,
        lambda_cost=lambda n, s: n * 1e-6, call_seconds=0.01, overhead_seconds=0.0,
    )  # fmt: skip
    media = out["media"]
    assert media["s3_requests_per_post"] == {"GetObject": 1.0, "HeadObject": 1.0, "PutObject": 1.0}
    # 9 - 8 in the post's phases plus 1 + 1 of the upload's own.
    assert media["extra_write_units_over_text"] == 3.0
    assert media["extra_read_units_over_text"] == 1.5
    extra = media["extra_usd_per_million_posts"]
    assert extra["api_gateway"] == 2.0  # create + complete
    assert extra["s3_requests"] == pytest.approx(5.0 + 0.4 + 0.4, abs=0.01)
    assert extra["s3_storage"] == pytest.approx(23.0, abs=0.01)  # a GB-month per 1,000 posts
    assert out["usd_per_million_posts"]["total"] == pytest.approx(
        6.0 + 2.0 + 2.0 + 0.625 * 2 + 0.125 * 1 + 5.8 + 23.0, abs=0.02
    )


def test_s3_requests_leave_setup_out() -> None:
    assert s3_requests([_row("setup", "s3", "CreateBucket", 1)], 1) == {}


def test_media_section_renders_the_run_figures() -> None:
    from bench.render import media_section

    stats = {"image_bytes": 2_000_000, "image_pixels": [1200, 675], "probe_first_s": 0.02,
             "probe_median_s": 0.0125, "probe_max_s": 0.03, "uploads": 1}  # fmt: skip
    rows = [_row("upload", "s3", "PutObject", 1), _row("media-complete", "s3", "GetObject", 1)]
    out = media_cost(
        _model(8, 2, 6.0), _model(9, 2.5, 6.0), rows, 1, stats,
        lambda_cost=lambda n, s: 0.0, call_seconds=0.01, overhead_seconds=0.0,
    )  # fmt: skip
    text = media_section(out["media"])
    assert "Measured at 1 posts" in text
    assert "GetObject 1, PutObject 1" in text
    assert "12.5 ms (20.0 ms)" in text
    assert "this machine's CPU" in text
