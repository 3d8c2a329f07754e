"""The capacity model's "CDK defaults" rows (``bench/capacity_sim.CDK_DEFAULTS``) are the
synthesized templates' settings, so ``docs/capacity.md``'s figure for the CDK app's defaults is
about what the app deploys (issue 16)."""

from __future__ import annotations

from typing import Any

import pytest

from bench.capacity_sim import CDK_DEFAULTS, LIMITS, SCALED
from tests.infrastructure.conftest import Synthesized


def _worker_mappings(stage: Synthesized) -> list[dict[str, Any]]:
    worker = {"Ref": stage.logical_id(stage.stack.dispatch.worker)}
    return [
        m["Properties"]
        for m in stage.of_type("AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["FunctionName"] == worker
    ]


def _worker_mapping(stage: Synthesized) -> dict[str, Any]:
    (mapping,) = _worker_mappings(stage)
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
    assert int(env["SWEEP_PARALLELISM"]) == model.sweeper_parallelism
    assert "DISPATCH_QUEUE_URLS" not in env  # one dispatch queue
    sweeper = stage.resources[stage.logical_id(stage.stack.dispatch.sweeper)]
    assert sweeper["Properties"]["MemorySize"] == model.sweeper_memory_mb
    for table in ("PostsTable", "IdempotencyTable"):
        assert _warm_write_units(stage, table) == model.table_write_units_per_s


def test_prod_posts_and_idempotency_tables_are_warm_due_index_is_not(prod: Synthesized) -> None:
    units = prod.config.table_warm_write_units_per_second
    for table in ("PostsTable", "IdempotencyTable"):
        warm = prod.resources[table]["Properties"]["WarmThroughput"]
        assert warm == {"WriteUnitsPerSecond": units}
    assert "WarmThroughput" not in prod.resources["DueIndexTable"]["Properties"]


def test_million_settings_synthesize_what_the_capacity_model_assumes(million: Synthesized) -> None:
    # Given prod with MILLION_A_MINUTE_OVERRIDES, Then the template has SCALED's levers: one
    # mapping per dispatch queue, each with its maximum concurrency and batch size ...
    queues = million.of_type("AWS::SQS::Queue")
    dispatch = [lid for lid in queues if lid == "DispatchQueue" or lid.startswith("DispatchQueue")]
    dispatch = [lid for lid in dispatch if not lid.endswith("DLQ")]
    assert sorted(dispatch) == sorted(
        ["DispatchQueue"] + [f"DispatchQueue{n}" for n in range(2, SCALED.dispatch_queues + 1)]
    )
    mappings = _worker_mappings(million)
    assert len(mappings) == SCALED.dispatch_queues
    assert {m["ScalingConfig"]["MaximumConcurrency"] for m in mappings} == {SCALED.max_concurrency}
    assert {m["BatchSize"] for m in mappings} == {SCALED.batch_size}
    assert sorted(m["EventSourceArn"]["Fn::GetAtt"][0] for m in mappings) == sorted(dispatch)
    # ... every dispatch queue dead-letters to the one DLQ after MAX_RECEIVE_COUNT receives ...
    for lid in dispatch:
        redrive = queues[lid]["Properties"]["RedrivePolicy"]
        assert redrive["deadLetterTargetArn"] == {"Fn::GetAtt": ["DispatchDLQ", "Arn"]}
        assert redrive["maxReceiveCount"] == million.config.settings.MAX_RECEIVE_COUNT
    # ... the warm tables, shards and sweep threads ...
    for table in ("PostsTable", "IdempotencyTable"):
        assert _warm_write_units(million, table) == SCALED.table_write_units_per_s
    worker = million.resources[million.logical_id(million.stack.dispatch.worker)]
    env = worker["Properties"]["Environment"]["Variables"]
    assert int(env["WRITE_SHARD_COUNT"]) == SCALED.write_shards
    assert int(env["SWEEP_PARALLELISM"]) == SCALED.sweeper_parallelism
    sweeper = million.resources[million.logical_id(million.stack.dispatch.sweeper)]
    assert sweeper["Properties"]["MemorySize"] == SCALED.sweeper_memory_mb
    # ... and every sender is told every queue, in order, the first being DISPATCH_QUEUE_URL.
    for function in ("sweeper", "worker", "watchdog", "reconciler"):
        lid = million.logical_id(getattr(million.stack.dispatch, function))
        variables = million.resources[lid]["Properties"]["Environment"]["Variables"]
        listed = variables["DISPATCH_QUEUE_URLS"]["Fn::Join"][1]
        assert [ref["Ref"] for ref in listed if isinstance(ref, dict)] == sorted(
            dispatch, key=lambda x: int(x.removeprefix("DispatchQueue") or 1)
        )
        assert variables["DISPATCH_QUEUE_URL"] == {"Ref": "DispatchQueue"}


def test_million_settings_let_every_sender_send_to_every_dispatch_queue(
    million: Synthesized,
) -> None:
    dispatch = [f"DispatchQueue{n}" for n in range(2, SCALED.dispatch_queues + 1)]
    dispatch.append("DispatchQueue")
    senders = [million.stack.dispatch.sweeper, million.stack.dispatch.worker,
               million.stack.dispatch.watchdog, million.stack.dispatch.reconciler,
               million.stack.api.function]  # fmt: skip
    for sender in senders:
        role = million.stack.resolve(sender.role.node.default_child.logical_id)
        allowed: set[str] = set()
        for policy in million.of_type("AWS::IAM::Policy").values():
            if {"Ref": role} not in policy["Properties"]["Roles"]:
                continue
            for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
                actions = statement["Action"]
                actions = [actions] if isinstance(actions, str) else actions
                if "sqs:SendMessage" in actions:
                    resources = statement["Resource"]
                    resources = resources if isinstance(resources, list) else [resources]
                    allowed |= {r["Fn::GetAtt"][0] for r in resources if "Fn::GetAtt" in r}
        assert set(dispatch) <= allowed, sender.node.id
