"""Lambdas: runtime, architecture, tracing, logs, environment, and least privilege."""

from __future__ import annotations

import json
from typing import Any

import pytest

from infra.config import SERVICE_SETTINGS
from scheduled_posts.settings import Settings
from tests.infrastructure.conftest import Synthesized

NAMES = (
    "api",
    "sweeper",
    "worker",
    "watchdog",
    "reconciler",
    "materializer",
    "verifier",
    "relay",
    "notifier",
    "importer",
)
POWERTOOLS_NAMES = {
    "POWERTOOLS_SERVICE_NAME",
    "POWERTOOLS_METRICS_NAMESPACE",
    "POWERTOOLS_TRACE_DISABLED",
}


def _function(stage: Synthesized, name: str) -> dict[str, Any]:
    dispatch = stage.stack.dispatch
    construct = {
        "api": stage.stack.api.function,
        "sweeper": dispatch.sweeper,
        "worker": dispatch.worker,
        "watchdog": dispatch.watchdog,
        "reconciler": dispatch.reconciler,
        "materializer": dispatch.materializer,
        "verifier": dispatch.verifier,
        "relay": stage.stack.outbox.relay,
        "notifier": stage.stack.notify.notifier,
        "importer": stage.stack.imports.importer,
    }[name]
    resource: dict[str, Any] = stage.resources[stage.logical_id(construct)]
    return resource


def _policy_documents(stage: Synthesized, name: str) -> str:
    """Every inline policy attached to the function's role, as one JSON string."""
    role = _function(stage, name)["Properties"]["Role"]["Fn::GetAtt"][0]
    docs = [
        policy["Properties"]["PolicyDocument"]
        for policy in stage.of_type("AWS::IAM::Policy").values()
        if {"Ref": role} in policy["Properties"]["Roles"]
    ]
    docs += stage.resources[role]["Properties"].get("Policies", [])
    return json.dumps(docs)


def test_functions_exactly_the_six_lambdas(dev: Synthesized) -> None:
    # Plus only CDK's BucketDeployment handler, which uploads the content calendar (issue 15):
    # no other custom-resource or log-retention helper Lambdas are generated.
    helpers = [k for k in dev.of_type("AWS::Lambda::Function") if k.startswith("CustomCDKBucket")]
    assert len(helpers) == 1
    assert len(dev.of_type("AWS::Lambda::Function")) == len(NAMES) + len(helpers)


@pytest.mark.parametrize("name", NAMES)
def test_function_arm64_python(dev: Synthesized, name: str) -> None:
    props = _function(dev, name)["Properties"]
    assert props["Architectures"] == ["arm64"]
    assert props["Runtime"] == f"python{dev.config.python_version}"
    assert int(dev.config.python_version.split(".")[1]) >= 12
    assert props["Handler"] == "handler.lambda_handler"
    assert len(props["Layers"]) == 1


@pytest.mark.parametrize("name", NAMES)
def test_function_traced_in_prod_only_with_the_tracer_switched_to_match(
    dev: Synthesized, prod: Synthesized, name: str
) -> None:
    # Tracing is one stage setting: the X-Ray mode and Powertools' Tracer switch together.
    assert (dev.config.tracing_enabled, prod.config.tracing_enabled) == (False, True)
    dev_props = _function(dev, name)["Properties"]
    prod_props = _function(prod, name)["Properties"]
    assert "TracingConfig" not in dev_props
    assert dev_props["Environment"]["Variables"]["POWERTOOLS_TRACE_DISABLED"] == "true"
    assert prod_props["TracingConfig"] == {"Mode": "Active"}
    assert prod_props["Environment"]["Variables"]["POWERTOOLS_TRACE_DISABLED"] == "false"


@pytest.mark.parametrize("name", NAMES)
def test_function_json_logs_with_retention(dev: Synthesized, name: str) -> None:
    logging = _function(dev, name)["Properties"]["LoggingConfig"]
    assert logging["LogFormat"] == "JSON"
    log_group = dev.resources[logging["LogGroup"]["Ref"]]
    assert log_group["Properties"]["RetentionInDays"] == dev.config.log_retention_days


@pytest.mark.parametrize("name", NAMES)
def test_function_env_names_are_settings_fields(dev: Synthesized, name: str) -> None:
    names = set(_function(dev, name)["Properties"]["Environment"]["Variables"])
    assert names - POWERTOOLS_NAMES <= set(Settings.model_fields)


@pytest.mark.parametrize("name", NAMES)
def test_function_env_sets_every_service_setting(dev: Synthesized, name: str) -> None:
    env = _function(dev, name)["Properties"]["Environment"]["Variables"]
    expected = dev.config.service_environment()
    assert {k: env[k] for k in SERVICE_SETTINGS} == expected
    assert env["POWERTOOLS_SERVICE_NAME"] == dev.config.service_name
    assert env["POWERTOOLS_METRICS_NAMESPACE"] == dev.config.metrics_namespace


