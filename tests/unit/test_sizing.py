"""The worker sizing rules (scheduled_posts.sizing), shared by the deployed config and local/."""

from __future__ import annotations

import pytest

from infra.config import load_stage_config
from local.config import LocalConfig
from scheduled_posts import sizing
from scheduled_posts.settings import Settings


def test_visibility_timeout_is_six_times_the_worker_timeout() -> None:
    assert sizing.visibility_timeout_seconds(150) == 900


def test_local_defaults_pass_the_deployed_sizing_rules() -> None:
    config = LocalConfig()

    errors = sizing.worker_sizing_errors(
        config.worker_timeout_seconds, config.worker_batch_size, Settings()
    )

    assert errors == []


def test_local_defaults_equal_the_deployed_worker_defaults() -> None:
    deployed, local = load_stage_config("dev"), LocalConfig()

    assert (local.worker_timeout_seconds, local.worker_batch_size) == (
        deployed.worker_timeout_seconds,
        deployed.worker_batch_size,
    )


def test_sizing_old_local_defaults_timeout_too_short_for_batch_refused() -> None:
    errors = sizing.worker_sizing_errors(60, 10, Settings())

    assert errors == [
        "worker_timeout_seconds (60) must be >= 2 x worker_batch_size (10) x one post's"
        " processing (12.0 s)"
    ]


def test_sizing_lease_not_longer_than_one_post_refused() -> None:
    errors = sizing.worker_sizing_errors(150, 5, Settings(LEASE_SECONDS=12))

    assert errors == ["LEASE_SECONDS must exceed one post's processing (12.0 s)"]


@pytest.mark.parametrize("batch_size", [0, 11])
def test_sizing_batch_size_outside_sqs_range_refused(batch_size: int) -> None:
    errors = sizing.worker_sizing_errors(900, batch_size, Settings())

    assert any("worker_batch_size" in error for error in errors)


def test_sizing_visibility_over_sqs_maximum_refused() -> None:
    errors = sizing.worker_sizing_errors(7201, 1, Settings())

    assert errors == ["worker_timeout_seconds x 6 exceeds the SQS visibility maximum (43200 s)"]
