"""Bulk imports (decision "Bulk import"): the import queue and DLQ (TLS only, redrive after
IMPORT_MAX_RECEIVES, visibility 6 x the importer's timeout), the importer's two mappings and
least privilege (imports/* read only, no KMS, no idempotency table), the API's right to keep
the file and queue the chunks."""

from __future__ import annotations

import json
from typing import Any

from scheduled_posts import sizing
from scheduled_posts.tables import IMPORT_MAX_RECEIVES
from tests.infrastructure.conftest import Synthesized
from tests.infrastructure.test_functions import _function, _policy_documents


def _queue(stage: Synthesized, construct: Any) -> dict[str, Any]:
    return dict(stage.resources[stage.logical_id(construct)]["Properties"])


def _statements(stage: Synthesized, name: str) -> list[dict[str, Any]]:
    return [s for doc in json.loads(_policy_documents(stage, name)) for s in doc["Statement"]]


def _actions(statement: dict[str, Any]) -> list[str]:
    action = statement["Action"]
    return action if isinstance(action, list) else [action]


def test_import_queue_redrives_to_its_dlq_after_import_max_receives(dev: Synthesized) -> None:
    imports = dev.stack.imports
    props = _queue(dev, imports.queue)
    assert props["RedrivePolicy"] == {
        "deadLetterTargetArn": {"Fn::GetAtt": [dev.logical_id(imports.dlq), "Arn"]},
        "maxReceiveCount": IMPORT_MAX_RECEIVES,
    }
    importer = _function(dev, "importer")["Properties"]
    assert importer["Timeout"] == sizing.DEFAULT_IMPORTER_TIMEOUT_SECONDS
    dlq = _queue(dev, imports.dlq)
    for queue in (props, dlq):  # both feed the importer
        assert queue["VisibilityTimeout"] >= 6 * importer["Timeout"]
    assert dlq["MessageRetentionPeriod"] == 14 * 86400


def test_import_queues_deny_insecure_transport(dev: Synthesized) -> None:
    imports = dev.stack.imports
    wanted = {dev.logical_id(imports.queue), dev.logical_id(imports.dlq)}
    assert wanted <= dev.queues_denying_insecure_transport()


def test_importer_maps_the_queue_and_the_dlq_with_batch_item_failures(dev: Synthesized) -> None:
    imports = dev.stack.imports
    for queue in (imports.queue, imports.dlq):
        arn = {"Fn::GetAtt": [dev.logical_id(queue), "Arn"]}
        mappings = [
            m["Properties"]
            for m in dev.of_type("AWS::Lambda::EventSourceMapping").values()
            if m["Properties"].get("EventSourceArn") == arn
        ]
        assert len(mappings) == 1
        assert mappings[0]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
        assert mappings[0]["BatchSize"] == sizing.DEFAULT_IMPORTER_BATCH_SIZE


def test_importer_role_least_privilege(dev: Synthesized) -> None:
    policies = _policy_documents(dev, "importer")
    for needed in ("dynamodb:PutItem", "dynamodb:Query", "sqs:SendMessage", "s3:GetObject"):
        assert needed in policies, needed
    for forbidden in ("s3:PutObject", "s3:DeleteObject", "kms:", "IdempotencyTable", "events:"):
        assert forbidden not in policies, forbidden
    s3_statements = [s for s in _statements(dev, "importer") if "s3:GetObject" in _actions(s)]
    assert len(s3_statements) == 1 and _actions(s3_statements[0]) == ["s3:GetObject"]
    assert "/imports/*" in json.dumps(s3_statements[0]["Resource"])


def test_api_may_keep_import_files_and_queue_chunks(dev: Synthesized) -> None:
    statements = _statements(dev, "api")
    puts = [
        s
        for s in statements
        if _actions(s) == ["s3:PutObject", "s3:GetObject", "s3:DeleteObject"]
        and "/imports/*" in json.dumps(s["Resource"])
    ]
    assert len(puts) == 1
    queue = dev.logical_id(dev.stack.imports.queue)
    sends = [s for s in statements if "sqs:SendMessage" in _actions(s)]
    assert any(queue in json.dumps(s["Resource"]) for s in sends)
    env = _function(dev, "api")["Properties"]["Environment"]["Variables"]
    assert env["IMPORT_QUEUE_URL"] == {"Ref": queue}


def test_importer_errors_alarm(dev: Synthesized) -> None:
    importer = dev.logical_id(dev.stack.imports.importer)
    alarms = [
        a["Properties"]
        for a in dev.of_type("AWS::CloudWatch::Alarm").values()
        if {"Name": "FunctionName", "Value": {"Ref": importer}}
        in a["Properties"].get("Dimensions", [])
    ]
    assert len(alarms) == 1 and alarms[0]["MetricName"] == "Errors"