def test_function_env_values_parse_as_settings(prod: Synthesized) -> None:
    env = _function(prod, "worker")["Properties"]["Environment"]["Variables"]
    plain = {k: v for k, v in env.items() if isinstance(v, str)}
    parsed = Settings.from_env(plain)
    assert parsed.WRITE_SHARD_COUNT == prod.config.settings.WRITE_SHARD_COUNT == 16
    assert parsed.LOOKAHEAD_SECONDS == prod.config.settings.LOOKAHEAD_SECONDS


def test_api_env_points_at_cursor_secret_and_queue(dev: Synthesized) -> None:
    env = _function(dev, "api")["Properties"]["Environment"]["Variables"]
    assert env["CURSOR_SECRET_ARN"] == {"Ref": dev.logical_id(dev.stack.api.cursor_secret)}
    assert env["DISPATCH_QUEUE_URL"] == {"Ref": "DispatchQueue"}
    assert "CURSOR_SECRET" not in env


def test_sweeper_env_has_no_posts_table(dev: Synthesized) -> None:
    env = _function(dev, "sweeper")["Properties"]["Environment"]["Variables"]
    assert "POSTS_TABLE_NAME" not in env
    assert env["DUE_INDEX_TABLE_NAME"] == {"Ref": "DueIndexTable"}


def test_sweeper_role_cannot_touch_posts_table(dev: Synthesized) -> None:
    policies = _policy_documents(dev, "sweeper")
    assert "DueIndexTable" in policies  # the search below looks at the right documents
    assert "PostsTable" not in policies
    assert "IdempotencyTable" not in policies


def test_sweeper_role_sends_but_cannot_consume(dev: Synthesized) -> None:
    policies = _policy_documents(dev, "sweeper")
    assert "sqs:SendMessage" in policies
    assert "sqs:ReceiveMessage" not in policies
    assert "sqs:DeleteMessage" not in policies


def test_worker_role_reads_due_index_without_writing(dev: Synthesized) -> None:
    role = _function(dev, "worker")["Properties"]["Role"]["Fn::GetAtt"][0]
    statements = [
        s
        for p in dev.of_type("AWS::IAM::Policy").values()
        if {"Ref": role} in p["Properties"]["Roles"]
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]
    on_due = [s for s in statements if "DueIndexTable" in json.dumps(s["Resource"])]
    actions = {a for s in on_due for a in s["Action"]}
    assert "dynamodb:Query" in actions
    assert not actions & {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"}


@pytest.mark.parametrize("name", ["watchdog", "reconciler"])
def test_safety_net_roles_have_no_idempotency_access(dev: Synthesized, name: str) -> None:
    policies = _policy_documents(dev, name)
    assert "PostsTable" in policies
    assert "IdempotencyTable" not in policies


def test_materializer_role_has_no_queue_or_idempotency_access(dev: Synthesized) -> None:
    policies = _policy_documents(dev, "materializer")
    assert "PostsTable" in policies
    assert "DueIndexTable" in policies
    assert "IdempotencyTable" not in policies
    assert "sqs:" not in policies


def test_verifier_role_may_query_the_due_index_and_read_update_posts_only(
    dev: Synthesized,
) -> None:
    due = {a for s in _statements_on(dev, "verifier", "DueIndexTable") for a in _actions(s)}
    posts = {a for s in _statements_on(dev, "verifier", "PostsTable") for a in _actions(s)}
    assert due == {"dynamodb:Query"}
    assert posts == {"dynamodb:BatchGetItem", "dynamodb:UpdateItem"}
    policies = _policy_documents(dev, "verifier")
    assert "IdempotencyTable" not in policies
    assert "sqs:" not in policies
    assert "kms:" not in policies


def _actions(statement: dict[str, Any]) -> set[str]:
    actions = statement["Action"]
    return {actions} if isinstance(actions, str) else set(actions)


def _statements_on(stage: Synthesized, name: str, table: str) -> list[dict]:
    role = _function(stage, name)["Properties"]["Role"]["Fn::GetAtt"][0]
    return [
        s
        for p in stage.of_type("AWS::IAM::Policy").values()
        if {"Ref": role} in p["Properties"]["Roles"]
        for s in p["Properties"]["PolicyDocument"]["Statement"]
        if table in json.dumps(s["Resource"])
    ]


@pytest.mark.parametrize("table", ["PostsTable", "DueIndexTable"])
def test_materializer_role_has_no_scan_or_batch_on_tables(dev: Synthesized, table: str) -> None:
    statements = _statements_on(dev, "materializer", table)
    actions = {
        a
        for s in statements
        for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
    }
    assert {"dynamodb:Query", "dynamodb:PutItem", "dynamodb:ConditionCheckItem"} <= actions
    assert not {a for a in actions if "Scan" in a or "Batch" in a or a.endswith("*")}
