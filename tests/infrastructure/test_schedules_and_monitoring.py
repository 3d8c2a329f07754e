"""Schedules (sweeper, watchdog, reconciler, materializer, verifier), alarms, topic, dashboard."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.infrastructure.conftest import Synthesized


def _schedule_for(stage: Synthesized, function: Any) -> dict[str, Any]:
    target = {"Fn::GetAtt": [stage.logical_id(function), "Arn"]}
    (schedule,) = [
        s["Properties"]
        for s in stage.of_type("AWS::Scheduler::Schedule").values()
        if s["Properties"]["Target"]["Arn"] == target
    ]
    return schedule


@pytest.mark.parametrize(
    ("name", "expression"),
    [
        ("sweeper", "rate(1 minute)"),
        ("watchdog", "rate(1 minute)"),
        ("reconciler", "rate(5 minutes)"),
        ("materializer", "rate(5 minutes)"),
        ("verifier", "rate(5 minutes)"),
    ],
)
def test_schedule_rate_retry_policy_and_own_dlq(
    dev: Synthesized, name: str, expression: str
) -> None:
    schedule = _schedule_for(dev, getattr(dev.stack.dispatch, name))
    assert schedule["ScheduleExpression"] == expression
    assert schedule["FlexibleTimeWindow"] == {"Mode": "OFF"}
    retry = schedule["Target"]["RetryPolicy"]
    assert retry["MaximumRetryAttempts"] == dev.config.schedule_retry_attempts
    dlq = schedule["Target"]["DeadLetterConfig"]["Arn"]["Fn::GetAtt"][0]
    assert dlq == dev.logical_id(dev.stack.dispatch.schedule_dlqs[name])


def test_schedules_exactly_five_with_distinct_dlqs(dev: Synthesized) -> None:
    schedules = dev.of_type("AWS::Scheduler::Schedule").values()
    dlqs = {json.dumps(s["Properties"]["Target"]["DeadLetterConfig"]) for s in schedules}
    assert len(schedules) == len(dlqs) == 5


def _alarm(stage: Synthesized, metric_name: str) -> dict[str, Any]:
    matches = [
        a["Properties"]
        for a in stage.of_type("AWS::CloudWatch::Alarm").values()
        if a["Properties"].get("MetricName") == metric_name
    ]
    assert matches, metric_name
    return matches[0]


def test_alarm_p99_publish_lag_over_sixty_seconds(dev: Synthesized) -> None:
    alarm = _alarm(dev, "PublishLagSeconds")
    assert alarm["ExtendedStatistic"] == "p99"
    assert alarm["Threshold"] == 60
    assert alarm["ComparisonOperator"] == "GreaterThanThreshold"
    assert alarm["Namespace"] == dev.config.metrics_namespace
    assert alarm["Dimensions"] == [{"Name": "service", "Value": dev.config.service_name}]


def test_alarm_any_missed_post(dev: Synthesized) -> None:
    alarm = _alarm(dev, "Missed")
    assert (alarm["Statistic"], alarm["Threshold"]) == ("Sum", 1)
    assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"


def test_alarm_verification_findings_at_the_first_one(dev: Synthesized) -> None:
    alarm = _alarm(dev, "VerificationFindings")
    assert (alarm["Statistic"], alarm["Threshold"]) == ("Sum", 1)
    assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"


def test_alarm_reconciliation_misses_above_zero(dev: Synthesized) -> None:
    alarm = _alarm(dev, "ReconciliationMisses")
    assert (alarm["Threshold"], alarm["ComparisonOperator"]) == (0, "GreaterThanThreshold")


@pytest.mark.parametrize("name", ["sweeper", "materializer", "verifier"])
def test_alarm_scheduled_function_errors(dev: Synthesized, name: str) -> None:
    function = {"Ref": dev.logical_id(getattr(dev.stack.dispatch, name))}
    alarms = [
        a["Properties"]
        for a in dev.of_type("AWS::CloudWatch::Alarm").values()
        if a["Properties"].get("MetricName") == "Errors"
        and a["Properties"]["Dimensions"] == [{"Name": "FunctionName", "Value": function}]
    ]
    assert len(alarms) == 1
    assert alarms[0]["Namespace"] == "AWS/Lambda"


def test_alarm_series_stopped_materializing(dev: Synthesized) -> None:
    alarm = _alarm(dev, "SeriesStopped")
    assert (alarm["Threshold"], alarm["ComparisonOperator"]) == (
        1,
        "GreaterThanOrEqualToThreshold",
    )


def test_alarm_every_dead_letter_queue_message(dev: Synthesized) -> None:
    watched = {
        json.dumps(a["Properties"]["Dimensions"])
        for a in dev.of_type("AWS::CloudWatch::Alarm").values()
        if a["Properties"].get("MetricName") == "ApproximateNumberOfMessagesVisible"
        and a["Properties"]["Threshold"] == 1
    }
    dlqs = [dev.stack.dispatch.dlq, *dev.stack.dispatch.schedule_dlqs.values()]
    for dlq in dlqs:
        name = {"Fn::GetAtt": [dev.logical_id(dlq), "QueueName"]}
        assert json.dumps([{"Name": "QueueName", "Value": name}]) in watched


def test_alarms_all_notify_the_topic(dev: Synthesized) -> None:
    (topic_id,) = dev.of_type("AWS::SNS::Topic")
    alarms = dev.of_type("AWS::CloudWatch::Alarm").values()
    # the relay's three, the notifier's two, read-back's findings, the verifier's two, the
    # importer's one
    assert len(alarms) == 11 + 3 + 2 + 1 + 2 + 1
    for alarm in alarms:
        assert alarm["Properties"]["AlarmActions"] == [{"Ref": topic_id}]


def test_alarm_topic_encrypted_with_rotating_key(dev: Synthesized) -> None:
    (topic,) = dev.of_type("AWS::SNS::Topic").values()
    key_id = topic["Properties"]["KmsMasterKeyId"]["Fn::GetAtt"][0]
    assert dev.resources[key_id]["Properties"]["EnableKeyRotation"] is True


def test_dashboard_shows_lag_percentiles_queues_and_api(dev: Synthesized) -> None:
    (dashboard,) = dev.of_type("AWS::CloudWatch::Dashboard").values()
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    for needle in (
        "PublishLagSeconds", "p50", "p90", "p99", "Published", "Failed", "Missed",
        "SweepDurationMs", "ApproximateAgeOfOldestMessage", "ApproximateNumberOfMessagesVisible",
        "4xx", "5xx", "Latency",
    ):  # fmt: skip
        assert needle in body, needle


def test_alarms_use_the_configured_topic_when_given(external: Synthesized) -> None:
    assert not external.of_type("AWS::SNS::Topic")
    for alarm in external.of_type("AWS::CloudWatch::Alarm").values():
        assert alarm["Properties"]["AlarmActions"] == [external.config.alarm_topic_arn]
