"""Notifications (issue 14): the notify queue and DLQ (TLS only, redrive after
NOTIFY_MAX_ATTEMPTS), the notifier's event source and least privilege, the relay's fan-out
grants, the alarms and the dashboard's notification-lag widget."""

from __future__ import annotations

import json
from typing import Any

from scheduled_posts import sizing
from tests.infrastructure.conftest import Synthesized
from tests.infrastructure.test_functions import _function, _policy_documents


def _queue(stage: Synthesized, construct: Any) -> dict[str, Any]:
    return dict(stage.resources[stage.logical_id(construct)]["Properties"])


def test_notify_queue_redrives_to_its_dlq_after_notify_max_attempts(dev: Synthesized) -> None:
    notify = dev.stack.notify
    props = _queue(dev, notify.queue)
    assert props["RedrivePolicy"] == {
        "deadLetterTargetArn": {"Fn::GetAtt": [dev.logical_id(notify.dlq), "Arn"]},
        "maxReceiveCount": dev.config.settings.NOTIFY_MAX_ATTEMPTS,
    }
    notifier = _function(dev, "notifier")["Properties"]
    assert props["VisibilityTimeout"] >= 6 * notifier["Timeout"]
    assert notifier["Timeout"] == sizing.DEFAULT_NOTIFIER_TIMEOUT_SECONDS
    assert _queue(dev, notify.dlq)["MessageRetentionPeriod"] == 14 * 86400


def test_notify_queues_deny_insecure_transport(dev: Synthesized) -> None:
    notify = dev.stack.notify
    wanted = {dev.logical_id(notify.queue), dev.logical_id(notify.dlq)}
    assert wanted <= dev.queues_denying_insecure_transport()


def test_notifier_mapping_reports_batch_item_failures(dev: Synthesized) -> None:
    queue = dev.logical_id(dev.stack.notify.queue)
    mappings = [
        m["Properties"]
        for m in dev.of_type("AWS::Lambda::EventSourceMapping").values()
        if m["Properties"].get("EventSourceArn") == {"Fn::GetAtt": [queue, "Arn"]}
    ]
    assert len(mappings) == 1
    assert mappings[0]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mappings[0]["BatchSize"] == sizing.DEFAULT_NOTIFIER_BATCH_SIZE


def test_notifier_role_least_privilege(dev: Synthesized) -> None:
    policies = _policy_documents(dev, "notifier")
    assert "dynamodb:GetItem" in policies
    assert "sqs:ChangeMessageVisibility" in policies
    assert "sqs:SendMessage" in policies
    for forbidden in (
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:DeleteItem",
        "dynamodb:Query",
        "IdempotencyTable",
        "DueIndexTable",
        "kms:Decrypt",
        "events:PutEvents",
    ):
        assert forbidden not in policies, forbidden
    sends = [
        s
        for doc in json.loads(policies)
        for s in doc["Statement"]
        if "sqs:SendMessage" in (s["Action"] if isinstance(s["Action"], list) else [s["Action"]])
    ]
    dlq = dev.logical_id(dev.stack.notify.dlq)
    assert [s["Resource"] for s in sends] == [{"Fn::GetAtt": [dlq, "Arn"]}]


def test_relay_may_query_endpoints_and_send_to_the_notify_queue_only(dev: Synthesized) -> None:
    policies = _policy_documents(dev, "relay")
    assert "dynamodb:Query" in policies
    queue = dev.logical_id(dev.stack.notify.queue)
    sends = [
        s
        for doc in json.loads(policies)
        for s in doc["Statement"]
        if "sqs:SendMessage" in (s["Action"] if isinstance(s["Action"], list) else [s["Action"]])
    ]
    # The notify queue, and the relay's own on-failure DLQ (the event source mapping's).
    relay_dlq = dev.logical_id(dev.stack.outbox.dlq)
    assert sorted(s["Resource"]["Fn::GetAtt"][0] for s in sends) == sorted([queue, relay_dlq])
    env = _function(dev, "relay")["Properties"]["Environment"]["Variables"]
    assert env["NOTIFY_QUEUE_URL"] == {"Ref": queue}


def test_notifier_env_names_the_queues_and_max_attempts(dev: Synthesized) -> None:
    env = _function(dev, "notifier")["Properties"]["Environment"]["Variables"]
    assert env["NOTIFY_QUEUE_URL"] == {"Ref": dev.logical_id(dev.stack.notify.queue)}
    assert env["NOTIFY_DLQ_URL"] == {"Ref": dev.logical_id(dev.stack.notify.dlq)}
    assert env["NOTIFY_MAX_ATTEMPTS"] == str(dev.config.settings.NOTIFY_MAX_ATTEMPTS)


def test_notify_alarms_and_lag_widget(dev: Synthesized) -> None:
    alarms = dev.stack.monitoring.alarms
    assert {"NotifierErrorsAlarm", "NotifyDlqAlarm"} <= set(alarms)
    depth = dev.resources[dev.logical_id(alarms["NotifyDlqAlarm"])]["Properties"]
    assert depth["MetricName"] == "ApproximateNumberOfMessagesVisible"
    (dashboard,) = dev.of_type("AWS::CloudWatch::Dashboard").values()
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    assert "NotificationLagSeconds" in body
