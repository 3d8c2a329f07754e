"""The capacity model's "CDK defaults" rows (``bench/capacity_sim.CDK_DEFAULTS``) are the
synthesized templates' settings, so ``docs/capacity.md``'s figure for the CDK app's defaults is
about what the app deploys (issue 16)."""

from __future__ import annotations

from typing import Any

import pytest

from bench.capacity_sim import CDK_DEFAULTS, LIMITS
from tests.infrastructure.conftest import Synthesized


def _worker_mapping(stage: Synthesized) -> dict[str, Any]:
    worker = {"Ref": stage.logical_id(stage.stack.dispatch.worker)}
    (mapping,) = [
        m["Properties"]
        for m in stage.of_type("AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["FunctionName"] == worker
    ]
    return mapping


def _warm_write_units(stage: Synthesized, logical_id: str) -> float:
    warm = stage.resources[logical_id]["Properties"].get("WarmThroughput")
    if warm is None:  # a new on-demand table
        return LIMITS["new_table_write_units_per_s"].value
    return float(warm["WriteUnitsPerSecond"])


@pytest.mark.parametrize("name", ["dev", "prod"])
def test_capacity_model_cdk_defaults_match_the_template(
    stages: dict[str, Synthesized], name: str
) -> None:
    stage, model = stages[name], CDK_DEFAULTS[name]
    mapping = _worker_mapping(stage)
    env = stage.resources[stage.logical_id(stage.stack.dispatch.worker)]["Properties"][
        "Environment"
    ]["Variables"]
    assert mapping["ScalingConfig"]["MaximumConcurrency"] == model.max_concurrency
    assert mapping["BatchSize"] == model.batch_size
    assert int(env["WRITE_SHARD_COUNT"]) == model.write_shards
    assert int(env["LOOKAHEAD_SECONDS"]) == model.lookahead_s
    for table in ("PostsTable", "IdempotencyTable"):
        assert _warm_write_units(stage, table) == model.table_write_units_per_s


def test_prod_posts_and_idempotency_tables_are_warm_due_index_is_not(prod: Synthesized) -> None:
    units = prod.config.table_warm_write_units_per_second
    for table in ("PostsTable", "IdempotencyTable"):
        warm = prod.resources[table]["Properties"]["WarmThroughput"]
        assert warm == {"WriteUnitsPerSecond": units}
    assert "WarmThroughput" not in prod.resources["DueIndexTable"]["Properties"]
