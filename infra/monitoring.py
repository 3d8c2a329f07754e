"""CloudWatch dashboard and alarms for the fire path, the API and the safety nets.

Service metrics are Powertools EMF metrics in ``config.metrics_namespace`` with the single
dimension ``service`` (Powertools' default), emitted by the handlers: ``PublishLagSeconds``,
``Published``, ``Failed``, ``Missed``, ``SweepDurationMs``, ``ReconciliationMisses`` and the
materializer's ``SeriesStopped`` (a recurring schedule that stopped materializing) (names from
``scheduled_posts.lifecycle.metric_names.Metric``, the same members the code emits).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from aws_cdk import Duration
from aws_cdk import aws_apigatewayv2 as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.config import StageConfig
from scheduled_posts.lifecycle.metric_names import Metric

_MINUTE = Duration.minutes(1)


class MonitoringConstruct(Construct):
    """Dashboard, alarms and the alarm topic (created, encrypted, when the config names none).

    Attributes
    ----------
    topic : aws_sns.ITopic
    dashboard : aws_cloudwatch.Dashboard
    alarms : dict[str, aws_cloudwatch.Alarm]
        Keyed by construct id (``PublishLagP99Alarm``, ``DispatchDlqAlarm``, ...).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StageConfig,
        http_api: apigw.HttpApi,
        dispatch_queues: Sequence[sqs.IQueue],
        dispatch_dlq: sqs.IQueue,
        schedule_dlqs: Mapping[str, sqs.IQueue],
        sweeper: lambda_.IFunction,
        worker: lambda_.IFunction,
        materializer: lambda_.IFunction,
        verifier: lambda_.IFunction,
    ) -> None:
        super().__init__(scope, construct_id)
        self._config = config
        self.topic = self._build_topic()
        self.alarms: dict[str, cloudwatch.Alarm] = {}

        lag = {
            stat: self._service_metric(Metric.PUBLISH_LAG_SECONDS, stat)
            for stat in ("p50", "p90", "p99")
        }
        counts = {
            name.value: self._service_metric(name, "Sum")
            for name in (Metric.PUBLISHED, Metric.FAILED, Metric.MISSED)
        }
        sweep = self._service_metric(Metric.SWEEP_DURATION_MS, "Maximum")
        misses = self._service_metric(Metric.RECONCILIATION_MISSES, "Sum")

        self._alarm(
            "VerificationFindingsAlarm",
            self._service_metric(Metric.VERIFICATION_FINDINGS, "Sum"),
            threshold=1,
            description="A published post is missing or changed on its network (read-back)",
        )
        self._alarm(
            "PublishLagP99Alarm",
            lag["p99"],
            threshold=config.lag_alarm_p99_seconds,
            comparison=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluation_periods=3,
            datapoints=2,
            description=f"p99 publish lag above {config.lag_alarm_p99_seconds:g} s",
        )
        self._dlq_alarm(
            "DispatchDlqAlarm",
            dispatch_dlq,
            "A dispatch message reached the dead-letter queue (see docs/operations.md)",
        )
        for name, queue in schedule_dlqs.items():
            self._dlq_alarm(
                f"{name.capitalize()}ScheduleDlqAlarm",
                queue,
                f"EventBridge Scheduler could not invoke the {name}",
            )
        self._alarm(
            "MissedAlarm", counts[Metric.MISSED], threshold=1, description="A post was missed"
        )
        self._alarm(
            "ReconciliationMissesAlarm",
            misses,
            threshold=0,
            comparison=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            description="The reconciler had to rescue a post (a fire-path defect)",
        )
        self._errors_alarm("SweeperErrorsAlarm", sweeper, "The sweeper failed")
        self._errors_alarm(
            "MaterializerErrorsAlarm",
            materializer,
            "The materializer failed to extend a recurring schedule",
        )
        self._errors_alarm(
            "VerifierErrorsAlarm", verifier, "The verifier could not read a post back"
        )
        self._alarm(
            "SeriesStoppedAlarm",
            self._service_metric(Metric.SERIES_STOPPED, "Sum"),
            threshold=1,
            description="A recurring schedule stopped materializing (MAX_PENDING_POSTS reached)",
        )
        self.dashboard = self._build_dashboard(
            lag=lag,
            counts=counts,
            sweep=sweep,
            misses=misses,
            http_api=http_api,
            dispatch_queues=dispatch_queues,
            dispatch_dlq=dispatch_dlq,
            schedule_dlqs=schedule_dlqs,
            sweeper=sweeper,
            worker=worker,
        )

    def add_outbox(self, *, relay: lambda_.IFunction, relay_dlq: sqs.IQueue) -> None:
        """Alarms on the outbox relay (errors, DLQ depth, age of the oldest unsent stream record)
        and a dashboard row with the notification lag (``docs/events.md``)."""
        iterator_age = relay.metric("IteratorAge", period=_MINUTE, statistic="Maximum")
        relay_lag = self._service_metric(Metric.EVENT_RELAY_LAG_SECONDS, "p99")
        self._errors_alarm(
            "RelayErrorsAlarm",
            relay,
            "The outbox relay fails (events are held back, in order, and retried)",
            sustained=True,
        )
        self._dlq_alarm(
            "RelayDlqAlarm",
            relay_dlq,
            "The relay gave up on stream records (see docs/operations.md)",
        )
        self._alarm(
            "RelayIteratorAgeAlarm",
            iterator_age,
            threshold=self._config.relay_iterator_age_alarm_seconds * 1000,
            comparison=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluation_periods=3,
            datapoints=2,
            description=(
                "The oldest unsent outcome event is older than "
                f"{self._config.relay_iterator_age_alarm_seconds} s"
            ),
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Outcome events: relay lag p99 (s) and oldest unsent change (ms)",
                left=[relay_lag],
                right=[iterator_age],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="Outcome events relayed / relay errors / relay DLQ",
                left=[
                    self._service_metric(Metric.EVENTS_RELAYED, "Sum"),
                    relay.metric_errors(period=_MINUTE, statistic="Sum", label="relay errors"),
                    relay_dlq.metric_approximate_number_of_messages_visible(
                        period=_MINUTE, statistic="Maximum", label="relay DLQ"
                    ),
                ],
                width=12,
            ),
        )

    def add_imports(self, *, importer: lambda_.IFunction) -> None:
        """Importer errors (the import DLQ is the importer's own input: no depth alarm)."""
        self._errors_alarm("ImporterErrorsAlarm", importer, "The importer fails", sustained=True)

    def add_notify(self, *, notifier: lambda_.IFunction, notify_dlq: sqs.IQueue) -> None:
        """Alarms on the notifications (notifier errors, notify DLQ depth) and a dashboard row
        with the notification lag (``occurred_at`` to the endpoint's 2xx) and the counts."""
        self._errors_alarm(
            "NotifierErrorsAlarm",
            notifier,
            "The notifier fails (an endpoint's failures are retries, not errors)",
            sustained=True,
        )
        self._dlq_alarm(
            "NotifyDlqAlarm",
            notify_dlq,
            "Notifications reached the notify DLQ (make redrive REDRIVE_ARGS=--notify)",
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Notifications: lag p50 / p99 (s) from the event to the endpoint's 2xx",
                left=[
                    self._service_metric(Metric.NOTIFICATION_LAG_SECONDS, "p50"),
                    self._service_metric(Metric.NOTIFICATION_LAG_SECONDS, "p99"),
                ],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="Notifications queued / delivered / retried / dead-lettered / notify DLQ",
                left=[
                    self._service_metric(Metric.NOTIFICATIONS_ENQUEUED, "Sum"),
                    self._service_metric(Metric.NOTIFICATIONS_DELIVERED, "Sum"),
                    self._service_metric(Metric.NOTIFICATIONS_RETRIED, "Sum"),
                    self._service_metric(Metric.NOTIFICATIONS_DEAD_LETTERED, "Sum"),
                    notify_dlq.metric_approximate_number_of_messages_visible(
                        period=_MINUTE, statistic="Maximum", label="notify DLQ"
                    ),
                ],
                width=12,
            ),
        )

    def _build_topic(self) -> sns.ITopic:
        if self._config.alarm_topic_arn:
            return sns.Topic.from_topic_arn(self, "AlarmTopic", self._config.alarm_topic_arn)
        # CloudWatch may publish to an encrypted topic only with a customer-managed key whose
        # policy lets it use the key (Amazon SNS Developer Guide, "Encryption at rest").
        key = kms.Key(
            self,
            "AlarmTopicKey",
            description="Encrypts the scheduled-posts alarm topic",
            enable_key_rotation=True,
        )
        key.grant(
            iam.ServicePrincipal("cloudwatch.amazonaws.com"), "kms:Decrypt", "kms:GenerateDataKey*"
        )
        return sns.Topic(self, "AlarmTopic", master_key=key, enforce_ssl=True)

    def _service_metric(self, name: str, statistic: str) -> cloudwatch.Metric:
        return cloudwatch.Metric(
            namespace=self._config.metrics_namespace,
            metric_name=name,
            dimensions_map={"service": self._config.service_name},
            statistic=statistic,
            period=_MINUTE,
        )

    def _dlq_alarm(self, construct_id: str, queue: sqs.IQueue, description: str) -> None:
        """Alarm on the first message visible in a dead-letter queue (maximum over a minute)."""
        depth = queue.metric_approximate_number_of_messages_visible(
            period=_MINUTE, statistic="Maximum"
        )
        self._alarm(construct_id, depth, threshold=1, description=description)

    def _errors_alarm(
        self,
        construct_id: str,
        function: lambda_.IFunction,
        description: str,
        *,
        sustained: bool = False,
    ) -> None:
        """Alarm on a function's errors (sum per minute): on the first one, or when
        ``sustained``, in 2 of 3 minutes (a consumer whose failures are retried)."""
        self._alarm(
            construct_id,
            function.metric_errors(period=_MINUTE, statistic="Sum"),
            threshold=1,
            evaluation_periods=3 if sustained else 1,
            datapoints=2 if sustained else 1,
            description=description,
        )

    def _alarm(
        self,
        construct_id: str,
        metric: cloudwatch.IMetric,
        *,
        threshold: float,
        description: str,
        comparison: cloudwatch.ComparisonOperator = (
            cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD
        ),
        evaluation_periods: int = 1,
        datapoints: int = 1,
    ) -> None:
        alarm = cloudwatch.Alarm(
            self,
            construct_id,
            metric=metric,
            threshold=threshold,
            comparison_operator=comparison,
            evaluation_periods=evaluation_periods,
            datapoints_to_alarm=datapoints,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=description,
        )
        alarm.add_alarm_action(actions.SnsAction(self.topic))
        self.alarms[construct_id] = alarm

    def _build_dashboard(
        self,
        *,
        lag: Mapping[str, cloudwatch.IMetric],
        counts: Mapping[str, cloudwatch.IMetric],
        sweep: cloudwatch.IMetric,
        misses: cloudwatch.IMetric,
        http_api: apigw.HttpApi,
        dispatch_queues: Sequence[sqs.IQueue],
        dispatch_dlq: sqs.IQueue,
        schedule_dlqs: Mapping[str, sqs.IQueue],
        sweeper: lambda_.IFunction,
        worker: lambda_.IFunction,
    ) -> cloudwatch.Dashboard:
        dashboard = cloudwatch.Dashboard(self, "Dashboard", default_interval=Duration.hours(3))
        width = 8
        dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Publish lag (s): p50 / p90 / p99",
                left=list(lag.values()),
                left_annotations=[
                    cloudwatch.HorizontalAnnotation(
                        value=self._config.lag_alarm_p99_seconds, label="p99 alarm"
                    )
                ],
                width=width,
            ),
            cloudwatch.GraphWidget(
                title="Posts per minute: published / failed / missed",
                left=list(counts.values()),
                width=width,
            ),
            cloudwatch.GraphWidget(
                title="Sweep duration (ms, max) and reconciliation misses",
                left=[sweep],
                right=[misses],
                width=width,
            ),
        )
        dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Dispatch queues: oldest message age (s)",
                left=[
                    q.metric_approximate_age_of_oldest_message(period=_MINUTE)
                    for q in dispatch_queues
                ],
                width=width,
            ),
            cloudwatch.GraphWidget(
                title="Dispatch queue depth: visible / in flight",
                left=[
                    metric
                    for q in dispatch_queues
                    for metric in (
                        q.metric_approximate_number_of_messages_visible(period=_MINUTE),
                        q.metric_approximate_number_of_messages_not_visible(period=_MINUTE),
                    )
                ],
                width=width,
            ),
            cloudwatch.GraphWidget(
                title="Dead-letter queues: visible messages",
                left=[
                    dispatch_dlq.metric_approximate_number_of_messages_visible(
                        period=_MINUTE, label="DispatchDLQ"
                    ),
                    *(
                        queue.metric_approximate_number_of_messages_visible(
                            period=_MINUTE, label=f"{name} schedule DLQ"
                        )
                        for name, queue in schedule_dlqs.items()
                    ),
                ],
                width=width,
            ),
        )
        dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="API 4xx / 5xx per minute",
                left=[
                    http_api.metric_client_error(period=_MINUTE, statistic="Sum"),
                    http_api.metric_server_error(period=_MINUTE, statistic="Sum"),
                ],
                width=width,
            ),
            cloudwatch.GraphWidget(
                title="API latency (ms): p50 / p99",
                left=[
                    http_api.metric_latency(period=_MINUTE, statistic="p50"),
                    http_api.metric_latency(period=_MINUTE, statistic="p99"),
                ],
                width=width,
            ),
            cloudwatch.GraphWidget(
                title="Sweeper and worker errors / throttles",
                left=[
                    sweeper.metric_errors(period=_MINUTE, statistic="Sum", label="sweeper errors"),
                    worker.metric_errors(period=_MINUTE, statistic="Sum", label="worker errors"),
                    worker.metric_throttles(
                        period=_MINUTE, statistic="Sum", label="worker throttles"
                    ),
                ],
                width=width,
            ),
        )
        return dashboard
